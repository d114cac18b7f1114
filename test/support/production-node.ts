// How production runs Node: bin/signet's `#!/usr/bin/env -S [NAME=value...] node [flags...]`
// line. `npm start` is `./bin/signet serve`, so child servers in tests and benches started with
// these run exactly like production. A module of its own so that benches can read them without
// loading the service (server.ts).
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { repoRoot } from './fixtures.ts';

/** The shebang's variables and Node flags. */
function productionShebang(): { env: Record<string, string>; flags: string[] } {
  const shebang = readFileSync(path.join(repoRoot, 'bin/signet'), 'utf8').split('\n')[0] ?? '';
  const words = shebang.replace(/^#!\S*env\s+(-S\s+)?/, '').split(/\s+/);
  const node = words.indexOf('node');
  const assignments = words.slice(0, node).filter((w) => w.includes('='));
  return {
    env: Object.fromEntries(assignments.map((w) => [w.slice(0, w.indexOf('=')), w.slice(w.indexOf('=') + 1)])),
    flags: words.slice(node + 1).filter((w) => w.startsWith('--')),
  };
}

/** The environment variables production sets (glibc's malloc settings), as NAME -> value. */
export function productionEnv(): Record<string, string> {
  return productionShebang().env;
}

/** The node flags production runs with. */
export function productionNodeFlags(): string[] {
  return productionShebang().flags;
}
