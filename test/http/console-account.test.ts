// The account's settings over HTTP, as the console and pipelines use them: API keys with scopes
// (a request outside them is 403 insufficient_scope), expiry and last use; roles (a viewer reads
// only); members and invitations; the webhook secret and its test event; team isolation for
// console users; and the OpenAPI document describing all of it.
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { verifyWebhookSignature } from '../../src/services/webhooks.ts';
import { Api } from '../support/api-client.ts';
import { tinyApk } from '../support/app-packages.ts';
import { ConsoleClient } from '../support/console-client.ts';
import { testPki } from '../support/pki.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { slowCopySigner } from '../support/slow-signer.ts';

describe('account settings', () => {
  let server: TestServer;
  let owner: ConsoleClient;
  let viewer: ConsoleClient;

  before(async () => {
    server = await startTestServer({ name: 'console-account', env: { SIGNET_SIGN_IN_LIMIT: '200/60s,100/900s', SIGNET_OUTBOUND_ALLOW: '127.0.0.1' }, overrides: { signers: [slowCopySigner('android', 0)] } });
    owner = new ConsoleClient(server.url);
    await owner.setup(server.setupUrl!, 'owner@example.com', 'owner-password-1');
    const invite = await owner.post('/v1/invitations', { email: 'viewer@example.com', role: 'viewer' });
    viewer = new ConsoleClient(server.url);
    assert.equal((await viewer.accept(invite.body.data.url, 'viewer-password-1')).status, 200);
  });
  after(() => server.close());

  it('creates keys with scopes and expiry, shows them once, lists last use, revokes them', async () => {
    const made = await owner.post('/v1/api-keys', { label: 'uploader', scopes: ['upload', 'tasks:read'], expires_at: '2099-01-01T00:00:00.000Z' });
    assert.equal(made.status, 200);
    assert.match(made.body.data.key, /^sk_[0-9A-Za-z]{43}$/);
    assert.deepEqual(made.body.data.scopes, ['upload', 'tasks:read']);
    const uploader = new Api(server.url, made.body.data.key);
    assert.equal((await uploader.upload('a.apk', tinyApk())).status, 200);
    const refused = await uploader.post('/v1/tasks/create', { file_key: 'tmp_x', cert_type: 'enterprise' });
    assert.equal(refused.status, 403);
    assert.equal(refused.body.error, 'insufficient_scope');
    assert.match(refused.body.message, /tasks:write/);
    assert.equal((await uploader.get('/v1/api-keys')).body.error, 'insufficient_scope');

    const listed = (await owner.get('/v1/api-keys')).body.data.items.find((k: any) => k.id === made.body.data.id);
    assert.equal(listed.label, 'uploader');
    assert.ok(listed.last_used_at, 'last use is recorded');
    assert.equal(listed.expires_at, '2099-01-01T00:00:00.000Z');
    assert.ok(!JSON.stringify(listed).includes(made.body.data.key));

    const past = await owner.post('/v1/api-keys', { scopes: ['upload'], expires_at: '2000-01-01T00:00:00Z' });
    assert.equal(past.body.error, 'invalid_request');
    const unknown = await owner.post('/v1/api-keys', { scopes: ['everything'] });
    assert.equal(unknown.status, 400);

    assert.equal((await owner.request('DELETE', `/v1/api-keys/${made.body.data.id}`)).status, 200);
    assert.equal((await uploader.get('/v1/tasks')).status, 401);
    const again = await owner.request('DELETE', `/v1/api-keys/${made.body.data.id}`);
    assert.equal(again.status, 404);
    assert.equal(again.body.error, 'api_key_not_found');

    // A key with `admin` makes keys, never with more than it has.
    const admin = new Api(server.url, await owner.createKey(['admin', 'tasks:read']));
    const wider = await admin.post('/v1/api-keys', { scopes: ['upload'] });
    assert.equal(wider.body.error, 'insufficient_scope');
    assert.equal((await admin.post('/v1/api-keys', { scopes: ['tasks:read'] })).status, 200);
  });

  it('lets a viewer read but not upload, create tasks, keys or invitations', async () => {
    assert.equal((await viewer.get('/v1/apps')).status, 200);
    assert.equal((await viewer.get('/v1/tasks')).status, 200);
    assert.equal((await viewer.get('/v1/members')).status, 200);
    assert.deepEqual(viewer.session.scopes, ['tasks:read']);
    const form = new FormData();
    form.append('file', new Blob([new Uint8Array(tinyApk())]), 'v.apk');
    for (const attempt of [
      viewer.request('POST', '/v1/apps/upload', { body: form }),
      viewer.post('/v1/tasks/create', { file_key: 'tmp_x', cert_type: 'enterprise' }),
      viewer.post('/v1/api-keys', { scopes: ['tasks:read'] }),
      viewer.post('/v1/invitations', { email: 'x@example.com', role: 'viewer' }),
      viewer.get('/v1/api-keys'),
      viewer.get('/v1/webhooks/secret'),
    ]) {
      const r = await attempt;
      assert.equal(r.status, 403, JSON.stringify(r.body));
      assert.equal(r.body.error, 'insufficient_scope');
    }
    const account = await viewer.get('/v1/account');
    assert.equal(account.body.data.role, 'viewer');
    assert.equal(account.body.data.credential, 'session');
  });

  it('manages members: roles, owners only by owners, never without an owner', async () => {
    const members = (await owner.get('/v1/members')).body.data.items;
    assert.deepEqual(members.map((m: any) => [m.email, m.role]), [['owner@example.com', 'owner'], ['viewer@example.com', 'viewer']]);
    const viewerId = members[1].user_id;
    const ownerId = members[0].user_id;
    const promoted = await owner.request('PATCH', `/v1/members/${viewerId}`, { json: { role: 'admin' } });
    assert.equal(promoted.body.data.role, 'admin');
    const admin = new ConsoleClient(server.url);
    await admin.signIn('viewer@example.com', 'viewer-password-1');
    const crown = await admin.request('PATCH', `/v1/members/${viewerId}`, { json: { role: 'owner' } });
    assert.equal(crown.status, 403);
    assert.equal(crown.body.error, 'owner_required');
    assert.equal((await admin.request('DELETE', `/v1/members/${ownerId}`)).body.error, 'owner_required');
    const last = await owner.request('PATCH', `/v1/members/${ownerId}`, { json: { role: 'admin' } });
    assert.equal(last.status, 409);
    assert.equal(last.body.error, 'last_owner');
    const missing = await owner.request('DELETE', '/v1/members/usr_nobody');
    assert.equal(missing.status, 404);
    assert.equal(missing.body.error, 'member_not_found');
    assert.equal((await owner.request('PATCH', `/v1/members/${viewerId}`, { json: { role: 'viewer' } })).body.data.role, 'viewer');
  });

  it('invites by link: lookup, accept once, existing users confirm their password, revoke', async () => {
    const created = await owner.post('/v1/invitations', { email: 'Dev@Example.com', role: 'developer' });
    assert.equal(created.status, 200);
    assert.match(created.body.data.url, /\/invite\?token=[A-Za-z0-9_-]{43}$/);
    const token = new URL(created.body.data.url).searchParams.get('token')!;
    const anonymous = new ConsoleClient(server.url);
    const lookup = await anonymous.get(`/v1/invitations/lookup?token=${token}`);
    assert.deepEqual({ ...lookup.body.data, expires_at: undefined }, { account_name: 'default', email: 'dev@example.com', role: 'developer', user_exists: false, expires_at: undefined });
    assert.equal((await owner.get('/v1/invitations')).body.data.items.length, 1);
    assert.equal((await owner.post('/v1/invitations', { email: 'viewer@example.com', role: 'viewer' })).body.error, 'email_taken');

    const dev = new ConsoleClient(server.url);
    assert.equal((await dev.accept(created.body.data.url, 'developer-pass-1')).status, 200);
    assert.equal(dev.session.account.role, 'developer');
    const twice = await new ConsoleClient(server.url).accept(created.body.data.url, 'developer-pass-1');
    assert.equal(twice.status, 410);
    assert.equal(twice.body.error, 'invitation_invalid');

    // Someone who already has a user joins a second account with their own password.
    const team = new ApiKeyless(server);
    const bravoOwner = await team.ownerOf('bravo');
    const toBravo = await bravoOwner.post('/v1/invitations', { email: 'dev@example.com', role: 'viewer' });
    const wrong = await new ConsoleClient(server.url).accept(toBravo.body.data.url, 'not-their-password');
    assert.equal(wrong.body.error, 'credentials_invalid');
    const joined = await dev.accept(toBravo.body.data.url, 'developer-pass-1');
    assert.equal(joined.body.data.account.name, 'bravo');
    assert.deepEqual(joined.body.data.accounts.map((a: any) => a.name).sort(), ['bravo', 'default']);
    const back = await dev.request('PUT', '/v1/session/account', { json: { account_id: joined.body.data.accounts.find((a: any) => a.name === 'default').id } });
    assert.equal(back.body.data.account.role, 'developer');

    const revoked = await owner.post('/v1/invitations', { email: 'late@example.com', role: 'viewer' });
    assert.equal((await owner.request('DELETE', `/v1/invitations/${revoked.body.data.id}`)).status, 200);
    assert.equal((await owner.request('DELETE', `/v1/invitations/${revoked.body.data.id}`)).body.error, 'invitation_not_found');
    assert.equal((await anonymous.get(`/v1/invitations/lookup?token=${new URL(revoked.body.data.url).searchParams.get('token')}`)).status, 410);
  });

  it('shows and rotates the webhook secret and sends a signed test event', async () => {
    const secret = (await owner.get('/v1/webhooks/secret')).body.data.secret;
    assert.match(secret, /^whsec_/);
    const received: Array<{ headers: http.IncomingHttpHeaders; body: string }> = [];
    const receiver = http.createServer((request, response) => {
      let body = '';
      request.on('data', (c) => (body += c));
      request.on('end', () => {
        received.push({ headers: request.headers, body });
        response.statusCode = received.length === 1 ? 204 : 500;
        response.end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
    try {
      const ok = await owner.post('/v1/webhooks/test', { url });
      assert.equal(ok.body.data.delivered, true);
      assert.equal(ok.body.data.status_code, 204);
      assert.equal(JSON.parse(received[0]!.body).event, 'ping');
      assert.ok(verifyWebhookSignature(secret, String(received[0]!.headers['signet-signature']), received[0]!.body));
      const failing = await owner.post('/v1/webhooks/test', { url });
      assert.deepEqual([failing.body.data.delivered, failing.body.data.status_code], [false, 500]);
    } finally {
      receiver.close();
    }
    const rotated = (await owner.post('/v1/webhooks/secret/rotate')).body.data.secret;
    assert.notEqual(rotated, secret);
    assert.equal((await owner.get('/v1/webhooks/secret')).body.data.secret, rotated);
  });

  it("never shows a member of one team another team's apps, tasks, certificates or keys", async () => {
    const pki = testPki();
    const key = new Api(server.url, await owner.createKey(['upload', 'tasks:read', 'tasks:write', 'certificates:write']));
    const cert = (await key.form('/v1/certificates', { kind: 'android', password: 'pw', file: { name: 'k.p12', data: pki.p12(pki.androidRsa, { password: 'pw' }) } })).body.data;
    const upload = (await key.upload('a.apk', tinyApk({ packageName: 'com.team.a' }))).body.data;
    const taskId = (await key.post('/v1/tasks/create', { file_key: upload.file_key, cert_type: 'enterprise' })).body.data.task_id;
    const outsider = await new ApiKeyless(server).ownerOf('charlie');
    for (const [path, code] of [
      [`/v1/tasks/${taskId}`, 'task_not_found'],
      [`/v1/apps/${upload.app_id}`, 'app_not_found'],
      [`/v1/certificates/${cert.id}`, 'certificate_not_found'],
    ] as const) {
      const r = await outsider.get(path);
      assert.equal(r.status, 404);
      assert.equal(r.body.error, code);
    }
    for (const list of ['/v1/apps', '/v1/tasks', '/v1/certificates', '/v1/api-keys', '/v1/distributions']) {
      assert.deepEqual((await outsider.get(list)).body.data.items, [], list);
    }
    assert.deepEqual((await outsider.get('/v1/members')).body.data.items.map((m: any) => m.email), ['charlie@example.com']);
    const ownKeys = (await owner.get('/v1/api-keys')).body.data.items;
    assert.equal((await outsider.request('DELETE', `/v1/api-keys/${ownKeys[0].id}`)).body.error, 'api_key_not_found');
    assert.ok((await owner.get('/v1/apps')).body.data.items.some((a: any) => a.app_id === upload.app_id));
  });

  it('lets only an owner delete the account, with everything in it', async () => {
    const team = await new ApiKeyless(server).ownerOf('delta');
    const key = new Api(server.url, await team.createKey(['upload', 'tasks:read', 'tasks:write', 'certificates:write']));
    const upload = (await key.upload('d.apk', tinyApk({ packageName: 'com.delta.app' }))).body.data;
    const blobs = server.service.blobs;
    const blobKey = (await server.service.db.kysely.selectFrom('uploads').select('blob_key').where('id', '=', upload.file_key).executeTakeFirstOrThrow()).blob_key;
    assert.equal(await blobs.exists(blobKey), true);
    const invite = await team.post('/v1/invitations', { email: 'delta-admin@example.com', role: 'admin' });
    const admin = new ConsoleClient(server.url);
    await admin.accept(invite.body.data.url, 'delta-admin-pass');
    const refused = await admin.request('DELETE', '/v1/account', { json: { confirm: 'delta' } });
    assert.equal(refused.status, 403);
    assert.equal(refused.body.error, 'owner_required');
    assert.equal((await team.request('DELETE', '/v1/account', { json: { confirm: 'wrong' } })).body.error, 'invalid_request');
    const done = await team.request('DELETE', '/v1/account', { json: { confirm: 'delta' } });
    assert.equal(done.status, 200, JSON.stringify(done.body));
    assert.ok(done.body.data.blobs_deleted >= 1);
    assert.equal(await blobs.exists(blobKey), false, 'the stored package is gone');
    assert.equal((await key.get('/v1/tasks')).status, 401, 'its keys no longer work');
    const after = await team.get('/v1/session');
    assert.equal(after.status, 200, 'the owner keeps their user');
    assert.equal(after.body.data.account, null);
    assert.equal((await team.get('/v1/apps')).body.error, 'insufficient_scope', 'and belongs to no account now');
    assert.equal((await owner.get('/v1/account')).body.data.name, 'default', 'other accounts are untouched');
  });

  it('describes every console route in the OpenAPI document with its security and scope', async () => {
    const doc = (await fetch(`${server.url}/v1/openapi.json`).then((r) => r.json())) as any;
    assert.deepEqual(doc.paths['/auth/sign-in'].post.security, []);
    assert.deepEqual(doc.paths['/session'].get.security, [{ session: [] }]);
    assert.deepEqual(doc.paths['/api-keys'].post.security, [{ bearer: [] }, { session: [] }]);
    assert.equal(doc.paths['/api-keys'].post['x-scope'], 'admin');
    assert.equal(doc.paths['/tasks/create'].post['x-scope'], 'tasks:write');
    assert.equal(doc.paths['/apps/upload'].post['x-scope'], 'upload');
    for (const path of ['/members', '/members/{user_id}', '/invitations', '/invitations/accept', '/webhooks/secret', '/webhooks/test', '/account', '/setup', '/distributions']) {
      assert.ok(doc.paths[path], `${path} is documented`);
    }
    assert.ok(doc.components.securitySchemes.session);
    assert.equal(doc.paths['/apps'] && Object.keys(doc.paths).some((p) => p === '/' || p.startsWith('/assets')), false, 'console pages are not API');
  });
});

/** Makes a fresh account with an owner, through the CLI's service (as `signet users create`). */
class ApiKeyless {
  readonly server: TestServer;
  constructor(server: TestServer) {
    this.server = server;
  }
  async ownerOf(account: string): Promise<ConsoleClient> {
    const { UserService } = await import('../../src/services/users.ts');
    const users = new UserService({ db: this.server.service.db, baseUrl: () => this.server.url });
    await users.createInAccount({ email: `${account}@example.com`, password: `${account}-password-1`, accountName: account, role: 'owner' });
    const client = new ConsoleClient(this.server.url);
    await client.signIn(`${account}@example.com`, `${account}-password-1`);
    return client;
  }
}
