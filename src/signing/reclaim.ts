// Early reclaim of large short-lived buffers. zlib streams allocate a new output buffer for
// every chunk they produce (node:zlib has no way to inflate into a caller's buffer); the
// signer hashes each chunk and drops it at once. Those buffers are external memory, which V8
// does not count when it schedules young-generation collections, and the signer allocates
// little else on the JS heap, so dead chunks pile up until external memory has grown by V8's
// limit (64 MB) and forces a full collection. Where the process exposes V8's `gc` (bin/signet
// runs node with --expose-gc), a young-generation collection after every RECLAIM_BYTES of such
// buffers frees them while they are still young; the few that ordinary scavenges promoted in
// the meantime go at a full collection every FULL_RECLAIM_BYTES (~10 ms with the signer's
// ~20 MB heap). Measured with bench/apk.ts (six 10 MiB dex files among 191 MiB), `signet sign`:
// peak RSS 155 MiB without, 110-126 MiB with young collections alone, 105 MiB with both, for
// ~0.05 s of CPU. Without an exposed `gc` (tests, other hosts) this does nothing and memory is
// reclaimed as before, only later.
const RECLAIM_BYTES = 4 * 1024 * 1024;
const FULL_RECLAIM_BYTES = 16 * 1024 * 1024;

type Collect = (options: { type: 'minor' | 'major' }) => void;

let dropped = 0;
let droppedSinceFull = 0;

/** Notes `bytes` of buffers just dropped; collects the young generation every RECLAIM_BYTES. */
export function droppedBuffers(bytes: number): void {
  dropped += bytes;
  if (dropped < RECLAIM_BYTES) return;
  droppedSinceFull += dropped;
  dropped = 0;
  const full = droppedSinceFull >= FULL_RECLAIM_BYTES;
  if (full) droppedSinceFull = 0;
  (globalThis as { gc?: Collect }).gc?.({ type: full ? 'major' : 'minor' });
}

/** A full collection, where `gc` is exposed: between phases that each build large short-lived structures. */
export function collectBetweenPhases(): void {
  (globalThis as { gc?: Collect }).gc?.({ type: 'major' });
}
