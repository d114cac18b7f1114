// Early reclaim of large short-lived buffers. zlib streams allocate a new output buffer for
// every chunk they produce (node:zlib has no way to inflate into a caller's buffer); the
// signer hashes each chunk and drops it at once. Those buffers are external memory, which V8
// does not count when it schedules young-generation collections, and the signer allocates
// little else on the JS heap, so dead chunks pile up until external memory has grown by V8's
// limit (64 MB) and forces a full collection. Where the process exposes V8's `gc` (bin/signet
// runs node with --expose-gc), a young-generation collection after every RECLAIM_BYTES of such
// buffers frees them while they are still young; the few that ordinary scavenges promoted in
// the meantime go at a full collection every fourth time (~10 ms with the signer's
// ~20 MB heap). Measured with bench/apk.ts (six 10 MiB dex files among 191 MiB), `signet sign`:
// peak RSS 155 MiB without, 110-126 MiB with young collections alone, 105 MiB with both, for
// ~0.05 s of CPU. Without an exposed `gc` (tests, other hosts) this does nothing and memory is
// reclaimed as before, only later.
const RECLAIM_BYTES = 4 * 1024 * 1024;
// Every FULL_EVERY-th collection is a full one (every 16 MiB).
const FULL_EVERY = 4;
// zlib's one-shot calls (inflateRawSync) are another case: each makes a zlib stream, and the
// streams and their output buffers outlive young-generation collections until a full one
// (measured alone: 3,000 inflations of 1.7 KB files held 5.3 MB after a minor collection, none
// after a full one; bench:apk ends with 3,000 such XML files). A full collection after every
// ONE_SHOT_BYTES of such output bounds it.
const ONE_SHOT_BYTES = 2 * 1024 * 1024;

let dropped = 0;
let droppedYoung = 0;
let collections = 0;
let oneShot = 0;

/** Notes `bytes` of buffers just dropped; collects every RECLAIM_BYTES (see above). */
export function droppedBuffers(bytes: number): void {
  dropped += bytes;
  if (dropped < RECLAIM_BYTES) return;
  dropped = 0;
  collections += 1;
  collect(collections % FULL_EVERY === 0 ? 'major' : 'minor');
}

/**
 * Notes `bytes` of buffers just dropped that die young: a young-generation collection every
 * RECLAIM_BYTES, never a full one. For a thread that drops only the large chunks of a stream
 * (the scan thread reading code back, ios/resign/scan-worker.ts): nothing it drops lives long
 * enough to be promoted, so droppedBuffers' full collections (~17 ms each on that thread's
 * 11 MB heap, 10 of them for bench:ipa's 140 MiB of code) freed nothing more: bench:ipa's code
 * app 3.95 against 4.18 s and 6.84 against 7.27 s of CPU, 216 against 214 MiB (5 alternating
 * pairs; random app 2.28 against 2.43 s).
 */
export function droppedYoungBuffers(bytes: number): void {
  droppedYoung += bytes;
  if (droppedYoung < RECLAIM_BYTES) return;
  droppedYoung = 0;
  collect('minor');
}

/** Notes the output of a zlib one-shot call just dropped; a full collection every ONE_SHOT_BYTES (see above). */
export function droppedOneShotOutput(bytes: number): void {
  oneShot += bytes;
  if (oneShot < ONE_SHOT_BYTES) return;
  oneShot = 0;
  collect('major');
}

/** A full collection, where `gc` is exposed: between phases that each build large short-lived structures. */
export function collectBetweenPhases(): void {
  collect('major');
}

function collect(type: 'minor' | 'major'): void {
  (globalThis as { gc?: (options: { type: 'minor' | 'major' }) => void }).gc?.({ type });
}
