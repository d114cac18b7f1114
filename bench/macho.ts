// `npm run bench:macho`: signs a generated 80 MiB arm64 executable and compares, in the same run,
// with the floor — one SHA-256 over the same bytes (what any signer must at least read and hash).
// Target: signing ≤ 1.5× that floor. signMachO returns chunks (views of the unchanged input plus
// new headers and signature), so its cost is page hashing; joining them into one Buffer costs a
// copy of the file and is timed separately. Figures are printed side by side; nothing asserts.
import { hash, randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { identityCodeSigner } from '../src/signing/ios/codesign/identity-signer.ts';
import { hashPages, HASH_SHA256 } from '../src/signing/ios/codesign/digest.ts';
import { signMachO } from '../src/signing/ios/codesign/sign.ts';
import { verifyMachO } from '../src/signing/ios/codesign/verify.ts';
import { testOutputDir } from '../test/support/fixtures.ts';
import { buildThin, needsToolchain } from '../test/support/macho-build.ts';
import { testPki } from '../test/support/pki.ts';

const SIZE = 80 * 1024 * 1024;
const RUNS = Number(process.env.BENCH_RUNS ?? 7);
// Medians of no runs would be nothing: say so rather than print NaN or crash.
if (!Number.isInteger(RUNS) || RUNS < 1) throw new Error(`BENCH_RUNS must be a whole number of runs, 1 or more (got ${process.env.BENCH_RUNS})`);

if (needsToolchain().skip) {
  console.error('bench:macho needs clang and ld64.lld to generate the executable');
  process.exit(1);
}

// An 80 MiB arm64 iOS executable: a tiny program plus an 80 MiB __TEXT,__blob section.
const dir = testOutputDir('bench-macho');
mkdirSync(dir, { recursive: true });
const blob = path.join(dir, 'blob.bin');
writeFileSync(blob, randomBytes(SIZE - 64 * 1024));
const input = buildThin({ arch: 'arm64', kind: 'executable', blobFile: blob });
console.log(`input: ${(input.length / 1024 / 1024).toFixed(1)} MiB arm64 executable (no LC_CODE_SIGNATURE)`);

const pki = testPki();
const signer = identityCodeSigner({ ...pki.leaf, chain: [pki.intermediate.certificate, pki.root.certificate] });

const signed = signMachO(input, { identifier: 'com.example.bench', signer }).bytes;
if (!verifyMachO(signed).valid) throw new Error('the signed benchmark binary does not verify');
const cases: Array<[string, () => unknown]> = [
  ['floor: SHA-256 of the whole file (one call)', () => hash('sha256', input, 'buffer')],
  ['SHA-256 per 4 KiB page only', () => hashPages(HASH_SHA256, input, input.length, 4096)],
  ['signMachO ad-hoc (4 KiB pages)', () => signMachO(input, { identifier: 'com.example.bench' })],
  ['signMachO with identity + CMS (4 KiB pages)', () => signMachO(input, { identifier: 'com.example.bench', signer })],
  ['signMachO with identity + CMS (16 KiB pages)', () => signMachO(input, { identifier: 'com.example.bench', signer, pageSize: 16384 })],
  ['… and joined into one Buffer (.bytes)', () => Buffer.concat(signMachO(input, { identifier: 'com.example.bench', signer }).chunks)],
  ['verifyMachO (identity-signed output)', () => verifyMachO(signed)],
];
// Round-robin, so load from other processes on the shared machine hits every case alike.
const samples = cases.map(() => [] as number[]);
for (const [, fn] of cases) fn(); // warm-up
for (let run = 0; run < RUNS; run++) {
  cases.forEach(([, fn], i) => {
    const start = performance.now();
    fn();
    samples[i]!.push(performance.now() - start);
  });
}
const medians = samples.map((list) => list.sort((a, b) => a - b)[Math.floor(list.length / 2)]!);
const floor = medians[0]!;
const identity = medians[3]!;
const rows = cases.map(([label], i): [string, number] => [label, medians[i]!]);

console.log(`median of ${RUNS} runs, node ${process.version}`);
for (const [label, ms] of rows) console.log(`${label.padEnd(48)} ${ms.toFixed(1).padStart(8)} ms  ${(ms / floor).toFixed(2)}× floor  ${((input.length / 1024 / 1024) / (ms / 1000)).toFixed(0)} MiB/s`);
const ratio = identity / floor;
console.log(`\nsigning (identity, 4 KiB) / floor = ${ratio.toFixed(2)}× (target ≤ 1.5×): ${ratio <= 1.5 ? 'met' : 'NOT met'}`);
