// `npm run bench:apk`: signs one generated ~200 MB APK with Signet and with Google's apksigner
// (v1+v2+v3, same RSA-2048 key, v4 off) in the same run and prints wall time, CPU time and peak
// RSS of each, side by side, with the true floor measured in the same run (bench/floor.ts: one
// read of the file, each deflated entry inflated once, the v1 SHA-256 entry digests and the v2/v3
// chunked content digest, the output written; on one core and over both with worker_threads).
// Targets (issue #16): signet sign <= 2x the two-core floor's wall time, peak RSS <= 120 MB.
// Both outputs must be byte-identical, which the bench checks too.
//
// What is measured is what a user runs: the `bin/signet sign` process (its start-up, key loading,
// signing, and the verification of the output that `signet sign` always does before keeping it)
// against the `apksigner sign` process, each under GNU time (wall, user+sys CPU, peak RSS =
// VmHWM of the child). The runs alternate, after one unmeasured warm-up each (page cache, Node's
// compile cache, the JVM's class data), so that machine load treats both alike, and each row
// starts with the earlier rows' writes flushed (flush-writes.ts); medians are reported. The
// service path (bench/service-path.ts) is timed in the same runs: a `bin/signet serve` child,
// started once, given the same key as an android certificate; per run, upload →
// enterprise task → `succeeded`: the wall time, the server's CPU over it, and its peak RSS since
// it started. For diagnosis only, a further row times the signing engine alone in a bare process
// (no CLI, no verification); it is not part of the ratio.
//
// The APK: apksig's golden-aligned-in.apk (real manifest, dex, resources, a .so) plus generated
// entries in the proportions of a large game: stored PNG-like resources and assets, page-aligned
// stored native libraries, deflated dex files and many small deflated XML files.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import module from 'node:module';
import { cpus, loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { crc32, deflateRawSync } from 'node:zlib';
import { flushWrites } from './flush-writes.ts';
import { inTurn, middleOf } from './rounds.ts';
import { startServicePath, type ServiceMeasure, type ServicePath } from './service-path.ts';

const run = promisify(execFile);
const MiB = 1024 * 1024;
const RUNS = Number(process.env.SIGNET_BENCH_RUNS ?? 3);
// Medians of no runs would be nothing: say so rather than print NaN or crash.
if (!Number.isInteger(RUNS) || RUNS < 1) throw new Error(`SIGNET_BENCH_RUNS must be a whole number of runs, 1 or more (got ${process.env.SIGNET_BENCH_RUNS})`);
const repoRoot = path.resolve(import.meta.dirname, '..');

if (process.argv[2] === '--engine-child') {
  // Diagnostic row: the engine alone, as bin/signet runs it (same flags, compile cache on).
  const [input, output, key, cert] = process.argv.slice(3) as [string, string, string, string];
  module.enableCompileCache();
  const { signApk, v1SignerNameFor } = await import('../src/signing/android/index.ts');
  const { loadIdentity } = await import('../src/signing/cms/index.ts');
  const { FileSink } = await import('../src/signing/data-sink.ts');
  const { FileSource } = await import('../src/signing/data-source.ts');
  const identity = await loadIdentity(readFileSync(key), { certificate: readFileSync(cert) });
  const source = await FileSource.open(input);
  const sink = await FileSink.create(output);
  await signApk(source, sink, { identity, v1SignerName: v1SignerNameFor(undefined, path.basename(key)) });
  await sink.close();
  await source.close();
  process.exit(0);
}

const { sharedFixture } = await import('../test/support/fixtures.ts');
const { productionEnv, productionNodeFlags } = await import('../test/support/production-node.ts');
const base = sharedFixture('android/apksig/golden/golden-aligned-in.apk');
const key = sharedFixture('android/keys/apksig/rsa-2048.pk8');
const cert = sharedFixture('android/keys/apksig/rsa-2048.x509.pem');
if (base === null || key === null || cert === null) {
  console.error('bench:apk needs ../shared/fixtures (apksig golden input and the rsa-2048 test key)');
  process.exit(1);
}
try {
  await run('apksigner', ['--version']);
} catch {
  console.error('bench:apk needs apksigner (Debian package apksigner) for the comparison');
  process.exit(1);
}

const dir = mkdtempSync(path.join(tmpdir(), 'signet-bench-apk-'));
let service: ServicePath | undefined;
try {
  const input = path.join(dir, 'big.apk');
  const started = performance.now();
  await generateApk(base, input);
  console.log(`generated ${path.basename(input)}: ${(statSync(input).size / MiB).toFixed(1)} MiB in ${((performance.now() - started) / 1000).toFixed(1)} s`);

  const signet: Measure[] = [];
  const apksigner: Measure[] = [];
  const engine: Measure[] = [];
  const floor1: Measure[] = [];
  const floor2: Measure[] = [];
  const floorScript = path.join(repoRoot, 'bench', 'floor.ts');
  // SIGNET_BENCH_BASELINE=DIR: a checkout of an earlier commit (with node_modules), timed alike.
  const baselineRoot = process.env.SIGNET_BENCH_BASELINE;
  const baseline: Measure[] = [];
  const ours = path.join(dir, 'signet.apk');
  const theirs = path.join(dir, 'apksigner.apk');
  const engineOut = path.join(dir, 'engine.apk');
  const floorOut = path.join(dir, 'floor.apk');
  const baselineOut = path.join(dir, 'baseline.apk');
  // bin/signet runs with the `node` on PATH (its shebang): make that this Node, and give it a
  // compile cache of its own so that the warm-up run, not an earlier session, fills it.
  const env = { ...process.env, PATH: `${path.dirname(process.execPath)}${path.delimiter}${process.env.PATH ?? ''}`, NODE_COMPILE_CACHE: path.join(dir, 'compile-cache') };
  const bin = path.join(repoRoot, 'bin', 'signet');
  // The engine row runs with bin/signet's shebang: its V8 flags and its glibc settings. The floor
  // gets the glibc settings only: the V8 flags are tuned for signet's memory and made the floor
  // slower (bench/floor.ts).
  const flags = productionNodeFlags();
  const engineEnv = { ...env, ...productionEnv() };
  // The same key and certificate as the CLI rows, uploaded the way a user does (key + certificate).
  // The service never sees the key's file name, which apksigner and signet sign name the v1
  // signature files after (META-INF/RSA-2048.*): the alias names them alike, so that the
  // artifacts can be compared byte for byte.
  service = await startServicePath(repoRoot, env, {
    kind: 'android',
    alias: path.basename(key).split('.')[0]!,
    file: { name: path.basename(key), data: readFileSync(key) },
    certificate: { name: path.basename(cert), data: readFileSync(cert) },
  });
  const served: Measure[] = [];
  const asMeasure = (m: ServiceMeasure): Measure => ({ seconds: m.ms / 1000, cpu: m.cpuMs / 1000, rssKiB: m.peakRss / 1024 });
  for (let i = -1; i < RUNS; i++) {
    const measured = i >= 0;
    // signet sign and the baseline checkout run next to each other, in turn first, so that neither
    // always follows the same row (bench/ipa.ts: read the baseline row with care).
    const signetRun = (): Promise<Measure> => timed(bin, ['sign', input, '-o', ours, '--keystore', key, '--cert', cert], env, ours);
    const baselineRun = (): Promise<Measure | undefined> =>
      baselineRoot === undefined ? Promise.resolve(undefined) : timed(path.join(baselineRoot, 'bin', 'signet'), ['sign', input, '-o', baselineOut, '--keystore', key, '--cert', cert], { ...env, NODE_COMPILE_CACHE: path.join(dir, 'compile-cache-baseline') }, baselineOut);
    const [mine, before] = await inTurn(i, signetRun, baselineRun);
    const viaService = asMeasure(await service.run(input));
    const google = await timed('apksigner', ['sign', '--key', key, '--cert', cert, '--v4-signing-enabled', 'false', '--in', input, '--out', theirs], env, theirs);
    const alone = await timed(process.execPath, [...flags, new URL(import.meta.url).pathname, '--engine-child', input, engineOut, key, cert], engineEnv, engineOut);
    const one = await timed(process.execPath, [floorScript, 'apk', input, floorOut, '1'], engineEnv, floorOut);
    const two = await timed(process.execPath, [floorScript, 'apk', input, floorOut, '2'], engineEnv, floorOut);
    if (measured) {
      if (before !== undefined) baseline.push(before);
      floor1.push(one);
      floor2.push(two);
      signet.push(mine);
      served.push(viaService);
      apksigner.push(google);
      engine.push(alone);
    }
  }
  // The service path's artifact too: same key, same input, so the same bytes.
  const fromService = path.join(dir, 'service.apk');
  await service.download(fromService);
  const identical = [ours, engineOut, fromService].every((file) => readFileSync(file).equals(readFileSync(theirs)));
  const s = median(signet);
  const a = median(apksigner);
  const e = median(engine);
  const row = (name: string, m: Measure, all: Measure[], note = ''): string =>
    `${name.padEnd(16)} ${m.seconds.toFixed(2).padStart(6)} s ${m.cpu.toFixed(2).padStart(6)} s ${(m.rssKiB / 1024).toFixed(0).padStart(6)} MiB   (wall per run: ${all.map((x) => x.seconds.toFixed(2)).join(', ')} s;${note} peak RSS max ${(Math.max(...all.map((x) => x.rssKiB)) / 1024).toFixed(0)} MiB)`;
  console.log(`\nv1+v2+v3, RSA-2048, medians of ${RUNS} interleaved runs after one warm-up each (load average now ${loadavg()[0]!.toFixed(1)} on ${cpus().length} CPUs):`);
  console.log(`${''.padEnd(16)} ${'wall'.padStart(8)} ${'cpu'.padStart(8)} ${'peak RSS'.padStart(10)}`);
  console.log(row('signet sign', s, signet));
  const v = median(served);
  console.log(row('service path', v, served, " CPU: the server's; RSS: its peak since it started;"));
  console.log(row('apksigner sign', a, apksigner));
  console.log(row('(engine alone)', e, engine));
  const f1 = median(floor1);
  const f2 = median(floor2);
  console.log(row('floor, 1 core', f1, floor1));
  console.log(row('floor, 2 cores', f2, floor2));
  // The two-core floor is the faster of the two ways to use two cores (workers cost a start-up).
  if (baseline.length > 0) console.log(row('baseline sign', median(baseline), baseline));
  const floorWall = Math.min(f1.seconds, f2.seconds);
  const floorCpu = Math.min(f1.cpu, f2.cpu);
  console.log(`\nsignet sign / two-core floor: wall ${(s.seconds / floorWall).toFixed(2)}x (target <= 2x), CPU ${(s.cpu / floorCpu).toFixed(2)}x the floor's`);
  console.log(`service path / two-core floor: wall ${(v.seconds / floorWall).toFixed(2)}x, CPU ${(v.cpu / floorCpu).toFixed(2)}x the floor's (upload, task, signing, verification, storage; wall ${(v.seconds / s.seconds).toFixed(2)}x signet sign's), server peak RSS ${(v.rssKiB / 1024).toFixed(0)} MiB (${(service.idleRss / MiB).toFixed(0)} MiB once started, before any run)`);
  if (baseline.length > 0) console.log(`baseline signet sign / two-core floor: wall ${(median(baseline).seconds / floorWall).toFixed(2)}x, CPU ${(median(baseline).cpu / floorCpu).toFixed(2)}x`);
  // Each run's own ratio as well: this machine is shared and goes through slower and faster
  // phases, which move a run's rows together; the medians above may pair a floor from a fast
  // phase with a signet run from a slow one.
  const perRun = (rows: Measure[]): number[] => rows.map((m, i) => m.seconds / Math.min(floor1[i]!.seconds, floor2[i]!.seconds));
  const ratios = (values: number[]): string => `${values.map((x) => x.toFixed(2)).join(', ')} (median ${middleOf(values).toFixed(2)}x)`;
  console.log(`per run, wall / the same run's faster floor: signet sign ${ratios(perRun(signet))}${baseline.length > 0 ? `; baseline ${ratios(perRun(baseline))}` : ''}`);
  console.log(`wall-time ratio signet/apksigner: ${(s.seconds / a.seconds).toFixed(3)}; CPU-time ratio: ${(s.cpu / a.cpu).toFixed(3)}`);
  console.log(`signet peak RSS: ${(s.rssKiB / 1024).toFixed(0)} MiB = ${((s.rssKiB * 1024) / 1e6).toFixed(0)} MB (target <= 120 MB); apksigner: ${(a.rssKiB / 1024).toFixed(0)} MiB`);
  console.log(`(signet sign also verifies its output before keeping it; apksigner sign does not. Engine alone / apksigner: wall ${(e.seconds / a.seconds).toFixed(3)}, CPU ${(e.cpu / a.cpu).toFixed(3)})`);
  console.log(`outputs byte-identical (signet sign, service path, engine, apksigner): ${identical ? 'yes' : 'NO'}`);
  if (!identical) process.exitCode = 1;
} finally {
  await service?.close();
  if (process.env.SIGNET_BENCH_KEEP === undefined) rmSync(dir, { recursive: true, force: true });
  else console.log(`kept ${dir}`);
}

interface Measure {
  seconds: number;
  /** User + system CPU seconds (less sensitive than wall time to other load on the machine). */
  cpu: number;
  rssKiB: number;
}

/**
 * Runs a command under GNU time (wall clock %e, user %U + system %S CPU, peak RSS %M in KiB).
 * `output`: the row's output file, deleted first (flush-writes.ts).
 */
async function timed(command: string, args: string[], env: NodeJS.ProcessEnv, output: string): Promise<Measure> {
  flushWrites(output);
  const { stderr } = await run('/usr/bin/time', ['-f', 'SIGNET_TIME %e %U %S %M', command, ...args], { maxBuffer: 64 * MiB, env });
  const match = /SIGNET_TIME ([\d.]+) ([\d.]+) ([\d.]+) (\d+)/.exec(stderr);
  if (match === null) throw new Error(`no timing from ${command}: ${stderr}`);
  return { seconds: Number(match[1]), cpu: Number(match[2]) + Number(match[3]), rssKiB: Number(match[4]) };
}

/** Median of each figure on its own. */
function median(values: Measure[]): Measure {
  const middle = (pick: (m: Measure) => number): number => middleOf(values.map(pick));
  return { seconds: middle((m) => m.seconds), cpu: middle((m) => m.cpu), rssKiB: middle((m) => m.rssKiB) };
}

/** ~200 MB: the fixture's entries, then generated ones (stored data 4-aligned, .so 4096-aligned). */
async function generateApk(fixture: string, output: string): Promise<void> {
  const { FileSink } = await import('../src/signing/data-sink.ts');
  const { FileSource } = await import('../src/signing/data-source.ts');
  const { ZipReader, ZipWriter } = await import('../src/signing/zip/index.ts');
  const source = await FileSource.open(fixture);
  const zip = await ZipReader.open(source);
  const sink = await FileSink.create(output);
  const writer = new ZipWriter(sink, { allowZip64: false });
  for (const entry of zip.entriesInFileOrder()) await writer.addRaw(entry, zip);
  const mtime = new Date('2024-01-01T00:00:00Z');
  // Dex-like data: compressible about 2:1 (random bytes mixed with repeated runs).
  const dexLike = (size: number): Buffer => {
    const parts: Buffer[] = [];
    for (let n = 0; n < size; n += 8192) parts.push(n % 16384 === 0 ? randomBytes(8192) : Buffer.alloc(8192, n & 0xff));
    return Buffer.concat(parts).subarray(0, size);
  };
  for (let i = 0; i < 6; i++) {
    const data = dexLike(10 * MiB);
    await writer.addEntry(`classes${i + 2}.dex`, deflateRawSync(data, { level: 6 }), { method: 'deflate', mtime, precompressed: { crc32: crc32(data) >>> 0, uncompressedSize: data.length } });
  }
  for (let i = 0; i < 1500; i++) await writer.addEntry(`res/drawable-xxhdpi/img_${i}.png`, randomBytes(48 * 1024), { method: 'stored', mtime });
  for (let i = 0; i < 33; i++) await writer.addEntry(`assets/data/pack_${i}.bin`, randomBytes(2 * MiB), { method: 'stored', mtime });
  for (let i = 0; i < 12; i++) await writer.addEntry(`lib/arm64-v8a/libgame${i}.so`, randomBytes(2 * MiB), { method: 'stored', mtime, alignment: 4096 });
  for (let i = 0; i < 3000; i++) {
    const xml = Buffer.from(`<?xml version="1.0"?><layout id="${i}">${'<View android:layout_width="match_parent"/>'.repeat(40)}</layout>`);
    await writer.addEntry(`res/layout/screen_${i}.xml`, xml, { method: 'deflate', mtime });
  }
  writer.finishEntries();
  await writer.writeTail();
  await sink.close();
  await source.close();
}
