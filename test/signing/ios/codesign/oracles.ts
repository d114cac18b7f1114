// External oracles for signed Mach-O files: `openssl cms -verify` over each slice's CMS and
// primary CodeDirectory, and `llvm-objdump --macho --all-headers`.
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { codeSignatureCommand } from '../../../../src/signing/ios/macho/inspect.ts';
import { parseMachO } from '../../../../src/signing/ios/macho/parse.ts';
import { CSSLOT_CODEDIRECTORY, CSSLOT_SIGNATURESLOT } from '../../../../src/signing/ios/codesign/constants.ts';
import { parseSuperBlob } from '../../../../src/signing/ios/codesign/super-blob.ts';
import { testOutputDir } from '../../../support/fixtures.ts';

let counter = 0;

/** Runs `openssl cms -verify -binary -noverify` on every slice; returns the failures. */
export function opensslVerifySlices(bytes: Buffer): string[] {
  const dir = testOutputDir('ios-codesign', `cms-${process.pid}-${++counter}`);
  mkdirSync(dir, { recursive: true });
  const file = parseMachO(bytes);
  const failures: string[] = [];
  (file.kind === 'thin' ? [file.slice] : file.slices).forEach((slice, i) => {
    const cs = codeSignatureCommand(slice)!;
    const entries = parseSuperBlob(slice.data.subarray(cs.dataoff, cs.dataoff + cs.datasize));
    const cd = path.join(dir, `cd-${i}.bin`);
    const sig = path.join(dir, `sig-${i}.der`);
    writeFileSync(cd, entries.find((e) => e.type === CSSLOT_CODEDIRECTORY)!.blob);
    writeFileSync(sig, entries.find((e) => e.type === CSSLOT_SIGNATURESLOT)!.blob.subarray(8));
    const run = spawnSync('openssl', ['cms', '-verify', '-binary', '-inform', 'DER', '-in', sig, '-content', cd, '-noverify', '-out', '/dev/null'], { encoding: 'utf8' });
    if (run.status !== 0) failures.push(`slice ${i}: ${run.stderr.trim()}`);
  });
  return failures;
}

/** llvm-objdump's complaints (stderr) about a file, or '' when it reads cleanly. */
export function objdumpComplaints(bytes: Buffer): string {
  const dir = testOutputDir('ios-codesign', `objdump-${process.pid}`);
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `bin-${++counter}`);
  writeFileSync(file, bytes);
  const run = spawnSync('llvm-objdump', ['--macho', '--all-headers', '--arch=all', file], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  if (run.error) return `llvm-objdump could not run: ${run.error.message}`;
  return run.status === 0 ? run.stderr.trim() : `exit ${run.status}: ${run.stderr.trim()}`;
}

export const hasTool = (name: string): boolean => spawnSync('sh', ['-c', `command -v ${name}`]).status === 0;
