// `npm run bench:ipa`: re-signs generated .ipa files and prints, in the same run and side by side,
// the true floor and Signet, with the ratios taken from that run (the machine is shared: only
// ratios measured together mean anything).
//
// The apps mirror the research benchmark (ios-signing.md §19, "Big.ipa"): an 80 MiB arm64 main
// executable, 20 frameworks of 3 MiB, 2,000 resources of which half are incompressible, zipped
// by Info-ZIP at level 1 (which stores what does not compress). Two variants:
//   random — executables of random bytes (stored by zip: nothing to recompress);
//   code   — executables that compress like real code (~50 %), deflated: the signer must
//            recompress them, which is part of the floor.
// The code is signed already (ad hoc, by the linker), as the code of every real .ipa is: the
// re-signer replaces signatures rather than adding them.
// BENCH_SCALE (default 0.5) scales every size and count; BENCH_SCALE=1 is the full 185 MB shape.
// BENCH_APPS=random,code picks the apps; BENCH_RUNS (default 3) the runs, medians reported.
//
// Rows (each in its own process, so peak RSS is that process's alone; runs alternate so that
// load from other processes hits all alike, and each starts with the earlier rows' writes
// flushed, flush-writes.ts):
//   floor ×1 / ×2 — bench/floor.ts: read, inflate each entry once, SHA-1 + SHA-256 of every
//                   resource, page hashes of the code, CRC and recompression of what is rewritten,
//                   write; on one core, then over both (worker_threads).
//   signet sign   — `bin/signet sign` as a user runs it (start-up, key loading, re-sign, the
//                   verification of the output it always does), under GNU time.
//   service path  — bench/service-path.ts: a `bin/signet serve` child started once for the bench;
//                   per run, upload → enterprise task → `succeeded`, polled as a client polls:
//                   wall, the server's CPU over that interval, its peak RSS since it started.
//   zsign         — with BENCH_ZSIGN=/path/to/zsign, the C++ re-signer peers use
//                   (github.com/zhlynn/zsign: build it outside this repository with
//                   `make -C build/linux`), on the same .p12 and profile, under GNU time.
//                   zsign unpacks the .ipa to a folder and zips it again, at its -z level: 0
//                   unless told (deflate's stored blocks, so its output is the app's unpacked
//                   size); BENCH_ZSIGN_LEVEL=N passes `-z N`. Its output is checked by our
//                   verifier, and a failure is reported, not fatal.
//   engine + proof — the re-sign and verifyWritten (the verification proof the engine returns,
//                   what signPackage runs), in a bare process; diagnostic.
//   baseline      — with BENCH_BASELINE=DIR (a checkout of an earlier commit with its
//                   node_modules), that checkout's `bin/signet sign`, for before/after figures
//                   measured in the same run.
// Targets (issue #16): signet sign ≤ 2× the two-core floor's wall and ≤ 1.5× the floor's CPU,
// peak RSS ≤ 250 MB, output ≤ input + 1 %. Nothing asserts.
import { execFile, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { flushWrites } from './flush-writes.ts';
import { inTurn, middleOf } from './rounds.ts';
import { startServicePath, type ServicePath } from './service-path.ts';

const self = fileURLToPath(import.meta.url);
const repoRoot = path.resolve(import.meta.dirname, '..');
const MiB = 1024 * 1024;
const PAGE_SIZE = 16 * 1024;
const RUNS = Number(process.env.BENCH_RUNS ?? 3);
// Medians of no runs would be nothing: say so rather than print NaN or crash.
if (!Number.isInteger(RUNS) || RUNS < 1) throw new Error(`BENCH_RUNS must be a whole number of runs, 1 or more (got ${process.env.BENCH_RUNS})`);
const SCALE = Number(process.env.BENCH_SCALE ?? 0.5);
const APPS = (process.env.BENCH_APPS ?? 'random,code').split(',') as Array<'random' | 'code'>;
const exec = promisify(execFile);

interface Measure {
  ms: number;
  cpu: number;
  rss: number;
}

if (process.argv[2] === '--engine') await engineChild(process.argv[3]!, process.argv[4]!, process.argv[5]!, process.argv[6]!);
else await main();

async function main(): Promise<void> {
  const { testOutputDir } = await import('../test/support/fixtures.ts');
  const { needsToolchain } = await import('../test/support/macho-build.ts');
  if (needsToolchain().skip) {
    console.error('bench:ipa needs clang and ld64.lld to generate the app');
    process.exit(1);
  }
  const dir = testOutputDir('bench-ipa');
  mkdirSync(dir, { recursive: true });
  const { testPki } = await import('../test/support/pki.ts');
  const { productionEnv, productionNodeFlags } = await import('../test/support/production-node.ts');
  const pki = testPki();
  const p12 = path.join(dir, 'dist.p12');
  const profile = path.join(dir, 'inhouse.mobileprovision');
  writeFileSync(p12, pki.p12(pki.leaf, { password: 'bench', includeChain: true }));
  writeFileSync(profile, pki.mobileprovision({ bundleId: 'com.example.big' }));
  // bin/signet runs with the `node` on PATH (its shebang): make that this Node, with a compile
  // cache of its own that the unmeasured warm-up run fills.
  const env = { ...process.env, PATH: `${path.dirname(process.execPath)}${path.delimiter}${process.env.PATH ?? ''}`, NODE_COMPILE_CACHE: path.join(dir, 'compile-cache') };
  // The engine row runs with bin/signet's V8 flags and glibc settings, the floor with the latter.
  const flags = productionNodeFlags();
  const engineEnv = { ...env, ...productionEnv() };
  // One server for the whole bench, as one runs for many tasks; the warm-up runs load its signers.
  const service = await startServicePath(repoRoot, env, {
    kind: 'ios_enterprise',
    password: 'bench',
    file: { name: 'dist.p12', data: readFileSync(p12) },
    profile: { name: 'inhouse.mobileprovision', data: readFileSync(profile) },
  });
  try {
    for (const kind of APPS) await benchApp(dir, kind, { p12, profile, env, engineEnv, flags, service });
  } finally {
    await service.close();
  }
}

interface Setup {
  p12: string;
  profile: string;
  env: NodeJS.ProcessEnv;
  engineEnv: NodeJS.ProcessEnv;
  flags: string[];
  service: ServicePath;
}

async function benchApp(dir: string, kind: 'random' | 'code', { p12, profile, env, engineEnv, flags, service }: Setup): Promise<void> {
  const ipa = path.join(dir, `Big-${kind}-${SCALE}-signed-code.ipa`);
  if (!existsSync(ipa)) await generate(dir, ipa, kind);
  const out = path.join(dir, `Big-${kind}-signed.ipa`);
  const floorOut = path.join(dir, 'floor.out');
  const engineOut = path.join(dir, `Big-${kind}-engine.ipa`);
  const inputSize = statSync(ipa).size;
  console.log(`\n${kind}: ${(inputSize / 1e6).toFixed(1)} MB .ipa (scale ${SCALE}: ${mib(80 * MiB * SCALE)} executable, 20 × ${mib(3 * MiB * SCALE)} frameworks, ${Math.round(2000 * SCALE)} resources; executables ${kind === 'random' ? 'random bytes, stored' : 'compressing like code, deflated'})`);
  const rows = { floor1: [] as Measure[], floor2: [] as Measure[], sign: [] as Measure[], service: [] as Measure[], zsign: [] as Measure[], engine: [] as Measure[], baseline: [] as Measure[] };
  const baseline = process.env.BENCH_BASELINE;
  const zsign = process.env.BENCH_ZSIGN;
  const zsignOut = path.join(dir, `Big-${kind}-zsign.ipa`);
  // zsign unpacks into its temporary folder: one of ours, removed after each run.
  const zsignTmp = path.join(dir, 'zsign-tmp');
  const zsignArgs = ['-q', '-k', p12, '-p', 'bench', '-m', profile, '-t', zsignTmp, '-o', zsignOut, ...(process.env.BENCH_ZSIGN_LEVEL === undefined ? [] : ['-z', process.env.BENCH_ZSIGN_LEVEL]), ipa];
  let zsignFailure: string | undefined;
  for (let i = -1; i < RUNS; i++) {
    // The floor gets bin/signet's glibc settings, not its V8 flags (tuned for signet's memory, they made the floor slower).
    const floor1 = await timed(process.execPath, [path.join(repoRoot, 'bench', 'floor.ts'), 'ios', ipa, floorOut, '1'], engineEnv, floorOut);
    const floor2 = await timed(process.execPath, [path.join(repoRoot, 'bench', 'floor.ts'), 'ios', ipa, floorOut, '2'], engineEnv, floorOut);
    // signet sign and the baseline checkout run next to each other, in turn first, so that neither
    // always follows the same row. Run last in each round, the baseline once read 1.78 s against
    // signet sign's 1.53 s for the same engine code; run like this it still read 1.85 s against
    // 1.41 s for identical iOS engine code (2026-11-27), a gap that alternating runs of the two
    // commands alone (30 pairs: 1.535 s against 1.545 s) do not show. Until that is explained,
    // compare commits with such alternating runs, not with this row.
    const signet = (): Promise<Measure> => timed(path.join(repoRoot, 'bin', 'signet'), ['sign', ipa, '-o', out, '--p12', p12, '--password', 'bench', '--profile', profile], env, out);
    const baselineRun = async (): Promise<Measure | undefined> => {
      if (baseline === undefined) return undefined;
      const baselineOut = path.join(dir, `Big-${kind}-baseline.ipa`);
      const measure = await timed(path.join(baseline, 'bin', 'signet'), ['sign', ipa, '-o', baselineOut, '--p12', p12, '--password', 'bench', '--profile', profile], { ...env, NODE_COMPILE_CACHE: path.join(dir, 'compile-cache-baseline') }, baselineOut);
      rmSync(baselineOut, { force: true });
      return measure;
    };
    const [sign, before] = await inTurn(i, signet, baselineRun);
    const served = await service.run(ipa);
    let other: Measure | undefined;
    if (zsign !== undefined && zsignFailure === undefined) {
      mkdirSync(zsignTmp, { recursive: true });
      // Reported, not fatal: the comparison is optional and zsign is not ours.
      other = await timed(zsign, zsignArgs, env, zsignOut).catch((error: Error) => void (zsignFailure = error.message.split('\n').slice(0, 4).join(' ')));
      rmSync(zsignTmp, { recursive: true, force: true });
    }
    const engine = await timed(process.execPath, [...flags, self, '--engine', ipa, engineOut, p12, profile], engineEnv, engineOut);
    if (i < 0) continue; // warm-up: page cache, compile cache, the server's lazily loaded signers
    if (before !== undefined) rows.baseline.push(before);
    if (other !== undefined) rows.zsign.push(other);
    rows.floor1.push(floor1);
    rows.floor2.push(floor2);
    rows.sign.push(sign);
    rows.service.push({ ms: served.ms, cpu: served.cpuMs, rss: served.peakRss });
    rows.engine.push(engine);
  }
  rmSync(floorOut, { force: true });
  const f1 = median(rows.floor1);
  const f2 = median(rows.floor2);
  const s = median(rows.sign);
  const v = median(rows.service);
  const e = median(rows.engine);
  const row = (name: string, m: Measure, all: Measure[], note = ''): string =>
    `  ${name.padEnd(16)} ${(m.ms / 1000).toFixed(2).padStart(6)} s ${(m.cpu / 1000).toFixed(2).padStart(6)} s ${(m.rss / 1e6).toFixed(0).padStart(6)} MB   (wall per run: ${all.map((x) => (x.ms / 1000).toFixed(2)).join(', ')}${note})`;
  console.log(`  ${''.padEnd(16)} ${'wall'.padStart(8)} ${'CPU'.padStart(8)} ${'peak RSS'.padStart(9)}   medians of ${RUNS} interleaved runs after a warm-up`);
  console.log(row('floor, 1 core', f1, rows.floor1));
  console.log(row('floor, 2 cores', f2, rows.floor2));
  console.log(row('signet sign', s, rows.sign));
  console.log(row('service path', v, rows.service, '; CPU: the server\'s; RSS: its peak since it started'));
  const z = rows.zsign.length > 0 ? median(rows.zsign) : undefined;
  if (z !== undefined) console.log(row('zsign', z, rows.zsign));
  console.log(row('engine + proof', e, rows.engine));
  const b = rows.baseline.length > 0 ? median(rows.baseline) : undefined;
  if (b !== undefined) console.log(row('baseline sign', b, rows.baseline));
  // The two-core floor is the faster of the two ways to use two cores (workers cost a start-up).
  const floorWall = Math.min(f1.ms, f2.ms);
  const floorCpu = Math.min(f1.cpu, f2.cpu);
  console.log(`  signet sign / two-core floor: wall ${(s.ms / floorWall).toFixed(2)}× (target ≤ 2×), CPU ${(s.cpu / floorCpu).toFixed(2)}× the floor's (target ≤ 1.5×), peak RSS ${(s.rss / 1e6).toFixed(0)} MB (target ≤ 250 MB)`);
  console.log(`  service path / two-core floor: wall ${(v.ms / floorWall).toFixed(2)}×, CPU ${(v.cpu / floorCpu).toFixed(2)}× the floor's (upload, task, re-sign, verification, storage; wall ${(v.ms / s.ms).toFixed(2)}× signet sign's), server peak RSS ${(v.rss / 1e6).toFixed(0)} MB (${(service.idleRss / 1e6).toFixed(0)} MB once started, before any run)`);
  console.log(`  engine + proof / two-core floor: wall ${(e.ms / floorWall).toFixed(2)}×, CPU ${(e.cpu / floorCpu).toFixed(2)}×`);
  if (b !== undefined) console.log(`  baseline signet sign / two-core floor: wall ${(b.ms / floorWall).toFixed(2)}×, CPU ${(b.cpu / floorCpu).toFixed(2)}×, peak RSS ${(b.rss / 1e6).toFixed(0)} MB`);
  // Each run's own ratio as well: this machine is shared and goes through slower and faster
  // phases, which move a run's rows together; the medians above may pair a floor from a fast
  // phase with a signet run from a slow one.
  const perRun = (all: Measure[]): number[] => all.map((m, i) => m.ms / Math.min(rows.floor1[i]!.ms, rows.floor2[i]!.ms));
  const ratios = (values: number[]): string => `${values.map((x) => x.toFixed(2)).join(', ')} (median ${middleOf(values).toFixed(2)}×)`;
  console.log(`  per run, wall / the same run's faster floor: signet sign ${ratios(perRun(rows.sign))}${rows.baseline.length > 0 ? `; baseline ${ratios(perRun(rows.baseline))}` : ''}`);
  const outputSize = statSync(out).size;
  console.log(`  output: ${(outputSize / 1e6).toFixed(1)} MB = input ${percent(outputSize, inputSize)} (target ≤ +1 %)`);
  // signet sign verified its output before keeping it, and the service path's task did; the
  // engine row's output gets the full independent verifier here, so the proof path is checked
  // against it on every run.
  const { allProblems, verifyIpa } = await import('../src/signing/ios/verify-ipa/index.ts');
  const { FileSource, SIGNING_READS } = await import('../src/signing/data-source.ts');
  const verify = async (file: string): Promise<string> => {
    const source = await FileSource.open(file);
    const report = await verifyIpa(source).finally(() => source.close());
    const problems = allProblems(report);
    return report.verified ? 'yes' : `NO — ${problems.length} problems: ${problems.slice(0, 3).join('; ')}${problems.length > 3 ? '; …' : ''}`;
  };
  const engineVerdict = await verify(engineOut);
  console.log(`  engine output passes the full verifier (signet verify): ${engineVerdict}`);
  if (engineVerdict !== 'yes') process.exitCode = 1;
  if (zsign === undefined) return;
  if (zsignFailure !== undefined) console.log(`  zsign failed: ${zsignFailure}`);
  if (z === undefined || !existsSync(zsignOut)) return;
  // Expect the designated-requirement check to fail here whatever zsign does: its requirement
  // names Apple's WWDR marker (certificate 1[field.1.2.840.113635.100.6.2.1]), which the test
  // PKI's intermediate does not carry. Other problems are zsign's own.
  const zsignSize = statSync(zsignOut).size;
  console.log(`  signet sign / zsign: wall ${(s.ms / z.ms).toFixed(2)}×, CPU ${(s.cpu / z.cpu).toFixed(2)}×, peak RSS ${(s.rss / z.rss).toFixed(2)}× (signet sign also verifies its output; zsign does not)`);
  console.log(`  zsign output (-z ${process.env.BENCH_ZSIGN_LEVEL ?? '0, its default'}): ${(zsignSize / 1e6).toFixed(1)} MB = input ${percent(zsignSize, inputSize)}; passes our verifier: ${await verify(zsignOut).catch((error: Error) => `NO — ${error.message}`)}`);
  rmSync(zsignOut, { force: true });
}

function percent(size: number, reference: number): string {
  return `${size >= reference ? '+' : ''}${((size / reference - 1) * 100).toFixed(2)} %`;
}

function mib(bytes: number): string {
  return `${(bytes / MiB).toFixed(bytes < 10 * MiB ? 1 : 0)} MiB`;
}

/** Median of each figure on its own. */
function median(values: Measure[]): Measure {
  const middle = (pick: (m: Measure) => number): number => middleOf(values.map(pick));
  return { ms: middle((m) => m.ms), cpu: middle((m) => m.cpu), rss: middle((m) => m.rss) };
}

/**
 * Runs a command under GNU time (wall %e, user %U + system %S CPU, peak RSS %M KiB of the process).
 * `output`: the row's output file, deleted first (flush-writes.ts).
 */
async function timed(command: string, args: string[], env: NodeJS.ProcessEnv, output: string): Promise<Measure> {
  flushWrites(output);
  const { stderr } = await exec('/usr/bin/time', ['-f', 'SIGNET_TIME %e %U %S %M', command, ...args], { maxBuffer: 64 * MiB, env });
  const match = /SIGNET_TIME ([\d.]+) ([\d.]+) ([\d.]+) (\d+)/.exec(stderr);
  if (match === null) throw new Error(`no timing from ${command}: ${stderr}`);
  return { ms: Number(match[1]) * 1000, cpu: (Number(match[2]) + Number(match[3])) * 1000, rss: Number(match[4]) * 1024 };
}

/** The engine as signPackage runs it: re-sign, then verifyWritten with the proof it returned. */
async function engineChild(ipa: string, out: string, p12: string, profileFile: string): Promise<void> {
  const { loadIdentity } = await import('../src/signing/cms/index.ts');
  const { FileSink } = await import('../src/signing/data-sink.ts');
  const { FileSource, SIGNING_READS } = await import('../src/signing/data-source.ts');
  const { parseProvisioningProfile } = await import('../src/signing/ios/profile/index.ts');
  const { resignIpaProved } = await import('../src/signing/ios/resign/index.ts');
  const { allProblems, verifyWritten } = await import('../src/signing/ios/verify-ipa/index.ts');
  const identity = await loadIdentity(readFileSync(p12), { password: 'bench' });
  const profile = parseProvisioningProfile(readFileSync(profileFile));
  // Opened as the CLI opens them (SIGNING_READS: small reads on the calling thread).
  const source = await FileSource.open(ipa, SIGNING_READS);
  const sink = await FileSink.create(out);
  const cpu0 = process.cpuUsage();
  const start = performance.now();
  const { proof } = await resignIpaProved(source, sink, { identity, profiles: [profile], readBackForVerification: true });
  await sink.close();
  const cpu1 = process.cpuUsage();
  const signed = performance.now();
  const rssAfterSign = process.resourceUsage().maxRSS * 1024;
  const check = await FileSource.open(out, SIGNING_READS);
  const report = await verifyWritten(check, source, proof).finally(() => check.close());
  // Phase split, for diagnosis (stderr; the figures above are the whole process's).
  const cpu2 = process.cpuUsage();
  const ms = (a: NodeJS.CpuUsage, b: NodeJS.CpuUsage): string => ((b.user + b.system - a.user - a.system) / 1000).toFixed(0);
  if (process.env.BENCH_PHASES !== undefined) console.error(`re-sign ${(signed - start).toFixed(0)} ms wall ${ms(cpu0, cpu1)} ms CPU; verifyWritten ${(performance.now() - signed).toFixed(0)} ms wall ${ms(cpu1, cpu2)} ms CPU; peak RSS ${(rssAfterSign / 1e6).toFixed(0)} MB after the re-sign, ${((process.resourceUsage().maxRSS * 1024) / 1e6).toFixed(0)} MB after verifying`);
  await source.close();
  if (!report.verified) throw new Error(allProblems(report).join('; '));
}

async function generate(dir: string, ipa: string, kind: 'random' | 'code'): Promise<void> {
  const { buildThin } = await import('../test/support/macho-build.ts');
  const root = path.join(dir, 'root');
  rmSync(root, { recursive: true, force: true });
  const app = path.join(root, 'Payload', 'Big.app');
  mkdirSync(path.join(app, 'res'), { recursive: true });
  const plist = (id: string, exe: string, type: string): string =>
    `<?xml version="1.0" encoding="UTF-8"?>\n<plist version="1.0"><dict><key>CFBundleIdentifier</key><string>${id}</string><key>CFBundleExecutable</key><string>${exe}</string><key>CFBundlePackageType</key><string>${type}</string><key>CFBundleShortVersionString</key><string>1.0</string></dict></plist>\n`;
  // Random bytes, or data compressing like code (~50 % at level 1): each KiB is 512 random bytes
  // and 512 bytes repeating an earlier stretch, as code repeats instruction sequences.
  const content = (size: number): Buffer => {
    const data = randomBytes(size);
    if (kind === 'code') for (let at = 1024; at + 1024 <= size; at += 1024) data.copy(data, at + 512, at - 1024 + ((at >> 10) % 7) * 64, at - 1024 + ((at >> 10) % 7) * 64 + 512);
    return data;
  };
  // buildThin caches binaries by spec and blob size: code blobs are one page smaller, so the
  // two apps never share a cached binary.
  const blob = (name: string, size: number): string => {
    const file = path.join(dir, `${name}.blob`);
    writeFileSync(file, content(Math.max(PAGE_SIZE, Math.round((size * SCALE) / PAGE_SIZE) * PAGE_SIZE - (kind === 'code' ? PAGE_SIZE : 0))));
    return file;
  };
  console.log(`generating the ${kind} benchmark app (once; cached under test-output/bench-ipa)…`);
  writeFileSync(path.join(app, 'Info.plist'), plist('com.example.big', 'Big', 'APPL'));
  writeFileSync(path.join(app, 'Big'), buildThin({ arch: 'arm64', kind: 'executable', linkerSigned: true, blobFile: blob('main', 80 * MiB - 64 * 1024) }), { mode: 0o755 });
  for (let i = 0; i < 20; i++) {
    const fw = path.join(app, 'Frameworks', `F${i}.framework`);
    mkdirSync(fw, { recursive: true });
    writeFileSync(path.join(fw, 'Info.plist'), plist(`com.example.f${i}`, `F${i}`, 'FMWK'));
    writeFileSync(path.join(fw, `F${i}`), buildThin({ arch: 'arm64', kind: 'dylib', linkerSigned: true, blobFile: blob(`f${i}`, 3 * MiB - 64 * 1024) }), { mode: 0o755 });
  }
  const words = ['signet', 'bundle', 'resource', 'layout', 'button', 'color', 'string', 'image', 'view', 'model'];
  for (let i = 0; i < Math.round(2000 * SCALE); i++) {
    const size = 20 * 1024 + ((i * 7919) % (20 * 1024));
    const data = i % 2 === 0 ? randomBytes(size) : Buffer.from(Array.from({ length: size / 6 }, (_, j) => words[(i + j * j) % words.length]).join(' ').slice(0, size));
    writeFileSync(path.join(app, 'res', `r${i}.${i % 2 === 0 ? 'bin' : 'txt'}`), data);
  }
  // Info-ZIP level 1, like the research benchmark (`zip -1`); it stores entries that do not shrink.
  rmSync(ipa, { force: true });
  const run = spawnSync('zip', ['-qr1', ipa, 'Payload'], { cwd: root, encoding: 'utf8' });
  if (run.status !== 0) throw new Error(`zip failed: ${run.stderr}`);
  rmSync(root, { recursive: true, force: true });
}
