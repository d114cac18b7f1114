// `npm run bench:ipa`: re-signs a generated ~180 MB .ipa and compares, in the same run, with the
// floor — inflating every entry and SHA-256-hashing its bytes (what any re-signer must at least
// do to seal the app). The app mirrors the research benchmark (ios-signing.md §19, "Big.ipa"):
// an 80 MiB arm64 main executable, 20 frameworks of 3 MiB, 2,000 resources of which half are
// incompressible, zipped by Info-ZIP at level 1 (which stores what does not compress).
// Each measurement runs in its own child process so peak RSS is that of the work alone.
// BENCH_WORKERS=2 forces the Mach-O worker pool (default: automatic, in-process for this app);
// BENCH_STREAM_ABOVE=Infinity signs every Mach-O file in memory (default: streaming from 8 MiB).
// Targets: wall ≤ 1.5× floor, peak RSS ≤ 250 MB, output ≤ input + 1 %. Nothing asserts.
import { spawnSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { FileSource } from '../src/signing/data-source.ts';
import { ZipReader } from '../src/signing/zip/index.ts';
// Each child loads only the modules its own work needs (before its clock starts), so neither
// peak RSS carries the other's code; the verifier runs in the parent.

const self = fileURLToPath(import.meta.url);
const MiB = 1024 * 1024;
const RUNS = Number(process.env.BENCH_RUNS ?? 3);

const mode = process.argv[2];
if (mode === '--floor') await floorChild(process.argv[3]!);
else if (mode === '--resign') await resignChild(process.argv[3]!, process.argv[4]!, process.argv[5]!, process.argv[6]!);
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
  const ipa = path.join(dir, 'Big.ipa');
  if (!existsSync(ipa)) await generate(dir, ipa);
  const { testPki } = await import('../test/support/pki.ts');
  const pki = testPki();
  const p12 = path.join(dir, 'dist.p12');
  const profile = path.join(dir, 'inhouse.mobileprovision');
  writeFileSync(p12, pki.p12(pki.leaf, { password: 'bench', includeChain: true }));
  writeFileSync(profile, pki.mobileprovision({ bundleId: 'com.example.big' }));
  const out = path.join(dir, 'Big-signed.ipa');
  const inputSize = statSync(ipa).size;
  console.log(`input: ${(inputSize / 1e6).toFixed(1)} MB .ipa (80 MiB executable, 20 × 3 MiB frameworks, 2,000 resources)`);

  const floors: Array<{ ms: number; cpu: number; rss: number }> = [];
  const resigns: Array<{ ms: number; cpu: number; rss: number }> = [];
  const child = (args: string[]): any => {
    const run = spawnSync(process.execPath, [self, ...args], { encoding: 'utf8', maxBuffer: 1 << 20 });
    if (run.status !== 0) throw new Error(`bench child failed: ${run.stderr}`);
    return JSON.parse(run.stdout.trim().split('\n').pop()!);
  };
  // Alternate floor and re-sign so load from other processes hits both alike.
  for (let i = 0; i < RUNS; i++) {
    floors.push(child(['--floor', ipa]));
    resigns.push(child(['--resign', ipa, out, p12, profile]));
  }
  const outputSize = statSync(out).size;
  const { allProblems, verifyIpa } = await import('../src/signing/ios/verify-ipa/index.ts');
  const source = await FileSource.open(out);
  const report = await verifyIpa(source).finally(() => source.close());
  const floor = median(floors.map((f) => f.ms));
  const wall = median(resigns.map((r) => r.ms));
  const floorCpu = median(floors.map((f) => f.cpu));
  const cpu = median(resigns.map((r) => r.cpu));
  const rss = Math.max(...resigns.map((r) => r.rss));
  const runs = (list: Array<{ ms: number }>): string => list.map((r) => r.ms.toFixed(0)).join(', ');
  console.log(`floor (inflate + SHA-256 of every entry): wall ${floor.toFixed(0)} ms, CPU ${floorCpu.toFixed(0)} ms   (runs: ${runs(floors)})`);
  console.log(`re-sign + write the signed .ipa:           wall ${wall.toFixed(0)} ms, CPU ${cpu.toFixed(0)} ms   (runs: ${runs(resigns)})`);
  console.log(`ratio: wall ${(wall / floor).toFixed(2)}× (target ≤ 1.5×), CPU ${(cpu / floorCpu).toFixed(2)}× (CPU of all threads during the timed work)`);
  console.log(`peak RSS of the re-sign process:          ${(rss / 1e6).toFixed(0)} MB (target ≤ 250 MB; the floor process peaks at ${(Math.max(...floors.map((f) => f.rss)) / 1e6).toFixed(0)} MB)`);
  console.log(`output: ${(outputSize / 1e6).toFixed(1)} MB = input ${((outputSize / inputSize - 1) * 100).toFixed(2)} % (target ≤ +1 %)`);
  console.log(`output verifies: ${report.verified ? 'yes' : `NO — ${allProblems(report).slice(0, 5).join('; ')}`}`);
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

async function floorChild(ipa: string): Promise<void> {
  const cpu0 = process.cpuUsage();
  const start = performance.now();
  const source = await FileSource.open(ipa);
  const zip = await ZipReader.open(source);
  for (const entry of zip.entriesInFileOrder()) {
    const h = createHash('sha256');
    for await (const chunk of zip.contentChunks(entry)) h.update(chunk);
    h.digest();
  }
  await source.close();
  const ms = performance.now() - start;
  const cpu = process.cpuUsage(cpu0);
  console.log(JSON.stringify({ ms, cpu: (cpu.user + cpu.system) / 1000, rss: process.resourceUsage().maxRSS * 1024 }));
}

async function resignChild(ipa: string, out: string, p12: string, profileFile: string): Promise<void> {
  const { loadIdentity } = await import('../src/signing/cms/index.ts');
  const { FileSink } = await import('../src/signing/data-sink.ts');
  const { parseProvisioningProfile } = await import('../src/signing/ios/profile/index.ts');
  const { resignIpa } = await import('../src/signing/ios/resign/index.ts');
  const identity = await loadIdentity(readFileSync(p12), { password: 'bench' });
  const profile = parseProvisioningProfile(readFileSync(profileFile));
  // A fresh output file, as the service writes (a new ".partial" file): truncating the previous
  // run's output would charge freeing its cached pages to this run.
  rmSync(out, { force: true });
  const cpu0 = process.cpuUsage();
  const start = performance.now();
  const source = await FileSource.open(ipa);
  const sink = await FileSink.create(out);
  await resignIpa(source, sink, {
    identity,
    profiles: [profile],
    ...(process.env.BENCH_WORKERS === undefined ? {} : { workers: Number(process.env.BENCH_WORKERS) }),
    ...(process.env.BENCH_STREAM_ABOVE === undefined ? {} : { streamAbove: Number(process.env.BENCH_STREAM_ABOVE) }),
    signingTime: new Date('2026-01-01T00:00:00Z'),
  });
  await sink.close();
  await source.close();
  const ms = performance.now() - start;
  // CPU of every thread of the process (worker threads included) during the timed work only.
  const cpu = process.cpuUsage(cpu0);
  console.log(JSON.stringify({ ms, cpu: (cpu.user + cpu.system) / 1000, rss: process.resourceUsage().maxRSS * 1024 }));
}

async function generate(dir: string, ipa: string): Promise<void> {
  const { buildThin } = await import('../test/support/macho-build.ts');
  const root = path.join(dir, 'root');
  rmSync(root, { recursive: true, force: true });
  const app = path.join(root, 'Payload', 'Big.app');
  mkdirSync(path.join(app, 'res'), { recursive: true });
  const plist = (id: string, exe: string, type: string): string =>
    `<?xml version="1.0" encoding="UTF-8"?>\n<plist version="1.0"><dict><key>CFBundleIdentifier</key><string>${id}</string><key>CFBundleExecutable</key><string>${exe}</string><key>CFBundlePackageType</key><string>${type}</string><key>CFBundleShortVersionString</key><string>1.0</string></dict></plist>\n`;
  const blob = (name: string, size: number): string => {
    const file = path.join(dir, `${name}.blob`);
    writeFileSync(file, randomBytes(size));
    return file;
  };
  console.log('generating the benchmark app (once; cached under test-output/bench-ipa)…');
  writeFileSync(path.join(app, 'Info.plist'), plist('com.example.big', 'Big', 'APPL'));
  writeFileSync(path.join(app, 'Big'), buildThin({ arch: 'arm64', kind: 'executable', blobFile: blob('main', 80 * MiB - 64 * 1024) }), { mode: 0o755 });
  for (let i = 0; i < 20; i++) {
    const fw = path.join(app, 'Frameworks', `F${i}.framework`);
    mkdirSync(fw, { recursive: true });
    writeFileSync(path.join(fw, 'Info.plist'), plist(`com.example.f${i}`, `F${i}`, 'FMWK'));
    writeFileSync(path.join(fw, `F${i}`), buildThin({ arch: 'arm64', kind: 'dylib', blobFile: blob(`f${i}`, 3 * MiB - 64 * 1024) }), { mode: 0o755 });
  }
  const words = ['signet', 'bundle', 'resource', 'layout', 'button', 'color', 'string', 'image', 'view', 'model'];
  for (let i = 0; i < 2000; i++) {
    const size = 20 * 1024 + ((i * 7919) % (20 * 1024));
    const data = i % 2 === 0 ? randomBytes(size) : Buffer.from(Array.from({ length: size / 6 }, (_, j) => words[(i + j * j) % words.length]).join(' ').slice(0, size));
    writeFileSync(path.join(app, 'res', `r${i}.${i % 2 === 0 ? 'bin' : 'txt'}`), data);
  }
  // Info-ZIP level 1, like the research benchmark (`zip -1`); it stores entries that do not shrink.
  rmSync(ipa, { force: true });
  const run = spawnSync('zip', ['-qr1', ipa, 'Payload'], { cwd: root, encoding: 'utf8' });
  if (run.status !== 0) throw new Error(`zip failed: ${run.stderr}`);
}
