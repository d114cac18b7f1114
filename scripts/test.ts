// `npm test`: type-check everything, then run every test file with node:test.
// Extra arguments narrow the run: `npm test -- test/signing/zip` runs only that folder.
import { spawnSync } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';

const run = (args: string[]): number => spawnSync(process.execPath, args, { stdio: 'inherit' }).status ?? 1;

const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
if (run([tsc, '--noEmit', '-p', '.']) !== 0) {
  console.error('type check failed');
  process.exit(1);
}

const patterns = process.argv.slice(2).map((arg) =>
  existsSync(arg) && statSync(arg).isDirectory() ? `${arg.replace(/\/+$/, '')}/**/*.test.ts` : arg,
);
process.exit(run(['--test', '--test-concurrency=2', '--test-timeout=600000', ...(patterns.length ? patterns : ['test/**/*.test.ts'])]));
