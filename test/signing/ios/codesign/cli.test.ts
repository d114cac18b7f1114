// `signet codesign` and the Mach-O branch of `signet verify`: once end to end through the real
// CLI (spawned), the rest in-process on the command's own registration (spawning the whole CLI
// costs seconds per call on the shared machine).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { Command, CommanderError } from 'commander';
import { register, verifyMachOFile } from '../../../../src/main/commands/codesign.ts';
import { needsSharedFixtures, repoRoot, sharedFixture, testOutputDir } from '../../../support/fixtures.ts';
import { testPki } from '../../../support/pki.ts';

const run = (...args: string[]) => spawnSync(process.execPath, [path.join(repoRoot, 'src/main/cli.ts'), ...args], { encoding: 'utf8', cwd: repoRoot });

/** Runs `signet codesign …` in-process; resolves with what it printed. */
async function codesign(...args: string[]): Promise<string> {
  const printed: string[] = [];
  const program = new Command('signet').exitOverride();
  register(program, { write: (text: string) => printed.push(text) });
  program.commands.forEach((c) => c.exitOverride().configureOutput({ writeErr: () => {} }));
  await program.parseAsync(['node', 'signet', 'codesign', ...args]);
  return printed.join('');
}

describe('signet codesign / verify', needsSharedFixtures(), () => {
  const dir = testOutputDir('ios-codesign-cli');
  mkdirSync(dir, { recursive: true });

  it('end to end: signs ad-hoc in place exactly as Apple codesign did; verify accepts it', () => {
    const target = path.join(dir, 'main');
    copyFileSync(sharedFixture('ios/macho/hqtsm-mach/macho/cli/dist/x86_64-arm64/u/main')!, target);
    const signed = run('codesign', target, '--adhoc');
    assert.equal(signed.status, 0, signed.stderr);
    assert.ok(readFileSync(target).equals(readFileSync(sharedFixture('ios/macho/hqtsm-mach/macho/cli/dist/x86_64-arm64/us/main')!)));
    const verified = run('verify', target);
    assert.equal(verified.status, 0, verified.stdout + verified.stderr);
    assert.match(verified.stdout, /^Verifies\n/);
  });

  it('signs with a .p12, entitlements and 16 KiB pages; the verify report shows them', async () => {
    const pki = testPki();
    const p12 = path.join(dir, 'identity.p12');
    writeFileSync(p12, pki.p12(pki.leaf, { password: 'pw', includeChain: true }));
    const entitlements = path.join(dir, 'entitlements.plist');
    writeFileSync(entitlements, '<?xml version="1.0" encoding="UTF-8"?>\n<plist version="1.0"><dict><key>get-task-allow</key><true/></dict></plist>\n');
    const out = path.join(dir, 'signed');
    const printed = await codesign(sharedFixture('ios/isign/Test.app/isignTestApp')!, '-o', out, '--p12', p12, '--password', 'pw', '--identifier', 'com.example.cli', '--entitlements', entitlements, '--page-size', '16384', '--json');
    assert.deepEqual((JSON.parse(printed) as { slices: Array<{ arch: string }> }).slices.map((s) => s.arch), ['armv7', 'arm64']);
    const result = await verifyMachOFile(out);
    assert.equal(result.verified, true, result.text);
    const report = result.json as { slices: Array<{ identifier: string; entitlements: Record<string, unknown>; codeDirectories: Array<{ pageSize: number; hashType: string }> }> };
    assert.deepEqual(report.slices.map((s) => s.identifier), ['com.example.cli', 'com.example.cli']);
    assert.deepEqual(report.slices[0]!.entitlements, { 'get-task-allow': true });
    assert.deepEqual(report.slices[0]!.codeDirectories.map((c) => [c.hashType, c.pageSize]), [['sha1', 16384], ['sha256', 16384]]);
    assert.match(result.text, /designated => identifier "com\.example\.cli"/);
  });

  it('refuses a bad password, missing flags and bad page sizes; reports a tampered file', async () => {
    const pki = testPki();
    const p12 = path.join(dir, 'identity2.p12');
    writeFileSync(p12, pki.p12(pki.leaf, { password: 'pw', includeChain: true }));
    const input = sharedFixture('ios/macho/zsign/demo1.dylib')!;
    await assert.rejects(codesign(input, '-o', path.join(dir, 'x'), '--p12', p12, '--password', 'nope'), /password/i);
    await assert.rejects(codesign(input), (error: unknown) => error instanceof CommanderError && /--adhoc or --p12/.test(error.message));
    await assert.rejects(codesign(input, '--adhoc', '--page-size', '8192'), (error: unknown) => error instanceof CommanderError && /4096 or 16384/.test(error.message));
    const tampered = path.join(dir, 'tampered');
    const bytes = Buffer.from(readFileSync(sharedFixture('ios/macho/hqtsm-mach/macho/cli/dist/arm64/us/main')!));
    bytes[5000] = bytes[5000]! ^ 1;
    writeFileSync(tampered, bytes);
    const result = await verifyMachOFile(tampered);
    assert.equal(result.verified, false);
    assert.match(result.text, /DOES NOT VERIFY[\s\S]*page 1 hash does not match/);
  });
});
