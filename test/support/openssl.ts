// Runs the openssl CLI as an external oracle (CMS verify/sign, asn1parse) on scratch files under
// test-output/. Owned by the CMS helper; other suites may use it.
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { testOutputDir } from './fixtures.ts';

let counter = 0;

/** Writes bytes to a fresh scratch file and returns its path. */
export function scratchFile(name: string, data: Buffer | string): string {
  const dir = testOutputDir('openssl', String(process.pid));
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `${++counter}-${name}`);
  writeFileSync(file, data);
  return file;
}

export interface OpensslResult {
  status: number;
  stdout: Buffer;
  stderr: string;
}

export function openssl(args: string[], input?: Buffer): OpensslResult {
  const result = spawnSync('openssl', args, input === undefined ? {} : { input });
  if (result.error) throw result.error;
  return { status: result.status ?? -1, stdout: result.stdout, stderr: result.stderr.toString() };
}

/** `openssl cms -verify` on DER; `content` for detached signatures; `caPem` null for -noverify. */
export function opensslCmsVerify(cms: Buffer, options: { content?: Buffer; caPem?: string | null }): OpensslResult {
  const args = ['cms', '-verify', '-binary', '-inform', 'DER', '-in', scratchFile('sig.der', cms), '-out', scratchFile('out.bin', '')];
  if (options.content !== undefined) args.push('-content', scratchFile('content.bin', options.content));
  if (options.caPem === null || options.caPem === undefined) args.push('-noverify');
  else args.push('-CAfile', scratchFile('ca.pem', options.caPem), '-purpose', 'any');
  return openssl(args);
}

/** `openssl cms -sign`, DER out; detached unless `attached`. */
export function opensslCmsSign(content: Buffer, signer: { certificatePem: string; privateKeyPem: string }, options: { attached?: boolean; noattr?: boolean; md?: string; certfilePem?: string } = {}): Buffer {
  const out = scratchFile('signed.der', '');
  const args = ['cms', '-sign', '-binary', '-outform', 'DER', '-in', scratchFile('content.bin', content), '-out', out, '-md', options.md ?? 'sha256'];
  args.push('-signer', scratchFile('signer.pem', signer.certificatePem), '-inkey', scratchFile('key.pem', signer.privateKeyPem));
  if (options.attached) args.push('-nodetach');
  if (options.noattr) args.push('-noattr');
  if (options.certfilePem) args.push('-certfile', scratchFile('chain.pem', options.certfilePem));
  const result = openssl(args);
  if (result.status !== 0) throw new Error(`openssl cms -sign failed: ${result.stderr}`);
  return readFileSync(out);
}
