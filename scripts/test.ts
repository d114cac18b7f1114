// `npm test`: type-check everything, then run every test file with node:test.
// Extra arguments narrow the run: `npm test -- test/signing/zip` runs only that folder.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

const run = (args: string[]): number => spawnSync(process.execPath, args, { stdio: 'inherit' }).status ?? 1;

// The compiler's entry point, from its package.json `bin` (the package's exports hide the file).
const manifest = createRequire(import.meta.url).resolve('typescript/package.json');
const tsc = path.join(path.dirname(manifest), (JSON.parse(readFileSync(manifest, 'utf8')) as { bin: { tsc: string } }).bin.tsc);
if (run([tsc, '--noEmit', '-p', '.']) !== 0) {
  console.error('type check failed');
  process.exit(1);
}
// The console (Vue single-file components) is checked by vue-tsc, on its own TypeScript 5.
if (run([path.join(path.dirname(import.meta.dirname), 'console', 'scripts', 'typecheck.cjs')]) !== 0) {
  console.error('console type check failed');
  process.exit(1);
}

// bin/signet runs the bundle built from this tree (scripts/build-server.ts), so the tests that run
// the command test it; built here too because `npm ci` built it from the tree as it was then.
if (run([path.join(import.meta.dirname, 'build-server.ts')]) !== 0) {
  console.error('building the bundle bin/signet runs failed');
  process.exit(1);
}

const patterns = process.argv.slice(2).map((arg) =>
  existsSync(arg) && statSync(arg).isDirectory() ? `${arg.replace(/\/+$/, '')}/**/*.test.ts` : arg,
);
process.exit(run(['--test', '--test-concurrency=2', '--test-timeout=600000', ...(patterns.length ? patterns : ['test/**/*.test.ts'])]));
