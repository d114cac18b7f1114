// `signet sign` and `signet verify` on .ipa files, as a user runs them: p12 + profiles (one
// pinned to the extension with BUNDLE_ID=FILE), overrides, JSON verification, exit codes, and a
// refusal that leaves no output behind.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { before, describe, it } from 'node:test';
import { repoRoot, testOutputDir } from '../../../support/fixtures.ts';
import { generatedApp, type GeneratedApp } from '../../../support/ios-app.ts';
import { needsToolchain } from '../../../support/macho-build.ts';
import { testPki } from '../../../support/pki.ts';

const dir = testOutputDir('ios-cli');
let app: GeneratedApp;

function signet(...args: string[]): { status: number | null; stdout: string; stderr: string } {
  return spawnSync(process.execPath, [path.join(repoRoot, 'src/main/cli.ts'), ...args], { encoding: 'utf8' });
}

describe('signet sign / verify with an .ipa', needsToolchain(), () => {
  before(() => {
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    app = generatedApp('cli-app');
    const pki = testPki();
    writeFileSync(path.join(dir, 'dist.p12'), pki.p12(pki.leaf, { password: 'pw', includeChain: true }));
    writeFileSync(path.join(dir, 'app.mobileprovision'), pki.mobileprovision({ bundleId: 'com.example.cli' }));
    writeFileSync(path.join(dir, 'widget.mobileprovision'), pki.mobileprovision({ bundleId: 'com.example.cli.widget' }));
  });

  it('signs with overrides and a pinned extension profile, then verifies (text and JSON)', () => {
    const out = path.join(dir, 'signed.ipa');
    const sign = signet('sign', app.path, '-o', out, '--p12', path.join(dir, 'dist.p12'), '--password', 'pw',
      '--profile', path.join(dir, 'app.mobileprovision'), '--profile', `com.example.cli.widget=${path.join(dir, 'widget.mobileprovision')}`,
      '--bundle-id', 'com.example.cli', '--name', 'CLI App', '--version', '3.0');
    assert.equal(sign.status, 0, sign.stderr);
    assert.match(sign.stdout, /^Signed .*signed\.ipa \(com\.example\.cli 3\.0; 3 bundle\(s\), 4 Mach-O file\(s\)\)/);
    const verify = signet('verify', out);
    assert.equal(verify.status, 0, verify.stdout + verify.stderr);
    assert.match(verify.stdout, /^Verifies\nApp: com\.example\.cli 3\.0 \(7\) "CLI App"/);
    const json = signet('verify', out, '--json');
    const report = JSON.parse(json.stdout);
    assert.equal(report.platform, 'ios');
    assert.equal(report.verified, true);
    assert.deepEqual(report.bundles.map((b: { bundleId: string }) => b.bundleId), ['com.signet.kit', 'com.example.cli.widget', 'com.example.cli']);
  });

  it('verify exits 1 on an unsigned app; sign refuses an uncovered bundle id and leaves no output', () => {
    const verify = signet('verify', app.path);
    assert.equal(verify.status, 1);
    assert.match(verify.stdout, /^DOES NOT VERIFY/);
    const out = path.join(dir, 'refused.ipa');
    const sign = signet('sign', app.path, '-o', out, '--p12', path.join(dir, 'dist.p12'), '--password', 'pw', '--profile', path.join(dir, 'app.mobileprovision'));
    assert.equal(sign.status, 1);
    assert.match(sign.stderr, /No provisioning profile covers "com\.signet\.generated\.widget".*\(bundle_id_mismatch\)/);
    assert.equal(existsSync(out), false);
  });
});
