// Certificate rotation end to end, with the production signers: live install links for Android
// and iOS releases signed with one certificate; a dry run lists them and changes nothing; the
// rotation re-signs each as an ordinary task and every link, at its unchanged URL, then serves a
// build signed with the new certificate that Signet's verifiers and independent ones (apksigner,
// a strict Python + openssl check of the iOS code signatures) accept. A disabled link and a
// release of another certificate are left alone.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { verifyApk } from '../../src/signing/android/index.ts';
import { BufferSource } from '../../src/signing/data-source.ts';
import { allProblems, verifyIpa } from '../../src/signing/ios/verify-ipa/index.ts';
import { Api } from '../support/api-client.ts';
import { tinyApk } from '../support/app-packages.ts';
import { testOutputDir } from '../support/fixtures.ts';
import { generatedApp } from '../support/ios-app.ts';
import { needsToolchain } from '../support/macho-build.ts';
import { issueTestIdentity, testPki } from '../support/pki.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { strictIpaCheck } from '../support/strict-ipa.ts';

const apksignerPresent = spawnSync('apksigner', ['--version'], { encoding: 'utf8' }).status === 0;

describe('certificate rotation', { skip: !apksignerPresent ? 'apksigner is not installed' : needsToolchain().skip }, () => {
  let server: TestServer;
  let api: Api;
  const out = testOutputDir('rotation-e2e');

  before(async () => {
    mkdirSync(out, { recursive: true });
    server = await startTestServer({ name: 'rotation' });
    api = new Api(server.url, server.key);
  });
  after(async () => {
    await server?.close();
  });

  async function certificate(fields: Record<string, string | { name: string; data: Buffer }>): Promise<any> {
    const response = await api.form('/v1/certificates', fields);
    assert.equal(response.status, 200, JSON.stringify(response.body));
    return response.body.data;
  }

  async function finished(taskId: string): Promise<any> {
    const deadline = Date.now() + 180_000;
    for (;;) {
      const task = (await api.get(`/v1/tasks/${taskId}`)).body.data;
      if (task.status === 'succeeded' || task.status === 'failed') return task;
      assert.ok(Date.now() < deadline, `task ${taskId} stuck in ${task.status}`);
      await sleep(100);
    }
  }

  async function release(fileName: string, bytes: Buffer, certificateId: string): Promise<any> {
    const fileKey = (await api.upload(fileName, bytes)).body.data.file_key;
    const created = await api.post('/v1/tasks/create', { file_key: fileKey, cert_type: 'enterprise', certificate_id: certificateId });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    const task = await finished(created.body.data.task_id);
    assert.equal(task.status, 'succeeded', JSON.stringify(task.error));
    const distribution = await api.get(`/v1/tasks/${task.task_id ?? task.id}/distribution`);
    assert.equal(distribution.status, 200, JSON.stringify(distribution.body));
    return distribution.body.data;
  }

  const download = async (url: string): Promise<Buffer> => {
    const response = await fetch(url);
    assert.equal(response.status, 200, url);
    return Buffer.from(await response.arrayBuffer());
  };

  async function rotated(rotationId: string): Promise<any> {
    const deadline = Date.now() + 300_000;
    for (;;) {
      const rotation = (await api.get(`/v1/rotations/${rotationId}`)).body.data;
      if (rotation.state !== 'running') return rotation;
      assert.ok(Date.now() < deadline, `rotation stuck: ${JSON.stringify(rotation.counts)}`);
      await sleep(200);
    }
  }

  function apksignerDigest(bytes: Buffer, name: string): string {
    const file = path.join(out, `${name}.apk`);
    writeFileSync(file, bytes);
    const run = spawnSync('apksigner', ['verify', '--print-certs', file], { encoding: 'utf8' });
    assert.equal(run.status, 0, run.stderr);
    return /Signer #1 certificate SHA-256 digest: ([0-9a-f]+)/.exec(run.stdout)?.[1] ?? '';
  }

  it('Android and iOS links keep their URLs and serve builds signed with the new certificate', async () => {
    const pki = testPki();
    const androidOld = await certificate({ kind: 'android', password: 'pw', file: { name: 'old.p12', data: pki.p12(pki.androidRsa, { password: 'pw' }) } });
    const androidNew = await certificate({ kind: 'android', password: 'pw', file: { name: 'new.p12', data: pki.p12(pki.androidEc, { password: 'pw' }) } });
    const iosOld = await certificate({
      kind: 'ios_enterprise',
      password: 'pw',
      file: { name: 'old.p12', data: pki.p12(pki.leaf, { password: 'pw', includeChain: true }) },
      profile: { name: 'old.mobileprovision', data: pki.mobileprovision({ bundleId: '*' }) },
    });
    const successor = issueTestIdentity('rotationSuccessor', { issuer: pki.intermediate, commonName: `iPhone Distribution: Rotation Successor (${pki.teamId})`, notBefore: new Date(Date.now() - 86400_000), notAfter: new Date(Date.now() + 800 * 86400_000) });
    const iosNew = await certificate({
      kind: 'ios_enterprise',
      password: 'pw',
      file: { name: 'new.p12', data: pki.p12(successor, { password: 'pw', includeChain: true }) },
      profile: { name: 'new.mobileprovision', data: pki.mobileprovision({ bundleId: '*', certificate: successor.certificate, name: 'Successor wildcard' }) },
    });

    const apkA = await release('a.apk', tinyApk({ packageName: 'com.example.rotate.a' }), androidOld.id);
    const apkB = await release('b.apk', tinyApk({ packageName: 'com.example.rotate.b' }), androidOld.id);
    const disabled = await release('c.apk', tinyApk({ packageName: 'com.example.rotate.c' }), androidOld.id);
    await api.request('PATCH', `/v1/distributions/${disabled.id}`, { json: { enabled: false } });
    const other = await release('d.apk', tinyApk({ packageName: 'com.example.rotate.d' }), androidNew.id);
    const ipa = await release('app.ipa', generatedApp('rotation-ios').bytes, iosOld.id);

    const before = new Map<string, Buffer>();
    for (const link of [apkA, apkB, ipa, other]) before.set(link.id, await download(link.download_url));
    assert.equal(apksignerDigest(before.get(apkA.id)!, 'a-before'), androidOld.fingerprint);
    const tasksBefore = (await api.get('/v1/tasks?limit=100')).body.data.items.length;

    // A dry run lists what would be re-signed and changes nothing.
    const dry = await api.post(`/v1/certificates/${androidOld.id}/rotate`, { to: androidNew.id, dry_run: true });
    assert.equal(dry.status, 200, JSON.stringify(dry.body));
    assert.equal(dry.body.data.id, null);
    assert.equal(dry.body.data.state, 'planned');
    assert.deepEqual(dry.body.data.items.map((i: any) => i.distribution_id).sort(), [apkA.id, apkB.id].sort(), 'live links only');
    assert.ok(dry.body.data.items.every((i: any) => i.state === 'planned' && i.new_task_id === null));
    assert.equal((await api.get('/v1/tasks?limit=100')).body.data.items.length, tasksBefore, 'no task created');
    assert.deepEqual(await download(apkA.download_url), before.get(apkA.id), 'the link still serves the old build');
    assert.equal((await api.get('/v1/rotations')).body.data.items.length, 0);

    // Refusals: same certificate, other kind.
    assert.equal((await api.post(`/v1/certificates/${androidOld.id}/rotate`, { to: androidOld.id })).status, 400);
    assert.equal((await api.post(`/v1/certificates/${androidOld.id}/rotate`, { to: iosNew.id })).status, 400);

    const androidRotation = await api.post(`/v1/certificates/${androidOld.id}/rotate`, { to: androidNew.id });
    assert.equal(androidRotation.status, 200, JSON.stringify(androidRotation.body));
    assert.match(androidRotation.body.data.id, /^rot_/);
    assert.equal(androidRotation.body.data.counts.planned, 2);
    const iosRotation = await api.post(`/v1/certificates/${iosOld.id}/rotate`, { to: iosNew.id });
    assert.equal(iosRotation.status, 200, JSON.stringify(iosRotation.body));
    // While its task signs (an iOS app takes a while), a second rotation of the same certificate is refused.
    const again = await api.post(`/v1/certificates/${iosOld.id}/rotate`, { to: iosNew.id });
    assert.equal(again.status, 409);
    assert.equal(again.body.error, 'rotation_in_progress');
    const missing = await api.get('/v1/rotations/rot_missing');
    assert.equal(missing.status, 404);
    assert.equal(missing.body.error, 'rotation_not_found');

    const doneAndroid = await rotated(androidRotation.body.data.id);
    const doneIos = await rotated(iosRotation.body.data.id);
    for (const done of [doneAndroid, doneIos]) {
      assert.equal(done.state, 'done', JSON.stringify(done.items));
      assert.equal(done.counts.done, done.counts.planned);
    }

    for (const link of [apkA, apkB]) {
      const now = (await api.get(`/v1/distributions/${link.id}`)).body.data;
      assert.equal(now.url, link.url, 'the URL is unchanged');
      const bytes = await download(link.download_url);
      assert.notDeepEqual(bytes, before.get(link.id));
      const report = await verifyApk(new BufferSource(bytes));
      assert.ok(report.verified, JSON.stringify(report.errors));
      assert.ok(report.signers.every((s) => s.certificateSha256 === androidNew.fingerprint), 'Signet’s verifier sees the new certificate');
      assert.equal(apksignerDigest(bytes, link.id), androidNew.fingerprint, 'apksigner sees the new certificate');
    }
    assert.deepEqual(await download(other.download_url), before.get(other.id), 'another certificate’s release is untouched');
    const disabledTask = (await api.get(`/v1/distributions/${disabled.id}`)).body.data.task_id;
    assert.equal(disabledTask, disabled.task_id, 'a disabled link is not re-signed');

    const ipaBytes = await download(ipa.download_url);
    assert.notDeepEqual(ipaBytes, before.get(ipa.id));
    assert.equal((await api.get(`/v1/distributions/${ipa.id}`)).body.data.url, ipa.url);
    const report = await verifyIpa(new BufferSource(ipaBytes));
    assert.deepEqual(allProblems(report), [], 'Signet’s verifier');
    assert.match(String(report.signer ?? ''), /Rotation Successor/);
    assert.ok(report.bundles.every((b) => b.code.every((c) => /Rotation Successor/.test(String(c.signer)))), 'every bundle signed with the new certificate');
    const file = path.join(out, 'rotated.ipa');
    writeFileSync(file, ipaBytes);
    const strict = strictIpaCheck(file, pki.root.certificatePem, 'rotation-e2e');
    assert.deepEqual(strict.problems, [], 'the independent strict check (openssl cms over every code signature)');
    const newProfile = iosNew.profiles[0].uuid;
    assert.ok(strict.bundles.length > 0 && strict.bundles.every((b) => b.profile?.uuid === newProfile), 'every bundle embeds the new certificate’s profile');
  });
});
