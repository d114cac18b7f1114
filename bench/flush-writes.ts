// Called before every timed row of bench:ipa and bench:apk (outside the timing): sync(1) writes
// the dirty pages the previous rows left — each writes a ~50-200 MB package — so that no row pays
// for another's writeback. Without it the row after a large write ran up to ~0.4 s slower on a
// 191 MiB APK, in turn for whichever row followed the floor or apksigner. A row's own output is
// still written back during its run, as a user's would be.
import { execFileSync } from 'node:child_process';

export function flushWrites(): void {
  execFileSync('sync');
}
