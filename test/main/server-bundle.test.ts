// bin/signet's bundle (scripts/build-server.ts): run only while every file it was built from is
// unchanged, taken by bin/signet instead of the sources when fresh, with every module URL in it
// (worker entries, data folders) pointing at something that exists, and signing both kinds of
// package with the engines' worker threads (a package above 16 MiB starts them).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createPrivateKey } from 'node:crypto';
import { createWriteStream, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { after, describe, it } from 'node:test';
import { pathToFileURL } from 'node:url';
import { pruneServerBuilds } from '../../scripts/build-server.ts';
import { currentServerBuild, freshServerBundle, SERVER_BUNDLE_DIR, SOURCES_FILE } from '../../scripts/server-bundle.mjs';
import { streamedApk } from '../support/app-packages.ts';
import { repoRoot, testOutputDir } from '../support/fixtures.ts';
import { generatedApp } from '../support/ios-app.ts';
import { needsToolchain } from '../support/macho-build.ts';
import { testPki } from '../support/pki.ts';

const NOT_BUILT = 'dist/server/ is absent or stale: `npm test` (or `npm run build:server`) builds it';

describe('freshServerBundle', () => {
  const root = mkdtempSync(path.join(tmpdir(), 'signet-bundle-'));
  after(() => rmSync(root, { recursive: true, force: true }));
  const rootUrl = pathToFileURL(`${root}/`);
  const source = path.join(root, 'src', 'a.ts');
  const record = (): void => {
    const stat = statSync(source);
    writeFileSync(path.join(root, SERVER_BUNDLE_DIR, SOURCES_FILE), JSON.stringify({ build: 'build-1', sources: { 'src/a.ts': [stat.size, stat.mtimeMs] } }));
  };
  mkdirSync(path.dirname(source), { recursive: true });
  mkdirSync(path.join(root, SERVER_BUNDLE_DIR), { recursive: true });

  it('gives the entry while the sources are as recorded, and null once one changes or goes', () => {
    writeFileSync(source, 'export const a = 1;\n');
    assert.equal(freshServerBundle(rootUrl), null, 'no record yet');
    record();
    assert.equal(freshServerBundle(rootUrl)?.href, new URL(`${SERVER_BUNDLE_DIR}build-1/cli.mjs`, rootUrl).href);
    writeFileSync(source, 'export const a = 22;\n');
    assert.equal(freshServerBundle(rootUrl), null, 'size changed');
    record();
    const { mtime } = statSync(source);
    utimesSync(source, mtime, new Date(mtime.getTime() + 5000));
    assert.equal(freshServerBundle(rootUrl), null, 'modification time changed');
    record();
    rmSync(source);
    assert.equal(freshServerBundle(rootUrl), null, 'source removed');
    writeFileSync(path.join(root, SERVER_BUNDLE_DIR, SOURCES_FILE), '{not json');
    assert.equal(freshServerBundle(rootUrl), null, 'unreadable record');
  });
});

describe('pruneServerBuilds', () => {
  it('keeps the new build and the one it replaces (a running server may import from it), and removes older ones', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'signet-builds-'));
    try {
      for (const name of ['build-a', 'build-b', 'build-c']) mkdirSync(path.join(dir, name));
      writeFileSync(path.join(dir, SOURCES_FILE), '{}');
      pruneServerBuilds(dir, ['build-c', 'build-b']);
      assert.deepEqual(readdirSync(dir).sort(), ['build-b', 'build-c', SOURCES_FILE]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('the built bundle', () => {
  const fresh = freshServerBundle(pathToFileURL(`${repoRoot}/`)) !== null;

  it('is what bin/signet runs: no TypeScript source of src/ is loaded', { skip: fresh ? false : NOT_BUILT }, () => {
    // A module hook that lists, at exit, every file URL the command resolved.
    const tracer = `data:text/javascript,${encodeURIComponent(`
import { registerHooks } from 'node:module';
const seen = [];
registerHooks({ resolve(specifier, context, next) { const r = next(specifier, context); if (r.url.startsWith('file:')) seen.push(r.url); return r; } });
process.on('exit', () => process.stderr.write('RESOLVED ' + seen.join(' ') + '\\n'));
`)}`;
    const result = spawnSync(process.execPath, ['--import', tracer, path.join(repoRoot, 'bin/signet'), 'sign', '--help'], { cwd: repoRoot, encoding: 'utf8' });
    assert.equal(result.status, 0, result.stderr);
    const resolved = (/^RESOLVED (.*)$/m.exec(result.stderr)?.[1] ?? '').split(' ');
    assert.ok(resolved.some((url) => url.endsWith(`/${SERVER_BUNDLE_DIR}${currentServerBuild(pathToFileURL(`${repoRoot}/`))!.build}/cli.mjs`)), resolved.join('\n'));
    assert.deepEqual(resolved.filter((url) => url.includes('/src/') && url.endsWith('.ts')), []);
  });

  it("points every module URL at a file or folder that exists (workers' entries, Apple's CAs, migrations)", { skip: fresh ? false : NOT_BUILT }, () => {
    const dir = path.join(repoRoot, SERVER_BUNDLE_DIR, currentServerBuild(pathToFileURL(`${repoRoot}/`))!.build);
    const urls = new Set<string>();
    for (const file of readdirSync(dir).filter((name) => name.endsWith('.mjs'))) {
      for (const [, href] of readFileSync(path.join(dir, file), 'utf8').matchAll(/new URL\("([^"]+)", import\.meta\.url\)/g)) urls.add(href!);
    }
    // The workers of both engines and of the service, and the data the bundled code reads.
    for (const expected of ['./scan-worker.mjs', './digest-worker.mjs', './macho-worker.mjs', './signer-thread.mjs', '../../../src/signing/cms/apple-ca/', '../../../src/db/migrations/']) {
      assert.ok(urls.has(expected), `${expected} among ${[...urls].join(', ')}`);
    }
    // console/dist is built by `npm ci` like this bundle; every other target must exist.
    for (const href of urls) if (!href.includes('console/dist')) assert.ok(existsSync(new URL(href, pathToFileURL(dir + path.sep))), href);
  });

  it("signs and verifies an APK and an .ipa large enough for the engines' threads", { skip: fresh ? needsToolchain().skip : NOT_BUILT }, async () => {
    const dir = testOutputDir('main', 'server-bundle');
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    const signet = (...args: string[]) => spawnSync(path.join(repoRoot, 'bin/signet'), args, { cwd: repoRoot, encoding: 'utf8' });
    const pki = testPki();

    // Android: 20 MiB, over the v1 digest thread's 16 MiB (android/sign/digest-worker.ts).
    const apk = path.join(dir, 'big.apk');
    const { stream } = streamedApk(20 * 1024 * 1024);
    await pipeline(stream(), createWriteStream(apk));
    writeFileSync(path.join(dir, 'key.pk8'), createPrivateKey(pki.androidRsa.privateKeyPem).export({ type: 'pkcs8', format: 'der' }));
    writeFileSync(path.join(dir, 'cert.pem'), pki.androidRsa.certificatePem);
    const signedApk = signet('sign', apk, '-o', path.join(dir, 'signed.apk'), '--keystore', path.join(dir, 'key.pk8'), '--cert', path.join(dir, 'cert.pem'));
    assert.equal(signedApk.status, 0, signedApk.stderr);
    assert.equal(signet('verify', path.join(dir, 'signed.apk')).status, 0);

    // iOS: 20 MiB of resources, over the scan thread's 16 MiB (ios/resign/scan-worker.ts).
    const app = generatedApp('server-bundle', { bundleId: 'com.example.bundle', fillerBytes: 20 * 1024 * 1024 });
    writeFileSync(path.join(dir, 'dist.p12'), pki.p12(pki.leaf, { password: 'pw', includeChain: true }));
    writeFileSync(path.join(dir, 'app.mobileprovision'), pki.mobileprovision({ bundleId: app.bundleId }));
    writeFileSync(path.join(dir, 'widget.mobileprovision'), pki.mobileprovision({ bundleId: app.extensionId }));
    const profiles = ['--profile', path.join(dir, 'app.mobileprovision'), '--profile', `${app.extensionId}=${path.join(dir, 'widget.mobileprovision')}`];
    const signedIpa = signet('sign', app.path, '-o', path.join(dir, 'signed.ipa'), '--p12', path.join(dir, 'dist.p12'), '--password', 'pw', ...profiles);
    assert.equal(signedIpa.status, 0, signedIpa.stderr);
    assert.equal(signet('verify', path.join(dir, 'signed.ipa')).status, 0);
  });
});
