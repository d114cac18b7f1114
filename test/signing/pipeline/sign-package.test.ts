// signPackage, the one sign-then-verify pipeline: its summary for each platform, requests that
// survive structured cloning (what the SignerPool's threads receive), the chain completed from
// the settings' CA certificates, profiles pinned to a bundle versus matched by App ID, and no
// output left behind by signPackageFile on failure.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { describeCertificate, readCaDirectory } from '../../../src/signing/cms/index.ts';
import { BufferSource } from '../../../src/signing/data-source.ts';
import { SigningError } from '../../../src/signing/errors.ts';
import { MemoryOutput, signPackage, signPackageFile, type SignPackageRequest } from '../../../src/signing/pipeline/index.ts';
import { apksigFixture } from '../../support/android-signing.ts';
import { needsSharedFixtures, sharedFixture, testOutputDir } from '../../support/fixtures.ts';
import { generatedApp } from '../../support/ios-app.ts';
import { needsToolchain } from '../../support/macho-build.ts';
import { testPki } from '../../support/pki.ts';

const dir = testOutputDir('signing', 'pipeline');

describe('signPackage for an APK', needsSharedFixtures(), () => {
  const keystore = () => readFileSync(sharedFixture('android/keys/jks-js/java11/keystore/RSA_2048_keystore.jks')!);

  it('signs, verifies and summarises, from a request that went through structured cloning', async () => {
    const request: SignPackageRequest = structuredClone({ platform: 'android', keystore: keystore(), password: 'password', schemes: { v1: false, v2: true, v3: true } });
    assert.ok(!Buffer.isBuffer((request as { keystore: unknown }).keystore), 'cloning delivers a plain Uint8Array');
    const output = new MemoryOutput();
    const summary = await signPackage(request, new BufferSource(readFileSync(apksigFixture('golden/original.apk'))), output);
    assert.equal(summary.platform, 'android');
    assert.deepEqual(summary.app, { bundleId: 'android.appsecurity.cts.tinyapp', name: 'Tiny App for CTS', version: '1.0', build: '10' });
    assert.deepEqual(summary.verification.slice(0, 2), ['v2', 'v3']);
    // Without v1 the output is verified from API 24 on (FIRST_V2_SDK), whatever its minSdk.
    assert.equal(summary.android?.verifiedFromSdk, Math.max(24, summary.android!.minSdk));
    assert.equal(summary.identity.sha256.toLowerCase(), summary.android?.certificate.sha256.toLowerCase());
    assert.ok(output.toBuffer().length > 0);
  });

  it('a wrong password keeps its catalogue code and signPackageFile leaves nothing behind', async () => {
    mkdirSync(dir, { recursive: true });
    const out = path.join(dir, 'wrong-password.apk');
    await assert.rejects(
      signPackageFile({ platform: 'android', keystore: keystore(), password: 'wrong' }, apksigFixture('golden/original.apk'), out),
      (e: unknown) => e instanceof SigningError && e.code === 'keystore_password_incorrect',
    );
    assert.equal(existsSync(out), false);
    assert.deepEqual(readdirSync(dir).filter((n) => n.includes('wrong-password')), []);
  });
});

describe('signPackage for an .ipa', needsToolchain(), () => {
  const pki = testPki();

  it('completes a leaf-only identity\'s chain from the settings, pins profiles and reports which signed what', async () => {
    const app = generatedApp('pipeline');
    const leafOnly = pki.p12(pki.leaf, { password: 'pw' });
    const wildcard = pki.mobileprovision({ bundleId: '*', name: 'wildcard' });
    const widget = pki.mobileprovision({ bundleId: app.extensionId, name: 'widget only' });
    const request: SignPackageRequest = {
      platform: 'ios',
      identity: { p12: leafOnly, password: 'pw' },
      profiles: [
        { id: 'prf_wild', bytes: wildcard },
        // Pinned to the main app only: an explicit profile for the widget would otherwise win there.
        { id: 'prf_widget', bytes: widget, pinnedTo: [app.bundleId], matchOthers: false },
      ],
    };
    const caCertificates = await readCaDirectory(pki.caDir);
    const without = signPackage(request, new BufferSource(app.bytes), new MemoryOutput());
    await assert.rejects(without, (e: unknown) => e instanceof SigningError && e.code === 'certificate_chain_incomplete' && /Signet Test WWDR/.test(e.message));

    // The widget-only profile cannot sign the main app: pinning it there is refused by the engine.
    await assert.rejects(signPackage(request, new BufferSource(app.bytes), new MemoryOutput(), { caCertificates }), (e: unknown) => e instanceof SigningError && e.code === 'bundle_id_mismatch');

    const pinnedRight: SignPackageRequest = { ...request, profiles: [{ id: 'prf_wild', bytes: wildcard }, { id: 'prf_widget', bytes: widget, pinnedTo: [app.extensionId], matchOthers: false }] };
    const summary = await signPackage(pinnedRight, new BufferSource(app.bytes), new MemoryOutput(), { caCertificates });
    assert.equal(summary.platform, 'ios');
    assert.deepEqual(summary.identity.chain, [pki.intermediate, pki.root].map((c) => describeCertificate(c.certificate).subject));
    const byBundle = Object.fromEntries(summary.bundles.map((b) => [b.bundleId, b.profile.id]));
    assert.deepEqual(byBundle, { [app.bundleId]: 'prf_wild', [app.extensionId]: 'prf_widget' });
    assert.equal(summary.verification.length, summary.ios?.bundles.length);
  });
});
