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

  it('a framework whose executable is missing: sign refuses (ipa_invalid), verify exits 1 naming the file', () => {
    const missing = 'Payload/Signet.app/Frameworks/Kit.framework/Kit';
    const broken = generatedApp('cli-no-kit-binary', { omit: ['Frameworks/Kit.framework/Kit'] });
    const out = path.join(dir, 'no-kit.ipa');
    const sign = signet('sign', broken.path, '-o', out, '--p12', path.join(dir, 'dist.p12'), '--password', 'pw',
      '--profile', path.join(dir, 'app.mobileprovision'), '--profile', `com.example.cli.widget=${path.join(dir, 'widget.mobileprovision')}`, '--bundle-id', 'com.example.cli');
    assert.equal(sign.status, 1);
    assert.match(sign.stderr, new RegExp(`Frameworks/Kit\\.framework/Info\\.plist names the executable "Kit": ${missing.replaceAll('.', '\\.')}, which is not in the bundle.*\\(ipa_invalid\\)`));
    assert.equal(existsSync(out), false);

    // A correctly signed app from which Info-ZIP then deletes the framework's binary.
    const signed = path.join(dir, 'signed-then-broken.ipa');
    const ok = signet('sign', app.path, '-o', signed, '--p12', path.join(dir, 'dist.p12'), '--password', 'pw',
      '--profile', path.join(dir, 'app.mobileprovision'), '--profile', `com.example.cli.widget=${path.join(dir, 'widget.mobileprovision')}`, '--bundle-id', 'com.example.cli');
    assert.equal(ok.status, 0, ok.stderr);
    assert.equal(spawnSync('zip', ['-q', '-d', signed, missing]).status, 0);
    const verify = signet('verify', signed);
    assert.equal(verify.status, 1);
    assert.match(verify.stdout, /^DOES NOT VERIFY\n/);
    assert.ok(verify.stdout.includes(`ERROR: Payload/Signet.app/Frameworks/Kit.framework/Info.plist names the executable "Kit": ${missing}, which is not in the bundle`), verify.stdout);
    const json = JSON.parse(signet('verify', signed, '--json').stdout);
    assert.equal(json.verified, false);
    assert.ok(json.problems.some((p: string) => p.includes(missing)));
  });
});
