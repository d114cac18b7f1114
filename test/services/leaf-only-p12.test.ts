// Issue 18: a .p12 holding only the leaf certificate and its key (what Keychain Access exports
// unless the intermediates are added), generated here with `openssl pkcs12 -export -in leaf.pem
// -inkey leaf.key`, plus an in-house profile. With the test CA given through the CA-directory
// setting (SIGNET_APPLE_CA_DIR; real Apple leaf keys are not available, so the test PKI's root and
// WWDR-like intermediate stand in for Apple's), the enterprise task succeeds through the API and
// `signet sign` and `signet codesign` succeed, and their outputs pass an independent strict verifier: Python extracts
// each code signature and `openssl cms -verify` checks it with the test root as the only trust
// anchor (so the CMS must carry the completed chain). Without the setting, both fail with
// certificate_chain_incomplete naming the missing issuer.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { ConfigError } from '../../src/config.ts';
import { loadIdentity } from '../../src/signing/cms/index.ts';
import { BufferSource } from '../../src/signing/data-source.ts';
import { ZipReader } from '../../src/signing/zip/index.ts';
import { Api } from '../support/api-client.ts';
import { repoRoot, testOutputDir } from '../support/fixtures.ts';
import { generatedApp, opensslVerifyChain, type GeneratedApp } from '../support/ios-app.ts';
import { needsToolchain } from '../support/macho-build.ts';
import { testPki } from '../support/pki.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { strictIpaCheck } from '../support/strict-ipa.ts';

const dir = testOutputDir('leaf-only-p12');
const MISSING_ISSUER = /cannot be completed: its issuer "Signet Test WWDR" \([^)]*CN=Signet Test WWDR[^)]*\)/;

/** `openssl pkcs12 -export -in leaf.pem -inkey leaf.key`: the leaf and its key, no chain. */
function leafOnlyP12(): Buffer {
  const pki = testPki();
  mkdirSync(dir, { recursive: true });
  const leafPem = path.join(dir, 'leaf.pem');
  const leafKey = path.join(dir, 'leaf.key');
  const out = path.join(dir, 'leaf-only.p12');
  writeFileSync(leafPem, pki.leaf.certificatePem);
  writeFileSync(leafKey, pki.leaf.privateKeyPem);
  const run = spawnSync('openssl', ['pkcs12', '-export', '-in', leafPem, '-inkey', leafKey, '-out', out, '-passout', 'pass:pw'], { encoding: 'utf8' });
  assert.equal(run.status, 0, run.stderr);
  return readFileSync(out);
}

async function runTask(api: Api, ipa: Buffer, p12: Buffer, profile: Buffer): Promise<any> {
  const certificate = await api.form('/v1/certificates', {
    kind: 'ios_enterprise',
    password: 'pw',
    file: { name: 'leaf-only.p12', data: p12 },
    profile: { name: 'inhouse.mobileprovision', data: profile },
  });
  assert.equal(certificate.status, 200, JSON.stringify(certificate.body));
  const upload = await api.upload('app.ipa', ipa);
  assert.equal(upload.status, 200, JSON.stringify(upload.body));
  const created = await api.post('/v1/tasks/create', { file_key: upload.body.data.file_key, cert_type: 'enterprise', certificate_id: certificate.body.data.id });
  assert.equal(created.status, 200, JSON.stringify(created.body));
  const deadline = Date.now() + 120_000;
  for (;;) {
    const task = (await api.get(`/v1/tasks/${created.body.data.task_id}`)).body.data;
    if (task.status === 'succeeded' || task.status === 'failed') return task;
    assert.ok(Date.now() < deadline, `task stuck in ${task.status}`);
    await sleep(100);
  }
}

function signet(args: string[], env: Record<string, string> = {}) {
  return spawnSync(path.join(repoRoot, 'bin/signet'), args, { cwd: repoRoot, encoding: 'utf8', env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env } });
}

describe('a leaf-only .p12 signs with its chain completed from the CA directory', needsToolchain(), () => {
  const pki = testPki();
  let app: GeneratedApp;
  let p12: Buffer;
  let profile: Buffer;

  before(async () => {
    app = generatedApp('leaf-only');
    p12 = leafOnlyP12();
    profile = pki.mobileprovision({ bundleId: '*', name: 'Signet in-house (wildcard)' });
    writeFileSync(path.join(dir, 'inhouse.mobileprovision'), profile);
    writeFileSync(path.join(dir, 'app.ipa'), app.bytes);
  });

  it('the .p12 really holds the leaf alone', async () => {
    const identity = await loadIdentity(p12, { password: 'pw' });
    assert.ok(identity.certificate.equals(pki.leaf.certificate));
    assert.deepEqual(identity.chain, []);
  });

  describe('through the API', () => {
    let withCa: TestServer;
    let withoutCa: TestServer;
    before(async () => {
      withCa = await startTestServer({ name: 'leaf-only-ca', env: { SIGNET_APPLE_CA_DIR: pki.caDir } });
      withoutCa = await startTestServer({ name: 'leaf-only-no-ca' });
    });
    after(async () => {
      await withCa?.close();
      await withoutCa?.close();
    });

    it('the enterprise task succeeds and its output passes openssl cms -verify to the root', async () => {
      const api = new Api(withCa.url, withCa.key);
      const task = await runTask(api, app.bytes, p12, profile);
      assert.equal(task.status, 'succeeded', JSON.stringify(task.error));
      const download = await fetch(`${withCa.url}/v1/tasks/${task.task_id}/artifact`, { headers: { authorization: `Bearer ${withCa.key}` } });
      assert.equal(download.status, 200);
      const file = path.join(dir, 'api-signed.ipa');
      writeFileSync(file, Buffer.from(await download.arrayBuffer()));
      const strict = strictIpaCheck(file, pki.root.certificatePem, 'leaf-only-api');
      assert.deepEqual(strict.problems, []);
      assert.ok(strict.bundles.length >= 1);
    });

    it('without the CA directory the task fails naming the missing issuer', async () => {
      const api = new Api(withoutCa.url, withoutCa.key);
      const task = await runTask(api, app.bytes, p12, profile);
      assert.equal(task.status, 'failed');
      assert.equal(task.error.code, 'certificate_chain_incomplete');
      assert.match(task.error.message, MISSING_ISSUER);
    });
  });

  it('`signet sign` with SIGNET_APPLE_CA_DIR signs, and the output passes openssl cms -verify to the root', () => {
    const out = path.join(dir, 'cli-signed.ipa');
    rmSync(out, { force: true });
    const run = signet(['sign', path.join(dir, 'app.ipa'), '-o', out, '--p12', path.join(dir, 'leaf-only.p12'), '--password', 'pw', '--profile', path.join(dir, 'inhouse.mobileprovision')], { SIGNET_APPLE_CA_DIR: pki.caDir });
    assert.equal(run.status, 0, run.stderr);
    assert.match(run.stdout, /^Signed /);
    const strict = strictIpaCheck(out, pki.root.certificatePem, 'leaf-only-cli');
    assert.deepEqual(strict.problems, []);
  });

  it('`signet codesign` with SIGNET_APPLE_CA_DIR signs a Mach-O whose CMS chains to the root; without it, the issuer is named', async () => {
    const zip = await ZipReader.open(new BufferSource(app.bytes));
    const name = app.machO.find((n) => n.endsWith('.app/Signet'))!;
    const binary = path.join(dir, 'Signet');
    writeFileSync(binary, await zip.readEntry(zip.getEntry(name)!));
    const out = path.join(dir, 'Signet.signed');
    const args = ['codesign', binary, '-o', out, '--p12', path.join(dir, 'leaf-only.p12'), '--password', 'pw', '--identifier', app.bundleId];
    const run = signet(args, { SIGNET_APPLE_CA_DIR: pki.caDir });
    assert.equal(run.status, 0, run.stderr);
    assert.deepEqual(opensslVerifyChain(readFileSync(out), pki.root.certificatePem, 'leaf-only-codesign'), []);
    const bare = signet(args);
    assert.notEqual(bare.status, 0);
    assert.match(bare.stderr, MISSING_ISSUER);
  });

  it('`signet sign` without it fails naming the missing issuer and writes nothing', () => {
    const out = path.join(dir, 'cli-unsigned.ipa');
    rmSync(out, { force: true });
    const run = signet(['sign', path.join(dir, 'app.ipa'), '-o', out, '--p12', path.join(dir, 'leaf-only.p12'), '--password', 'pw', '--profile', path.join(dir, 'inhouse.mobileprovision')]);
    assert.notEqual(run.status, 0);
    assert.match(run.stderr, MISSING_ISSUER);
    assert.deepEqual(readdirSync(dir).filter((n) => n.includes('cli-unsigned')), [], 'no output and no partial file left behind');
  });
});

it('a SIGNET_APPLE_CA_DIR that cannot be read stops the service at start, naming the setting', async () => {
  await assert.rejects(startTestServer({ name: 'leaf-only-bad-ca', env: { SIGNET_APPLE_CA_DIR: path.join(dir, 'no-such-folder') } }), (error: unknown) => {
    assert.ok(error instanceof ConfigError);
    assert.match(error.message, /SIGNET_APPLE_CA_DIR .*no-such-folder.* cannot be read/);
    return true;
  });
});
