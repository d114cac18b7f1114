// `npm run bench:super`: super signature's per-device cost on the ~180 MB benchmark .ipa of
// bench:ipa (80 MiB executable, 20 frameworks, 2,000 resources), in one run:
//   first super signing = the whole app re-signed with a template profile (src/signing/ios/resign)
//                         + the incremental template (shared file + in-memory state);
//   per device          = signForProfile for a new ad-hoc profile + writing its bytes (the part
//                         after the shared file), 20 devices, median.
// Targets (issue 7 §6): per device ≤ 5 % of the first signing and ≤ 150 ms. Nothing asserts; the
// last device's .ipa (shared file + its part) is verified with `signet verify`'s checks.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { open } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadIdentity } from '../src/signing/cms/index.ts';
import { FileSink } from '../src/signing/data-sink.ts';
import { FileSource } from '../src/signing/data-source.ts';
import { parseProvisioningProfile } from '../src/signing/ios/profile/index.ts';
import { buildIncrementalTemplate, signForProfile } from '../src/signing/ios/resign-incremental/index.ts';
import { resignIpa } from '../src/signing/ios/resign/index.ts';
import { allProblems, verifyIpa } from '../src/signing/ios/verify-ipa/index.ts';
import { testOutputDir } from '../test/support/fixtures.ts';
import { testPki } from '../test/support/pki.ts';

const DEVICES = 20;
const here = path.dirname(fileURLToPath(import.meta.url));
const dir = testOutputDir('bench-ipa');
// bench:ipa's full-size app with random-byte code (its file name, for BENCH_SCALE=1 BENCH_APPS=random).
const ipa = path.join(dir, 'Big-random-1-signed-code.ipa');
if (!existsSync(ipa)) {
  console.log('generating the benchmark app with bench:ipa (once)…');
  const run = spawnSync(process.execPath, [path.join(here, 'ipa.ts')], { stdio: 'inherit', env: { ...process.env, BENCH_RUNS: '1', BENCH_SCALE: '1', BENCH_APPS: 'random' } });
  if (run.status !== 0 || !existsSync(ipa)) throw new Error('bench:ipa could not generate the app');
}
const work = testOutputDir('bench-super');
mkdirSync(work, { recursive: true });

const pki = testPki();
const identity = await loadIdentity(pki.p12(pki.leaf, { password: 'bench', includeChain: true }), { password: 'bench' });
const template = parseProvisioningProfile(pki.mobileprovision({ bundleId: '*', devices: [], name: 'Signet template' }));
const profiles = Array.from({ length: DEVICES }, (_, i) =>
  parseProvisioningProfile(pki.mobileprovision({ bundleId: '*', devices: [`00008120-${(i + 1).toString(16).padStart(16, '0').toUpperCase()}`] })),
);
console.log(`input: ${(statSync(ipa).size / 1e6).toFixed(1)} MB .ipa; ${DEVICES} ad-hoc profiles of one device each`);

// ---- first super signing: full re-sign with the template profile, then the incremental template
const prepared = path.join(work, 'prepared.ipa');
const sharedPath = path.join(work, 'shared.bin');
const t0 = performance.now();
{
  const source = await FileSource.open(ipa);
  const sink = await FileSink.create(prepared);
  await resignIpa(source, sink, { identity, profiles: [template], workers: 2 });
  await sink.close();
  await source.close();
}
const t1 = performance.now();
const preparedSource = await FileSource.open(prepared);
const sharedSink = await FileSink.create(sharedPath);
const state = await buildIncrementalTemplate(preparedSource, sharedSink);
await sharedSink.close();
await preparedSource.close();
const t2 = performance.now();
const full = t2 - t0;

// ---- per device
const times: number[] = [];
let lastPart = '';
let partBytes = 0;
for (const [i, profile] of profiles.entries()) {
  const start = performance.now();
  const part = signForProfile(state, { identity, profile });
  lastPart = path.join(work, `device-${i}.part`);
  const handle = await open(lastPart, 'w');
  await handle.writev(part.chunks);
  await handle.close();
  times.push(performance.now() - start);
  partBytes = part.size - state.sharedSize;
}
times.sort((a, b) => a - b);
const median = times[Math.floor(times.length / 2)]!;

console.log(`first super signing:   ${full.toFixed(0)} ms  (whole-app re-sign ${(t1 - t0).toFixed(0)} ms + incremental template ${(t2 - t1).toFixed(0)} ms; shared file ${(state.sharedSize / 1e6).toFixed(1)} MB, stored once)`);
console.log(`per-device re-signing: ${median.toFixed(1)} ms median of ${DEVICES}  (min ${times[0]!.toFixed(1)}, max ${times.at(-1)!.toFixed(1)}; ${(partBytes / 1024).toFixed(0)} KiB written per device)`);
console.log(`ratio: ${((median / full) * 100).toFixed(2)} % of the first signing (target ≤ 5 %), ${median <= 150 ? 'within' : 'OVER'} the 150 ms target`);

// ---- the last device's .ipa, materialised and verified (not timed)
const materialised = path.join(work, 'device.ipa');
writeFileSync(materialised, Buffer.concat([readFileSync(sharedPath), readFileSync(lastPart)]));
const check = await FileSource.open(materialised);
const report = await verifyIpa(check);
await check.close();
console.log(`device .ipa (${(statSync(materialised).size / 1e6).toFixed(1)} MB) verifies: ${report.verified ? 'yes' : `NO — ${allProblems(report).slice(0, 5).join('; ')}`}`);
