// Called before every timed row of bench:ipa and bench:apk (outside the timing): the row's output
// from the run before is deleted, and sync(1) writes the dirty pages the previous rows left (each
// writes a ~50-200 MB package), so that no row pays for another's writeback, nor for freeing the
// last run's output when it replaces it (on this ext4 with `discard`, freeing a 191 MiB file cost
// the process that overwrote it 0.1-0.5 s of system time, at random). Without both, the row after
// a large write ran up to ~0.4 s slower. A row's own output is still written back during its run,
// as a user's would be.
import { execFileSync } from 'node:child_process';
import { rmSync } from 'node:fs';

export function flushWrites(...outputs: string[]): void {
  for (const output of outputs) rmSync(output, { force: true });
  execFileSync('sync');
}
