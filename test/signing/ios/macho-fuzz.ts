// Mutation fuzzer for the Mach-O signer and verifier: random byte flips (biased towards the
// header, load commands and signature, where the parser's decisions are) and truncations of the
// fixture binaries. Every input must be signed into a signature our verifier accepts, or refused
// with a SigningError carrying a catalogue code — never another exception, crash or hang.
//
//   node test/signing/ios/macho-fuzz.ts [--long] [--cases N] [--seed S]   (npm run fuzz = --long)
// macho-fuzz.test.ts runs the short version inside `npm test`.
import { readFileSync } from 'node:fs';
import { SIGNING_ERRORS, SigningError } from '../../../src/signing/errors.ts';
import { signMachO } from '../../../src/signing/ios/codesign/sign.ts';
import { verifyMachO } from '../../../src/signing/ios/codesign/verify.ts';
import { allFixtureBinaries } from './macho/fixture-binaries.ts';

export interface FuzzOptions {
  cases: number;
  seed: number;
  /**
   * Per-case wall-time ceiling; a slower case counts as a hang. Generous (10 s): the machine is
   * shared, and a real hang is unbounded, not slow.
   */
  maxCaseMs?: number;
  log?: (line: string) => void;
}

export interface FuzzResult {
  cases: number;
  signed: number;
  refused: Record<string, number>;
  failures: string[];
  slowestMs: number;
  /** Index of the slowest case (rerun with the same seed to reproduce it). */
  slowestCase: number;
}

/** xorshift32: deterministic, so a failing seed reproduces. */
function rng(seed: number): () => number {
  let x = seed >>> 0 || 0x9e3779b9;
  return () => {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    return x / 0x100000000;
  };
}

export function corpus(maxSize = 256 * 1024): Buffer[] {
  return allFixtureBinaries()
    .map((f) => readFileSync(f))
    .filter((b) => b.length <= maxSize);
}

export function mutate(input: Buffer, random: () => number): Buffer {
  const pick = (n: number): number => Math.floor(random() * n);
  const kind = random();
  if (kind < 0.15) return input.subarray(0, pick(input.length)); // truncation
  const out = Buffer.from(input);
  const flips = 1 + pick(8);
  for (let i = 0; i < flips; i++) {
    const zone = random();
    // 60 %: header + load commands (first 4 KiB of the file or of a fat slice), 20 %: the last
    // 20 KiB (signature area), 20 %: anywhere.
    let at: number;
    if (zone < 0.6) {
      const base = out.readUInt32BE(0) === 0xcafebabe && out.length > 16 + 8 ? Math.min(out.readUInt32BE(16), out.length - 1) * (pick(2)) : 0;
      at = Math.min(out.length - 1, base + pick(4096));
    } else if (zone < 0.8) at = Math.max(0, out.length - 1 - pick(20 * 1024));
    else at = pick(out.length);
    const style = random();
    if (style < 0.5) out[at] = out[at]! ^ (1 << pick(8));
    else if (style < 0.8) out[at] = pick(256);
    else out.writeUInt32LE([0, 0xffffffff, 0x7fffffff, 0x10, 0x1000][pick(5)]!, Math.min(at - (at % 4), out.length - 4));
  }
  return out;
}

export function runFuzz(options: FuzzOptions): FuzzResult {
  const random = rng(options.seed);
  const inputs = corpus();
  if (inputs.length === 0) throw new Error('no fixture binaries found (../shared/fixtures)');
  const result: FuzzResult = { cases: 0, signed: 0, refused: {}, failures: [], slowestMs: 0, slowestCase: -1 };
  const maxCaseMs = options.maxCaseMs ?? 10_000;
  for (let i = 0; i < options.cases; i++) {
    const source = inputs[Math.floor(random() * inputs.length)]!;
    const input = mutate(source, random);
    const started = performance.now();
    const failure = fuzzOne(input);
    const elapsed = performance.now() - started;
    result.cases++;
    if (elapsed > result.slowestMs) {
      result.slowestMs = elapsed;
      result.slowestCase = i;
    }
    if (elapsed > maxCaseMs) result.failures.push(`case ${i} (seed ${options.seed}) took ${elapsed.toFixed(0)} ms`);
    if (failure === 'signed') result.signed++;
    else if (failure.startsWith('refused:')) {
      const code = failure.slice(8);
      result.refused[code] = (result.refused[code] ?? 0) + 1;
    } else result.failures.push(`case ${i} (seed ${options.seed}): ${failure}`);
    if (options.log && (i + 1) % 10000 === 0) options.log(`${i + 1} cases, ${result.signed} signed, ${result.failures.length} failures`);
  }
  return result;
}

/** 'signed', 'refused:<code>', or a description of what went wrong. */
function fuzzOne(input: Buffer): string {
  // The verifier must also cope with the mutated input itself.
  try {
    verifyMachO(input);
  } catch (error) {
    if (!isCatalogued(error)) return `verifyMachO threw ${describe(error)}`;
  }
  let signed: Buffer;
  try {
    signed = signMachO(input, { identifier: 'com.example.fuzz' }).bytes;
  } catch (error) {
    return isCatalogued(error) ? `refused:${(error as SigningError).code}` : `signMachO threw ${describe(error)}`;
  }
  try {
    const report = verifyMachO(signed);
    if (!report.valid) return `signed output does not verify: ${report.slices.flatMap((s) => s.problems).join('; ')}`;
  } catch (error) {
    return `verifying the signed output threw ${describe(error)}`;
  }
  return 'signed';
}

function isCatalogued(error: unknown): boolean {
  return error instanceof SigningError && Object.hasOwn(SIGNING_ERRORS, error.code) && error.message.length > 0;
}

function describe(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}\n${error.stack?.split('\n').slice(1, 4).join('\n')}` : String(error);
}

if (import.meta.main) {
  const args = process.argv.slice(2);
  const value = (name: string): number | undefined => {
    const i = args.indexOf(name);
    return i >= 0 ? Number(args[i + 1]) : undefined;
  };
  const cases = value('--cases') ?? (args.includes('--long') ? 100_000 : 5_000);
  const seed = value('--seed') ?? Date.now() % 0xffffffff;
  console.log(`macho fuzz: ${cases} cases, seed ${seed}`);
  const started = performance.now();
  const result = runFuzz({ cases, seed, log: (line) => console.log(line) });
  console.log(
    `${result.cases} cases in ${((performance.now() - started) / 1000).toFixed(1)} s: ${result.signed} signed, refused ${JSON.stringify(result.refused)}, slowest case #${result.slowestCase} ${result.slowestMs.toFixed(1)} ms`,
  );
  for (const failure of result.failures.slice(0, 20)) console.log(`FAIL ${failure}`);
  process.exit(result.failures.length === 0 ? 0 : 1);
}
