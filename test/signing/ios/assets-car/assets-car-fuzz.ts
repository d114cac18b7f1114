// Mutation fuzzer for the Assets.car reader: byte flips, 32-bit overwrites with boundary values
// and truncations of real catalogs (../shared/fixtures) and of catalogs built by the test writer
// for every compression. Every input must parse and decode, or be refused with a SigningError
// carrying a catalogue code — never another exception, a hang or a runaway allocation.
//
//   node test/signing/ios/assets-car/assets-car-fuzz.ts [--long] [--cases N] [--seed S]
//   (npm run fuzz:assets-car = --long). fuzz.test.ts runs a time-boxed version inside `npm test`.
import { existsSync, readFileSync } from 'node:fs';
import { SIGNING_ERRORS, SigningError } from '../../../../src/signing/errors.ts';
import { parseAssetCatalog, readCatalogAppIcon, renditionPng } from '../../../../src/signing/ios/assets-car/index.ts';
import { buildAssetCatalog, type Compression } from '../../../support/assets-car-writer.ts';
import { sharedFixture } from '../../../support/fixtures.ts';

export interface FuzzOptions {
  cases: number;
  seed: number;
  /** Stop early once this much time has passed (the in-suite run is time-boxed). */
  budgetMs?: number;
  /** A case slower than this counts as a hang (generous: the machine is shared). */
  maxCaseMs?: number;
  log?: (line: string) => void;
}

export interface FuzzResult {
  cases: number;
  decoded: number;
  refused: Record<string, number>;
  failures: string[];
  slowestMs: number;
}

/** Renditions decoded per case at most, so one large catalog cannot dominate the run. */
const RENDITIONS_PER_CASE = 12;

function rng(seed: number): () => number {
  let x = seed >>> 0 || 0x9e3779b9;
  return () => {
    x ^= x << 13; x >>>= 0; x ^= x >>> 17; x ^= x << 5; x >>>= 0;
    return x / 0x100000000;
  };
}

/** Writer-built catalogs (always) plus the small real ones when the shared corpus is present. */
export function corpus(): Buffer[] {
  const rgba = Buffer.alloc(12 * 10 * 4);
  for (let i = 0; i < rgba.length; i++) rgba[i] = (i * 37) & 0xff;
  const built = (['none', 'zlib', 'lzvn', 'lzfse'] as Compression[]).flatMap((compression) => [undefined, 4].map((chunkRows) =>
    buildAssetCatalog([
      { facet: 'AppIcon', width: 12, height: 10, rgba, compression, chunkRows, pixelFormat: chunkRows ? 'RGBW' : 'ARGB' },
      { facet: 'AppIcon', width: 0, height: 0, kind: 'multisize-set' },
    ], { appearances: { UIAppearanceAny: 0 } })));
  const real = ['ios/isign/Test.app/Assets.car', 'ios/assets-car/acextract/assets_mac.car', 'ios/assets-car/sentry-cli/product-image/Assets.car']
    .map((f) => sharedFixture(f)).filter((f): f is string => f !== null && existsSync(f)).map((f) => readFileSync(f));
  return [...built, ...real];
}

export function mutate(input: Buffer, random: () => number): Buffer {
  const pick = (n: number): number => Math.floor(random() * n);
  if (random() < 0.1) return input.subarray(0, pick(input.length));
  const out = Buffer.from(input);
  for (let i = 0, n = 1 + pick(6); i < n; i++) {
    const at = pick(out.length);
    const style = random();
    if (style < 0.5) out[at] = out[at]! ^ (1 << pick(8));
    else if (style < 0.75) out[at] = pick(256);
    else {
      const value = [0, 1, 0xffffffff, 0x7fffffff, 0x10000, out.length][pick(6)]!;
      const aligned = Math.min(at - (at % 4), out.length - 4);
      if (aligned >= 0) (random() < 0.5 ? out.writeUInt32LE : out.writeUInt32BE).call(out, value >>> 0, aligned);
    }
  }
  return out;
}

export function runFuzz(options: FuzzOptions): FuzzResult {
  const random = rng(options.seed);
  const inputs = corpus();
  const result: FuzzResult = { cases: 0, decoded: 0, refused: {}, failures: [], slowestMs: 0 };
  const started = performance.now();
  for (let i = 0; i < options.cases; i++) {
    if (options.budgetMs !== undefined && performance.now() - started > options.budgetMs) break;
    const input = mutate(inputs[Math.floor(random() * inputs.length)]!, random);
    const t0 = performance.now();
    const outcome = fuzzOne(input, random);
    const elapsed = performance.now() - t0;
    result.cases++;
    result.slowestMs = Math.max(result.slowestMs, elapsed);
    if (elapsed > (options.maxCaseMs ?? 5000)) result.failures.push(`case ${i} (seed ${options.seed}) took ${elapsed.toFixed(0)} ms`);
    for (const o of outcome) {
      if (o === 'decoded') result.decoded++;
      else if (o.startsWith('refused:')) result.refused[o.slice(8)] = (result.refused[o.slice(8)] ?? 0) + 1;
      else result.failures.push(`case ${i} (seed ${options.seed}): ${o}`);
    }
    if (options.log && (i + 1) % 5000 === 0) options.log(`${i + 1} cases, ${result.decoded} decoded, ${result.failures.length} failures`);
  }
  return result;
}

/** Outcomes: 'decoded', 'refused:<code>', or a description of a failure. */
function fuzzOne(input: Buffer, random: () => number): string[] {
  const outcomes: string[] = [];
  const attempt = (what: string, fn: () => unknown): boolean => {
    try {
      fn();
      return true;
    } catch (error) {
      outcomes.push(error instanceof SigningError && error.code in SIGNING_ERRORS ? `refused:${error.code}` : `${what} threw ${error instanceof Error ? error.stack : String(error)}`);
      return false;
    }
  };
  let catalog: ReturnType<typeof parseAssetCatalog> | undefined;
  if (!attempt('parseAssetCatalog', () => { catalog = parseAssetCatalog(input); })) return outcomes;
  const renditions = catalog!.renditions;
  for (let k = 0; k < Math.min(RENDITIONS_PER_CASE, renditions.length); k++) {
    const r = renditions[Math.floor(random() * renditions.length)]!;
    if (attempt('renditionPng', () => renditionPng(r.csi))) outcomes.push('decoded');
  }
  attempt('readCatalogAppIcon', () => readCatalogAppIcon(input));
  return outcomes;
}

if (import.meta.main) {
  const args = process.argv.slice(2);
  const value = (flag: string, fallback: number): number => (args.includes(flag) ? Number(args[args.indexOf(flag) + 1]) : fallback);
  const result = runFuzz({ cases: value('--cases', args.includes('--long') ? 200_000 : 2000), seed: value('--seed', Date.now() & 0xffffffff), log: console.log });
  console.log(JSON.stringify({ ...result, failures: result.failures.slice(0, 20), failureCount: result.failures.length }, null, 2));
  process.exit(result.failures.length === 0 ? 0 : 1);
}
