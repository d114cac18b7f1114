// Shared helpers for the Android signing tests: the AOSP test keys and apksig fixtures from
// ../shared/fixtures/android, signing into memory, and the apksigner oracle (Debian package).
import { execFile } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { signApk, type SignApkOptions, type SignApkResult } from '../../src/signing/android/index.ts';
import { loadIdentity, type Identity } from '../../src/signing/cms/index.ts';
import { MemorySink } from '../../src/signing/data-sink.ts';
import { BufferSource } from '../../src/signing/data-source.ts';
import { sharedFixture } from './fixtures.ts';

const run = promisify(execFile);

export const APKSIG_DIR = 'android/apksig';
export const KEYS_DIR = 'android/keys/apksig';

/** Absolute path of an apksig fixture, e.g. apksigFixture('golden/original.apk'). */
export function apksigFixture(relative: string): string {
  return sharedFixture(path.join(APKSIG_DIR, relative))!;
}

export function keyFile(name: string): string {
  return sharedFixture(path.join(KEYS_DIR, name))!;
}

/** Every .apk in an apksig fixture folder ('golden', 'signed', 'negative'). */
export function apksigFixtures(folder: string): string[] {
  const dir = sharedFixture(path.join(APKSIG_DIR, folder));
  if (dir === null || !existsSync(dir)) return [];
  return readdirSync(dir).filter((f) => f.endsWith('.apk')).sort().map((f) => path.join(dir, f));
}

/** An AOSP test key pair (unencrypted PKCS#8 + PEM certificate), e.g. 'rsa-2048' or 'ec-p256'. */
export async function testIdentity(name: string): Promise<Identity> {
  return loadIdentity(readFileSync(keyFile(`${name}.pk8`)), { certificate: readFileSync(keyFile(`${name}.x509.pem`)) });
}

export async function signBuffer(input: Buffer, options: SignApkOptions): Promise<{ output: Buffer; result: SignApkResult }> {
  const sink = new MemorySink();
  const result = await signApk(new BufferSource(input), sink, options);
  return { output: sink.toBuffer(), result };
}

let apksignerPresent: boolean | null = null;

/** `{ skip }` for node:test when Debian's apksigner is not installed. */
export function needsApksigner(): { skip: string | false } {
  if (apksignerPresent === null) apksignerPresent = existsSync('/usr/bin/apksigner');
  return apksignerPresent ? { skip: false } : { skip: 'apksigner (Debian package apksigner) is not installed' };
}

export interface ApksignerRun {
  code: number;
  stdout: string;
  stderr: string;
}

export async function apksigner(args: string[]): Promise<ApksignerRun> {
  try {
    const { stdout, stderr } = await run('apksigner', args, { maxBuffer: 16 * 1024 * 1024, timeout: 120_000 });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failure = error as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof failure.code === 'number' ? failure.code : 1, stdout: failure.stdout ?? '', stderr: failure.stderr ?? '' };
  }
}

/** Runs `fn` over items with at most `limit` in flight (the machine has two cores). */
export async function mapLimit<T, R>(items: readonly T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await fn(items[index]!);
    }
  }));
  return results;
}
