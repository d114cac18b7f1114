// SignerPool: the one signing pipeline on worker threads, started with serialisable settings
// (here: a CA directory's bytes completing a leaf-only identity's chain), receiving requests
// as plain data and reading the input (a file opened by the thread, any other source through a
// message port); a failure crosses back as the same catalogue error.
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { SignerPool } from '../../src/services/signer-pool.ts';
import { readCaDirectory } from '../../src/signing/cms/index.ts';
import { BufferSource, FileSource } from '../../src/signing/data-source.ts';
import { SigningError } from '../../src/signing/errors.ts';
import { apksigFixture } from '../support/android-signing.ts';
import { needsSharedFixtures, sharedFixture, testOutputDir } from '../support/fixtures.ts';
import { generatedApp } from '../support/ios-app.ts';
import { needsToolchain } from '../support/macho-build.ts';
import { testPki } from '../support/pki.ts';

const dir = testOutputDir('services', 'signer-pool');
mkdirSync(dir, { recursive: true });

describe('SignerPool', () => {
  const pools: SignerPool[] = [];
  const sources: FileSource[] = [];
  after(() => Promise.all([...pools.map((p) => p.close()), ...sources.map((s) => s.close())]));
  /** The input as the worker hands it over: a DataSource the pool's thread reads through a port. */
  const open = async (file: string) => {
    const source = await FileSource.open(file);
    sources.push(source);
    return source;
  };
  const signal = () => new AbortController().signal;

  it('signs an APK on a thread and rebuilds a thread\'s catalogue error', needsSharedFixtures(), async () => {
    const pool = new SignerPool({ threads: 1 });
    pools.push(pool);
    const keystore = readFileSync(sharedFixture('android/keys/jks-js/java11/keystore/RSA_2048_keystore.jks')!);
    const summary = await pool.run({ platform: 'android', keystore, password: 'password' }, await open(apksigFixture('golden/original.apk')), path.join(dir, 'ok.apk'), signal());
    assert.equal(summary.platform, 'android');
    assert.deepEqual(summary.verification.slice(0, 3), ['v1', 'v2', 'v3']);
    // A source that is not a file (S3's range reads in the service) is read through a message
    // port; the output is the same bytes.
    const viaPort = await pool.run({ platform: 'android', keystore, password: 'password' }, new BufferSource(readFileSync(apksigFixture('golden/original.apk'))), path.join(dir, 'port.apk'), signal());
    assert.deepEqual(viaPort, summary);
    assert.equal(summary.app.bundleId, 'android.appsecurity.cts.tinyapp');
    // The service's pool does not read the APK's identity back (the task has it from its upload).
    const undescribed = new SignerPool({ threads: 1, describeApp: false });
    pools.push(undescribed);
    const bare = await undescribed.run({ platform: 'android', keystore, password: 'password' }, await open(apksigFixture('golden/original.apk')), path.join(dir, 'undescribed.apk'), signal());
    assert.deepEqual(bare.app, { bundleId: null, name: null, version: null, build: null });
    assert.deepEqual(bare.verification, summary.verification);
    assert.ok(readFileSync(path.join(dir, 'port.apk')).equals(readFileSync(path.join(dir, 'ok.apk'))));
    // A read failing where the package is stored fails the run with that error and its code.
    const reset = Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' });
    const failing = { size: 1_000_000, read: async () => Promise.reject(reset), close: async () => {} };
    await assert.rejects(pool.run({ platform: 'android', keystore, password: 'password' }, failing, path.join(dir, 'reset.apk'), signal()), (e: unknown) => e === reset);
    await assert.rejects(pool.run({ platform: 'android', keystore, password: 'wrong' }, await open(apksigFixture('golden/original.apk')), path.join(dir, 'bad.apk'), signal()), (e: unknown) => e instanceof SigningError && e.code === 'keystore_password_incorrect');
  });

  it('completes a leaf-only chain from the CA certificates it was started with', needsToolchain(), async () => {
    const pki = testPki();
    const app = generatedApp('signer-pool');
    const request = { platform: 'ios' as const, identity: { p12: pki.p12(pki.leaf, { password: 'pw' }), password: 'pw' }, profiles: [{ id: 'prf_1', bytes: pki.mobileprovision({ bundleId: '*' }) }] };
    const bare = new SignerPool({ threads: 1 });
    const configured = new SignerPool({ threads: 1, settings: { caCertificates: await readCaDirectory(pki.caDir) } });
    pools.push(bare, configured);
    await assert.rejects(bare.run(request, await open(app.path), path.join(dir, 'bare.ipa'), signal()), (e: unknown) => e instanceof SigningError && e.code === 'certificate_chain_incomplete' && /Signet Test WWDR/.test(e.message));
    const summary = await configured.run(request, await open(app.path), path.join(dir, 'configured.ipa'), signal());
    assert.deepEqual(summary.identity.chain.length, 2);
    assert.ok(summary.bundles.every((b) => b.profile.id === 'prf_1'));
  });
});
