// Issue 20, enterprise: an app with a main bundle and an extension (a generated app, already
// signed by another team with push, associated domains and an app group), two explicit in-house
// profiles and a wildcard attached to one certificate through the API. The task signs each
// bundle with its own explicit profile (explicit before wildcard), keeps aps-environment in the
// main app only, says which profile signed which bundle and what was left out, and its output
// passes Signet's verifier and an independent strict one (Python + openssl). A bundle no profile
// covers is refused with every such bundle named; a task may name profiles per bundle id.
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { BufferSource } from '../../src/signing/data-source.ts';
import { allProblems, verifyIpa } from '../../src/signing/ios/verify-ipa/index.ts';
import { Api } from '../support/api-client.ts';
import { testOutputDir } from '../support/fixtures.ts';
import type { GeneratedApp } from '../support/ios-app.ts';
import { needsToolchain } from '../support/macho-build.ts';
import { testPki } from '../support/pki.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { SHIPPED_GROUP, shippedApp } from '../support/shipped-app.ts';
import { strictIpaCheck } from '../support/strict-ipa.ts';

const GROUP = SHIPPED_GROUP;
let server: TestServer;
let api: Api;
let app: GeneratedApp;
/** The generated app as another team shipped it: each bundle signed with entitlements of its own. */
let shipped: Buffer;

async function createCertificate(profile: Buffer): Promise<any> {
  const pki = testPki();
  const response = await api.form('/v1/certificates', {
    kind: 'ios_enterprise',
    password: 'pw',
    file: { name: 'dist.p12', data: pki.p12(pki.leaf, { password: 'pw', includeChain: true }) },
    profile: { name: 'app.mobileprovision', data: profile },
  });
  assert.equal(response.status, 200, JSON.stringify(response.body));
  return response.body.data;
}

async function attach(certificateId: string, profile: Buffer): Promise<any> {
  const response = await api.form(`/v1/certificates/${certificateId}/profiles`, { profile: { name: 'p.mobileprovision', data: profile } });
  assert.equal(response.status, 200, JSON.stringify(response.body));
  return response.body.data;
}

async function createTask(body: Record<string, unknown>): Promise<{ status: number; body: any }> {
  const upload = await api.upload('app.ipa', shipped);
  assert.equal(upload.status, 200, JSON.stringify(upload.body));
  return api.post('/v1/tasks/create', { file_key: upload.body.data.file_key, cert_type: 'enterprise', ...body });
}

async function finished(taskId: string): Promise<any> {
  const deadline = Date.now() + 120_000;
  for (;;) {
    const task = (await api.get(`/v1/tasks/${taskId}`)).body.data;
    if (task.status === 'succeeded' || task.status === 'failed') return task;
    assert.ok(Date.now() < deadline, `task stuck in ${task.status}`);
    await sleep(100);
  }
}

async function runTask(body: Record<string, unknown>): Promise<any> {
  const created = await createTask(body);
  assert.equal(created.status, 200, JSON.stringify(created.body));
  return finished(created.body.data.task_id);
}

describe('profiles per bundle through the API (enterprise)', needsToolchain(), () => {
  const pki = testPki();
  const mainProfile = () => pki.mobileprovision({ bundleId: app.bundleId, apsEnvironment: 'production', name: 'Signet main (push)' });
  const widgetProfile = () => pki.mobileprovision({ bundleId: app.extensionId, applicationGroups: [GROUP], name: 'Signet widget (app group)' });
  let certificate: any;
  let profiles: { main: any; widget: any; wildcard: any };

  before(async () => {
    ({ app, bytes: shipped } = await shippedApp('profiles-per-bundle'));
    server = await startTestServer({ name: 'profiles-per-bundle' });
    api = new Api(server.url, server.key);
    certificate = await createCertificate(mainProfile());
    const widget = await attach(certificate.id, widgetProfile());
    const wildcard = await attach(certificate.id, pki.mobileprovision({ bundleId: '*', name: 'Signet wildcard' }));
    profiles = { main: certificate.profiles[0], widget, wildcard };
  });
  after(() => server?.close());

  it('lists every profile of the certificate with its App ID, type, expiry and entitlements', async () => {
    const listed = (await api.get(`/v1/certificates/${certificate.id}/profiles`)).body.data.items;
    assert.deepEqual(listed.map((p: any) => p.app_id), [`${pki.teamId}.${app.bundleId}`, `${pki.teamId}.${app.extensionId}`, `${pki.teamId}.*`]);
    for (const p of listed) {
      assert.match(p.id, /^prf_/);
      assert.equal(p.type, 'enterprise');
      assert.ok(Date.parse(p.expires_at) > Date.now());
      assert.equal(p.entitlements['application-identifier'], p.app_id);
    }
    assert.equal(listed[0].entitlements['aps-environment'], 'production');
    assert.deepEqual(listed[1].entitlements['com.apple.security.application-groups'], [GROUP]);
    const shown = (await api.get(`/v1/certificates/${certificate.id}`)).body.data;
    assert.deepEqual(shown.profiles, listed);
    assert.equal(shown.profile.app_id, listed[0].app_id, 'the one-profile field shows the first profile');
    assert.deepEqual((await api.get(`/v1/certificates/${certificate.id}/profiles/${profiles.widget.id}`)).body.data, listed[1]);

    const again = await attach(certificate.id, widgetProfile());
    assert.notEqual(again.id, profiles.widget.id, 'a new profile file (new UUID) is a new profile');
    const garbage = await api.form(`/v1/certificates/${certificate.id}/profiles`, { profile: { name: 'p', data: Buffer.from('not a profile') } });
    assert.equal(garbage.status, 422, 'not a profile');
    assert.equal(garbage.body.error, 'profile_invalid');
    const foreign = await api.form(`/v1/certificates/${certificate.id}/profiles`, { profile: { name: 'p', data: pki.mobileprovision({ bundleId: '*', certificate: pki.ecLeaf.certificate }) } });
    assert.equal(foreign.status, 422, 'a profile for another certificate');
    assert.equal(foreign.body.error, 'profile_certificate_mismatch');
    const removed = await api.request('DELETE', `/v1/certificates/${certificate.id}/profiles/${again.id}`);
    assert.equal(removed.status, 200, JSON.stringify(removed.body));
  });

  it('signs each bundle with its own explicit profile; aps-environment stays in the main app', async () => {
    const task = await runTask({ certificate_id: certificate.id });
    assert.equal(task.status, 'succeeded', JSON.stringify(task.error));
    const byBundle = Object.fromEntries(task.bundles.map((b: any) => [b.bundle_id, b]));
    assert.deepEqual(Object.keys(byBundle).sort(), [app.bundleId, app.extensionId].sort());
    assert.equal(byBundle[app.bundleId].profile.id, profiles.main.id, 'explicit App ID before the wildcard');
    assert.equal(byBundle[app.extensionId].profile.id, profiles.widget.id);
    assert.equal(byBundle[app.bundleId].application_identifier, `${pki.teamId}.${app.bundleId}`);
    assert.equal(byBundle[app.extensionId].profile.type, 'enterprise');
    assert.equal(byBundle[app.extensionId].path, 'Payload/Signet.app/PlugIns/Widget.appex/');
    // What could not be carried over is named: the main profile grants no associated domains.
    assert.deepEqual(
      task.warnings.map((w: any) => [w.bundle_id, w.entitlement, w.reason]),
      [[app.bundleId, 'com.apple.developer.associated-domains', 'not_granted']],
    );

    const download = await fetch(`${server.url}/v1/tasks/${task.task_id}/artifact`, { headers: { authorization: `Bearer ${server.key}` } });
    const bytes = Buffer.from(await download.arrayBuffer());
    const report = await verifyIpa(new BufferSource(bytes));
    assert.deepEqual(allProblems(report), [], 'Signet’s verifier');
    mkdirSync(testOutputDir('profiles-per-bundle'), { recursive: true });
    const file = path.join(testOutputDir('profiles-per-bundle'), 'signed.ipa');
    writeFileSync(file, bytes);

    const strict = strictIpaCheck(file, pki.root.certificatePem, 'profiles-per-bundle');
    assert.deepEqual(strict.problems, [], 'the independent strict check');
    const seen = Object.fromEntries(strict.bundles.map((b) => [b.bundleId, b]));
    const main = seen[app.bundleId]!;
    const widget = seen[app.extensionId]!;
    assert.equal(main.profile?.uuid, byBundle[app.bundleId].profile.uuid, 'the app embeds its own profile');
    assert.equal(widget.profile?.uuid, byBundle[app.extensionId].profile.uuid, 'the extension embeds its own profile');
    assert.equal(main.entitlements?.['aps-environment'], 'production', 'push stays, in the distribution environment');
    assert.equal(main.entitlements?.['application-identifier'], `${pki.teamId}.${app.bundleId}`);
    assert.deepEqual(main.entitlements?.['keychain-access-groups'], [`${pki.teamId}.${app.bundleId}`], 'keychain group moved to the new team');
    assert.equal(main.entitlements?.['get-task-allow'], false);
    assert.equal(main.entitlements?.['com.apple.developer.associated-domains'], undefined);
    assert.equal(widget.entitlements?.['aps-environment'], undefined, 'the extension never had push');
    assert.equal(widget.entitlements?.['application-identifier'], `${pki.teamId}.${app.extensionId}`);
    assert.deepEqual(widget.entitlements?.['com.apple.security.application-groups'], [GROUP]);
  });

  it('signs a bundle with the profile the task names for it', async () => {
    const task = await runTask({ certificate_id: certificate.id, profiles: { [app.extensionId]: profiles.wildcard.id } });
    assert.equal(task.status, 'succeeded', JSON.stringify(task.error));
    const widget = task.bundles.find((b: any) => b.bundle_id === app.extensionId);
    assert.equal(widget.profile.id, profiles.wildcard.id);
    assert.equal(widget.application_identifier, `${pki.teamId}.*`);
    assert.ok(task.warnings.some((w: any) => w.bundle_id === app.extensionId && w.entitlement === 'com.apple.security.application-groups'), JSON.stringify(task.warnings));
  });

  it('refuses a named profile the certificate lacks or that does not cover the bundle, at creation', async () => {
    const missing = await createTask({ certificate_id: certificate.id, profiles: { [app.extensionId]: 'prf_doesnotexist' } });
    assert.equal(missing.status, 404);
    assert.equal(missing.body.error, 'profile_not_found');
    const wrong = await createTask({ certificate_id: certificate.id, profiles: { [app.extensionId]: profiles.main.id } });
    assert.equal(wrong.status, 422);
    assert.equal(wrong.body.error, 'bundle_id_mismatch');
    const unknownBundle = await runTask({ certificate_id: certificate.id, profiles: { 'com.signet.generated.nosuch': profiles.wildcard.id } });
    assert.equal(unknownBundle.status, 'failed');
    assert.equal(unknownBundle.error.code, 'bundle_id_mismatch');
    assert.match(unknownBundle.error.message, /com\.signet\.generated\.nosuch/);
  });

  it('refuses an app whose bundles no profile covers, naming every such bundle', async () => {
    const onlyMain = await createCertificate(mainProfile());
    const task = await runTask({ certificate_id: onlyMain.id });
    assert.equal(task.status, 'failed');
    assert.equal(task.error.code, 'bundle_id_mismatch');
    assert.match(task.error.message, /No provisioning profile covers "com\.signet\.generated\.widget" \(PlugIns\/Widget\.appex\/\)/);
    assert.doesNotMatch(task.error.message, /"com\.signet\.generated" \(the app\)/);

    const unrelated = await createCertificate(pki.mobileprovision({ bundleId: 'com.unrelated.*' }));
    const both = await runTask({ certificate_id: unrelated.id });
    assert.equal(both.error.code, 'bundle_id_mismatch');
    assert.match(both.error.message, /"com\.signet\.generated\.widget" \(PlugIns\/Widget\.appex\/\), "com\.signet\.generated" \(the app\)/);
  });

  it('keeps at least one profile per certificate, and removes the others', async () => {
    const single = await createCertificate(mainProfile());
    const last = await api.request('DELETE', `/v1/certificates/${single.id}/profiles/${single.profiles[0].id}`);
    assert.equal(last.status, 409);
    assert.equal(last.body.error, 'certificate_profile_required');
    const extra = await attach(single.id, widgetProfile());
    const removed = await api.request('DELETE', `/v1/certificates/${single.id}/profiles/${single.profiles[0].id}`);
    assert.equal(removed.status, 200);
    const gone = await api.get(`/v1/certificates/${single.id}/profiles/${single.profiles[0].id}`);
    assert.equal(gone.status, 404);
    assert.equal(gone.body.error, 'profile_not_found');
    assert.deepEqual((await api.get(`/v1/certificates/${single.id}/profiles`)).body.data.items.map((p: any) => p.id), [extra.id]);
    const android = await api.form(`/v1/certificates/crt_nosuchcertificate/profiles`, { profile: { name: 'p', data: widgetProfile() } });
    assert.equal(android.status, 404);
    assert.equal(android.body.error, 'certificate_not_found');
  });
});
