// Console sign-in over HTTP: the first-run setup link, sessions (cookie attributes, idle and
// absolute expiry, sign out, sign out everywhere), CSRF on cookie requests that change state,
// password change and owner-made reset links, and sign-in throttling per address and per email.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Api } from '../support/api-client.ts';
import { ConsoleClient } from '../support/console-client.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

const PASSWORD = 'owner-password-1';

describe('first run and sessions', () => {
  let server: TestServer;
  let owner: ConsoleClient;

  before(async () => {
    server = await startTestServer({ name: 'console-auth', env: { SIGNET_SIGN_IN_LIMIT: '200/60s,100/900s' } });
    owner = new ConsoleClient(server.url);
  });
  after(() => server.close());

  it('creates the first owner with the setup link, once', async () => {
    assert.match(server.setupUrl ?? '', /\/setup\?token=[A-Za-z0-9_-]{43}$/);
    const token = new URL(server.setupUrl!).searchParams.get('token')!;
    const status = await owner.get(`/v1/setup?token=${token}`);
    assert.deepEqual(status.body.data, { needed: true, token_valid: true, existing_accounts: ['default'] }, 'the CLI-made account is claimed');
    assert.equal((await owner.get('/v1/setup?token=nope')).body.data.token_valid, false);

    const wrong = await owner.post('/v1/setup', { token: 'x'.repeat(43), email: 'owner@example.com', password: PASSWORD });
    assert.equal(wrong.status, 410);
    assert.equal(wrong.body.error, 'setup_token_invalid');
    const weak = await owner.post('/v1/setup', { token, email: 'owner@example.com', password: 'short' });
    assert.equal(weak.status, 400);
    assert.equal(weak.body.error, 'invalid_request');

    const done = await owner.setup(server.setupUrl!, 'Owner@Example.com', PASSWORD);
    assert.equal(done.status, 200, JSON.stringify(done.body));
    const cookie = done.headers.getSetCookie().find((c) => c.startsWith('signet_session='))!;
    assert.match(cookie, /HttpOnly/i);
    assert.match(cookie, /SameSite=Lax/i);
    assert.match(cookie, /Path=\//);
    assert.doesNotMatch(cookie, /Secure/i, 'plain http: no Secure flag');
    assert.equal(done.body.data.user.email, 'owner@example.com');
    assert.deepEqual(done.body.data.account, { id: done.body.data.accounts[0].id, name: 'default', role: 'owner' });

    const again = await new ConsoleClient(server.url).setup(server.setupUrl!, 'other@example.com', PASSWORD);
    assert.equal(again.status, 410);
    assert.equal(again.body.error, 'setup_token_invalid');
    assert.equal((await owner.get(`/v1/setup?token=${token}`)).body.data.needed, false);
  });

  it('signs in, tells who is signed in, and refuses wrong passwords alike for unknown emails', async () => {
    const bad = await new ConsoleClient(server.url).signIn('owner@example.com', 'wrong-password');
    assert.equal(bad.status, 401);
    assert.equal(bad.body.error, 'credentials_invalid');
    const unknown = await new ConsoleClient(server.url).signIn('nobody@example.com', 'wrong-password');
    assert.deepEqual(unknown.body, bad.body);
    const me = new ConsoleClient(server.url);
    assert.equal((await me.signIn('owner@example.com', PASSWORD)).status, 200);
    const session = await me.get('/v1/session');
    assert.equal(session.body.data.user.email, 'owner@example.com');
    assert.ok(session.body.data.scopes.includes('admin'));
    assert.equal(session.body.data.csrf_token, me.csrf);
    const anonymous = await new ConsoleClient(server.url).get('/v1/session');
    assert.equal(anonymous.status, 401);
    assert.equal(anonymous.body.error, 'unauthorized');
    // A session is for people: an API key cannot read or end one.
    const key = new Api(server.url, server.key);
    assert.equal((await key.get('/v1/session')).body.error, 'insufficient_scope');
  });

  it('refuses cookie requests that change state without the session CSRF token', async () => {
    const missing = await owner.post('/v1/api-keys', { scopes: ['upload'] }, { csrf: false });
    assert.equal(missing.status, 403);
    assert.equal(missing.body.error, 'csrf_token_invalid');
    const forged = await owner.request('POST', '/v1/api-keys', { json: { scopes: ['upload'] }, csrf: false, headers: { 'x-csrf-token': 'A'.repeat(43) } });
    assert.equal(forged.body.error, 'csrf_token_invalid');
    const other = new ConsoleClient(server.url);
    await other.signIn('owner@example.com', PASSWORD);
    const crossed = await owner.request('POST', '/v1/api-keys', { json: { scopes: ['upload'] }, csrf: false, headers: { 'x-csrf-token': other.csrf! } });
    assert.equal(crossed.body.error, 'csrf_token_invalid', "another session's token does not fit");
    assert.equal((await owner.get('/v1/api-keys')).status, 200, 'reads need no token');
    assert.equal((await owner.post('/v1/api-keys', { scopes: ['upload'] })).status, 200);
    // API keys never need one.
    assert.equal((await new Api(server.url, server.key).post('/v1/api-keys', { scopes: ['upload'] })).status, 200);
  });

  it('ends sessions after the idle timeout, the absolute expiry, sign-out and sign-out everywhere', async () => {
    const db = server.service.db.kysely;
    const idle = new ConsoleClient(server.url);
    await idle.signIn('owner@example.com', PASSWORD);
    await db.updateTable('sessions').set({ last_seen_at: new Date(Date.now() - 25 * 3600_000).toISOString() }).where('id', '=', (await db.selectFrom('sessions').select('id').orderBy('created_at', 'desc').executeTakeFirstOrThrow()).id).execute();
    const expired = await idle.get('/v1/session');
    assert.equal(expired.status, 401);
    assert.equal(expired.body.error, 'session_expired');
    assert.match(expired.headers.getSetCookie().join(), /signet_session=;/, 'the dead cookie is cleared');

    const old = new ConsoleClient(server.url);
    await old.signIn('owner@example.com', PASSWORD);
    await db.updateTable('sessions').set({ expires_at: new Date(Date.now() - 1000).toISOString() }).where('token_hash', 'is not', null).where('revoked_at', 'is', null).where('created_at', '>', new Date(Date.now() - 5000).toISOString()).execute();
    assert.equal((await old.get('/v1/session')).body.error, 'session_expired');

    const a = new ConsoleClient(server.url);
    const b = new ConsoleClient(server.url);
    await a.signIn('owner@example.com', PASSWORD);
    await b.signIn('owner@example.com', PASSWORD);
    const cookieA = a.cookie;
    assert.equal((await a.post('/v1/auth/sign-out')).status, 200);
    assert.equal(a.cookie, null, 'sign-out clears the cookie');
    a.cookie = cookieA;
    assert.equal((await a.get('/v1/session')).body.error, 'session_expired', 'and the server forgot the session');
    assert.equal((await b.get('/v1/session')).status, 200);
    const everywhere = await b.post('/v1/auth/sign-out-everywhere');
    assert.ok(everywhere.body.data.sessions_ended >= 2);
    assert.equal((await owner.get('/v1/session')).body.error, 'session_expired');
    await owner.signIn('owner@example.com', PASSWORD);
  });

  it('changes the password (ending the other sessions) and resets it with an owner-made link', async () => {
    const other = new ConsoleClient(server.url);
    await other.signIn('owner@example.com', PASSWORD);
    const wrong = await owner.post('/v1/auth/password', { current_password: 'nope-nope-nope', new_password: 'owner-password-2' });
    assert.equal(wrong.status, 422);
    assert.equal(wrong.body.error, 'current_password_incorrect');
    assert.equal((await owner.post('/v1/auth/password', { current_password: PASSWORD, new_password: 'owner-password-2' })).status, 200);
    assert.equal((await owner.get('/v1/session')).status, 200, 'this session stays');
    assert.equal((await other.get('/v1/session')).body.error, 'session_expired', 'the others end');

    const invite = await owner.post('/v1/invitations', { email: 'admin@example.com', role: 'admin' });
    const admin = new ConsoleClient(server.url);
    assert.equal((await admin.accept(invite.body.data.url, 'admin-password-1')).status, 200);
    const adminId = admin.session.user.id;
    const notOwner = await admin.post(`/v1/members/${adminId}/password-reset`);
    assert.equal(notOwner.status, 403);
    assert.equal(notOwner.body.error, 'owner_required');
    const link = await owner.post(`/v1/members/${adminId}/password-reset`);
    assert.match(link.body.data.url, /\/reset-password\?token=/);
    const token = new URL(link.body.data.url).searchParams.get('token');
    assert.equal((await new ConsoleClient(server.url).post('/v1/auth/reset-password', { token, password: 'admin-password-2' })).status, 200);
    const reused = await new ConsoleClient(server.url).post('/v1/auth/reset-password', { token, password: 'admin-password-3' });
    assert.equal(reused.status, 410);
    assert.equal(reused.body.error, 'password_reset_invalid');
    assert.equal((await admin.get('/v1/session')).body.error, 'session_expired', 'a reset ends the sessions');
    assert.equal((await new ConsoleClient(server.url).signIn('admin@example.com', 'admin-password-2')).status, 200);
  });
});

describe('sign-in throttling', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer({ name: 'console-throttle', env: { SIGNET_SIGN_IN_LIMIT: '8/60s,3/900s' } });
    await new ConsoleClient(server.url).setup(server.setupUrl!, 'owner@example.com', PASSWORD);
  });
  after(() => server.close());

  it('limits attempts per email, then per address, with Retry-After', async () => {
    const client = new ConsoleClient(server.url);
    for (let i = 0; i < 3; i += 1) assert.equal((await client.signIn('owner@example.com', `guess-${i}-password`)).status, 401);
    const blocked = await client.signIn('owner@example.com', PASSWORD);
    assert.equal(blocked.status, 429, 'even the right password waits once the email is throttled');
    assert.equal(blocked.body.error, 'sign_in_throttled');
    assert.ok(Number(blocked.headers.get('retry-after')) > 0);
    // Other emails from the same address go on until the address's own limit: 8 attempts, of
    // which setup took 1 and the sign-ins above 4.
    const statuses: number[] = [];
    for (let i = 0; i < 5; i += 1) statuses.push((await client.signIn(`someone${i}@example.com`, 'whatever-password')).status);
    assert.deepEqual(statuses, [401, 401, 401, 429, 429]);
  });
});
