// The repository contract: every behaviour the service relies on, run unchanged against SQLite
// (repositories-sqlite.test.ts) and PostgreSQL (repositories-postgres.test.ts).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Db } from '../../src/db/database.ts';
import { API_KEY_PATTERN, newFileKey } from '../../src/db/ids.ts';
import type { NewTaskInput, TaskOutcome } from '../../src/db/repositories.ts';
import { AppError } from '../../src/errors.ts';

export interface RepositoryBackend {
  name: string;
  open(): Promise<Db>;
  cleanup(): Promise<void>;
}

const rejectsWithCode = (promise: Promise<unknown>, code: string) =>
  assert.rejects(promise, (error: unknown) => error instanceof AppError && error.code === code);

const developerAccountInput = (accountId: string) => ({
  accountId,
  name: null,
  issuerId: '00000000-0000-0000-0000-000000000000',
  keyId: 'KEY0000001',
  p8Pem: 'pem',
  p12: Buffer.from('p12'),
  p12Password: 'pw',
  teamId: 'TEAM000001',
  certificate: { subject: 'CN=x', serial: '1', fingerprint: 'f', notAfter: new Date(Date.now() + 86_400_000) },
  ascCertificateId: 'CERT1',
  slotsPerClass: 100,
  bundleIds: [],
  health: 'ok' as const,
  healthDetail: null,
});

const profileMetadata = (uuid: string, appId: string) => ({ name: `Profile ${uuid}`, uuid, appId, type: 'enterprise', teamId: appId.split('.')[0]!, expiresAt: new Date('2030-01-01T00:00:00Z'), entitlements: { 'aps-environment': 'production' } });

export function describeRepositoryContract(backend: RepositoryBackend): void {
  describe(`repositories on ${backend.name}`, () => {
    let db: Db;
    before(async () => {
      db = await backend.open();
    });
    after(async () => {
      await db?.close();
      await backend.cleanup();
    });

    let accountSeq = 0;
    const account = () => db.repos.accounts.create(`account-${++accountSeq}-${Date.now()}`);
    const upload = async (accountId: string, size = 1234) =>
      db.repos.uploads.create({
        id: newFileKey(),
        accountId,
        filename: 'app.ipa',
        platform: 'ios',
        size,
        sha256: 'ab'.repeat(32),
        blobKey: `uploads/x`,
        expiresAt: new Date(Date.now() + 86_400_000),
      });
    const taskInput = (accountId: string, uploadId: string, extra: Partial<NewTaskInput> = {}): NewTaskInput => ({
      accountId,
      platform: 'ios',
      uploadId,
      inputBlobKey: `uploads/${uploadId}`,
      inputFilename: 'app.ipa',
      certificateId: null,
      certType: 'enterprise',
      options: { bundle_id: 'com.example.x' },
      callbackUrl: null,
      appId: null,
      ...extra,
    });
    const processingTask = async () => {
      const acc = await account();
      const up = await upload(acc.id);
      const task = await db.repos.tasks.create(taskInput(acc.id, up.id));
      assert.ok(await db.repos.tasks.start(task.id, 1));
      return task;
    };

    test('accounts: names are unique, ensure is idempotent, the webhook secret is sealed', async () => {
      const created = await db.repos.accounts.create('acme');
      assert.match(created.id, /^acc_[0-9A-Za-z]{22}$/);
      await rejectsWithCode(db.repos.accounts.create('acme'), 'invalid_request');
      assert.equal((await db.repos.accounts.ensure('acme')).id, created.id);
      const secret = await db.repos.accounts.webhookSecret(created.id);
      assert.match(secret, /^whsec_/);
      assert.ok(!created.webhook_secret_sealed.includes(secret.slice(6)));
      const rotated = await db.repos.accounts.rotateWebhookSecret(created.id);
      assert.notEqual(rotated, secret);
      assert.equal(await db.repos.accounts.webhookSecret(created.id), rotated);
      assert.equal((await db.repos.accounts.findByName('acme'))?.id, created.id);
      assert.equal(await db.repos.accounts.findById('acc_missing'), null);
    });

    test('api keys: shown once, stored as SHA-256, authenticate until revoked', async () => {
      const acc = await account();
      const { key, apiKey } = await db.repos.apiKeys.create({ accountId: acc.id, label: 'ci' });
      assert.match(key, API_KEY_PATTERN);
      assert.equal(apiKey.key_hash.length, 64);
      assert.ok(!JSON.stringify(await db.repos.apiKeys.list(acc.id)).includes(key.slice(3)));
      const auth = await db.repos.apiKeys.authenticate(key);
      assert.equal(auth?.account.id, acc.id);
      assert.equal(auth?.apiKey.label, 'ci');
      assert.ok(auth?.apiKey.last_used_at);
      assert.equal(await db.repos.apiKeys.authenticate(`${key.slice(0, -1)}${key.endsWith('a') ? 'b' : 'a'}`), null);
      assert.equal(await db.repos.apiKeys.authenticate('sk_short'), null);
      assert.equal(await db.repos.apiKeys.authenticate(''), null);
      const other = await account();
      assert.equal(await db.repos.apiKeys.revoke(other.id, apiKey.id), false, 'a foreign account cannot revoke');
      assert.equal(await db.repos.apiKeys.revoke(acc.id, apiKey.id), true);
      assert.equal(await db.repos.apiKeys.authenticate(key), null);
      assert.equal(await db.repos.apiKeys.revoke(acc.id, apiKey.id), false);
    });

    test('uploads: sizes above 2^31 round-trip as numbers; lookups are scoped to the account', async () => {
      const acc = await account();
      const other = await account();
      const big = await upload(acc.id, 3 * 2 ** 30);
      const found = await db.repos.uploads.find(acc.id, big.id);
      assert.equal(found?.size, 3 * 2 ** 30);
      assert.equal(typeof found?.size, 'number');
      assert.equal(await db.repos.uploads.find(other.id, big.id), null);
      assert.equal(await db.repos.uploads.delete(big.id), true);
      assert.equal(await db.repos.uploads.delete(big.id), false);
    });

    test('uploads: expired ones are listed for sweeping unless an active task still needs them', async () => {
      const acc = await account();
      const past = new Date(Date.now() - 1000);
      const make = (expiresAt: Date) =>
        db.repos.uploads.create({ id: newFileKey(), accountId: acc.id, filename: 'a.apk', platform: 'android', size: 1, sha256: '00'.repeat(32), blobKey: 'b', expiresAt });
      const expired = await make(past);
      const busy = await make(past);
      const fresh = await make(new Date(Date.now() + 60_000));
      const task = await db.repos.tasks.create(taskInput(acc.id, busy.id));
      const ids = async () => (await db.repos.uploads.listExpired(new Date(), 1000)).map((u) => u.id);
      assert.ok((await ids()).includes(expired.id));
      assert.ok(!(await ids()).includes(busy.id), 'a pending task keeps its upload');
      assert.ok(!(await ids()).includes(fresh.id));
      await db.repos.tasks.finish(task.id, { status: 'canceled' });
      assert.ok((await ids()).includes(busy.id), 'released once the task is terminal');
    });

    test('uploads: with keepLiveInputs, the input of a live release is kept until its links are no longer live', async () => {
      const acc = await account();
      const past = new Date(Date.now() - 1000);
      const input = await db.repos.uploads.create({ id: newFileKey(), accountId: acc.id, filename: 'a.apk', platform: 'android', size: 1, sha256: '00'.repeat(32), blobKey: 'live-input', expiresAt: past });
      const task = await db.repos.tasks.create(taskInput(acc.id, input.id));
      await db.repos.tasks.finish(task.id, { status: 'canceled' });
      const distribution = await db.repos.distributions.create({ accountId: acc.id, taskId: task.id, appId: null, platform: 'android', slug: `slug${Date.now()}${Math.random().toString(36).slice(2)}`, iconBlobKey: null });
      const listed = async (keepLiveInputs: boolean) => (await db.repos.uploads.listExpired(new Date(), 1000, { keepLiveInputs })).some((u) => u.id === input.id);
      assert.equal(await listed(true), false, 'kept while its link is live');
      assert.equal(await listed(false), true, 'without the option it follows the file_key lifetime');
      await db.repos.distributions.update(acc.id, distribution.id, { expiresAt: past });
      assert.equal(await listed(true), true, 'an expired link does not keep it');
      await db.repos.distributions.update(acc.id, distribution.id, { expiresAt: null, enabled: false });
      assert.equal(await listed(true), true, 'a disabled link does not keep it');
      await db.repos.distributions.update(acc.id, distribution.id, { enabled: true });
      assert.equal(await listed(true), false);
    });

    test('apps: upsert keeps one row per (account, platform, bundle id) and groups uploads', async () => {
      const acc = await account();
      const first = await db.repos.apps.upsert({ accountId: acc.id, platform: 'ios', bundleId: 'com.example.a', name: 'A' });
      const again = await db.repos.apps.upsert({ accountId: acc.id, platform: 'ios', bundleId: 'com.example.a', name: null });
      assert.equal(again.id, first.id);
      assert.equal(again.name, 'A', 'a null name keeps the known one');
      const android = await db.repos.apps.upsert({ accountId: acc.id, platform: 'android', bundleId: 'com.example.a', name: 'A2' });
      assert.notEqual(android.id, first.id);
      const renamed = await Promise.all([1, 2, 3].map((n) => db.repos.apps.upsert({ accountId: acc.id, platform: 'ios', bundleId: 'com.example.a', name: `A${n}` })));
      assert.ok(renamed.every((app) => app.id === first.id));
      const listed = await db.repos.apps.list(acc.id, { platform: 'ios' });
      assert.deepEqual(listed.items.map((a) => a.id), [first.id]);
      const up = await upload(acc.id);
      await db.repos.uploads.setApp(up.id, { appId: first.id, bundleId: 'com.example.a', name: 'A', version: '1.0', build: '7' });
      const uploads = await db.repos.uploads.listByApp(acc.id, first.id);
      assert.deepEqual(uploads.items.map((u) => [u.id, u.app_version, u.app_build]), [[up.id, '1.0', '7']]);
    });

    test('tasks: cursor pagination is newest first, stable and filterable by status', async () => {
      const acc = await account();
      const up = await upload(acc.id);
      const created = [];
      for (let i = 0; i < 7; i++) created.push(await db.repos.tasks.create(taskInput(acc.id, up.id)));
      await db.repos.tasks.finish(created[1]!.id, { status: 'canceled' });
      await db.repos.tasks.finish(created[4]!.id, { status: 'canceled' });
      // Ties on created_at are broken by id in the database's own collation; the unpaginated
      // listing is the reference order, and it must be newest first.
      const all = (await db.repos.tasks.list(acc.id, { limit: 100 })).items;
      assert.deepEqual(new Set(all.map((t) => t.id)), new Set(created.map((t) => t.id)));
      assert.ok(all.every((t, i) => i === 0 || all[i - 1]!.created_at >= t.created_at), 'newest first');
      const expected = all.map((t) => t.id);
      const seen: string[] = [];
      let cursor: string | null = null;
      do {
        const page = await db.repos.tasks.list(acc.id, { limit: 3, cursor });
        assert.ok(page.items.length <= 3);
        seen.push(...page.items.map((t) => t.id));
        cursor = page.nextCursor;
      } while (cursor !== null);
      assert.deepEqual(seen, expected);
      const canceled = await db.repos.tasks.list(acc.id, { status: 'canceled' });
      assert.deepEqual(new Set(canceled.items.map((t) => t.id)), new Set([created[1]!.id, created[4]!.id]));
      assert.equal(canceled.nextCursor, null);
      await rejectsWithCode(db.repos.tasks.list(acc.id, { cursor: 'not-a-cursor' }), 'invalid_request');
      const other = await account();
      assert.deepEqual((await db.repos.tasks.list(other.id)).items, []);
      assert.equal(await db.repos.tasks.find(other.id, created[0]!.id), null);
      assert.equal((await db.repos.tasks.find(null, created[0]!.id))?.id, created[0]!.id);
    });

    test('tasks: success records the artifact and identity; a finished task cannot change again', async () => {
      const task = await processingTask();
      const done = await db.repos.tasks.finish(task.id, {
        status: 'succeeded',
        artifact: { blobKey: 'artifacts/x/signed.ipa', size: 2 ** 31 + 5, sha256: 'cd'.repeat(32) },
        app: { bundleId: 'com.example.x', name: 'X', version: '2', build: '9' },
        verification: ['v2'],
      });
      assert.equal(done?.status, 'succeeded');
      assert.equal(done?.artifact_size, 2 ** 31 + 5);
      assert.equal(done?.attempts, 1);
      assert.ok(done?.finished_at);
      assert.equal(await db.repos.tasks.finish(task.id, { status: 'canceled' }), null);
      assert.equal(await db.repos.tasks.start(task.id, 2), null, 'a terminal task is never restarted');
      assert.equal((await db.repos.tasks.find(null, task.id))?.status, 'succeeded');
    });

    test('tasks: success needs a running attempt; hand-back returns it to pending', async () => {
      const acc = await account();
      const up = await upload(acc.id);
      const task = await db.repos.tasks.create(taskInput(acc.id, up.id));
      const success: TaskOutcome = { status: 'succeeded', artifact: { blobKey: 'k', size: 1, sha256: 'x' }, app: { bundleId: null, name: null, version: null, build: null }, verification: [] };
      assert.equal(await db.repos.tasks.finish(task.id, success), null);
      await db.repos.tasks.start(task.id, 1);
      await db.repos.tasks.handBack(task.id);
      assert.equal((await db.repos.tasks.find(null, task.id))?.status, 'pending');
      assert.equal((await db.repos.tasks.start(task.id, 2))?.attempts, 2);
      const failed = await db.repos.tasks.finish(task.id, { status: 'failed', error: { code: 'signing_failed', message: 'boom' } });
      assert.deepEqual([failed?.status, failed?.error_code, failed?.error_message], ['failed', 'signing_failed', 'boom']);
    });

    test('tasks: racing terminal transitions leave exactly one winner', async () => {
      for (let round = 0; round < 10; round++) {
        const task = await processingTask();
        const outcomes = await Promise.all([
          db.repos.tasks.finish(task.id, { status: 'succeeded', artifact: { blobKey: 'k', size: 1, sha256: 's' }, app: { bundleId: null, name: null, version: null, build: null }, verification: [] }),
          db.repos.tasks.finish(task.id, { status: 'failed', error: { code: 'signing_failed', message: 'm' } }),
          db.repos.tasks.finish(task.id, { status: 'canceled' }),
          db.repos.tasks.finish(task.id, { status: 'canceled' }),
        ]);
        const winners = outcomes.filter((row) => row !== null);
        assert.equal(winners.length, 1, `round ${round}: ${winners.length} winners`);
        assert.equal((await db.repos.tasks.find(null, task.id))?.status, winners[0]!.status);
      }
    });

    test('certificates: secrets are sealed at rest and bound to their row and column', async () => {
      const acc = await account();
      const ios = await db.repos.certificates.create({
        accountId: acc.id,
        kind: 'ios_enterprise',
        name: 'Enterprise',
        material: Buffer.from('P12-BYTES-SECRET'),
        password: 'hunter2-password',
        metadata: { subject: 'CN=iPhone Distribution', teamId: 'ABCDE12345', fingerprint: 'ef'.repeat(32), notBefore: null, notAfter: new Date('2030-01-01T00:00:00Z') },
      });
      const { profile } = await db.repos.certificateProfiles.add({ accountId: acc.id, certificateId: ios.id, bytes: Buffer.from('PROFILE-BYTES'), metadata: profileMetadata('UUID-1', 'ABCDE12345.com.example.app') });
      const stored = JSON.stringify([await db.kysely.selectFrom('certificates').selectAll().where('id', '=', ios.id).executeTakeFirst(), await db.kysely.selectFrom('certificate_profiles').selectAll().execute()]);
      for (const plain of ['P12-BYTES-SECRET', 'hunter2-password', 'PROFILE-BYTES']) {
        assert.ok(!stored.includes(plain) && !stored.includes(Buffer.from(plain).toString('base64')), `${plain} stored in clear`);
      }
      const found = await db.repos.certificates.find(acc.id, ios.id);
      assert.equal(found?.not_after, '2030-01-01T00:00:00.000Z');
      const profiles = (await db.repos.certificateProfiles.list(acc.id, ios.id)).map((p) => ({ id: p.id, bytes: db.repos.certificateProfiles.open(p) }));
      assert.deepEqual(db.repos.certificates.credential(found!, profiles), { kind: 'ios_enterprise', p12: Buffer.from('P12-BYTES-SECRET'), password: 'hunter2-password', profiles: [{ id: profile.id, bytes: Buffer.from('PROFILE-BYTES') }] });
      assert.throws(() => db.repos.certificates.credential(found!, []), (error: unknown) => error instanceof AppError && error.code === 'certificate_profile_required');
      const android = await db.repos.certificates.create({ accountId: acc.id, kind: 'android', name: null, material: Buffer.from('JKS'), password: 'store', keyPassword: 'key', keyAlias: 'upload', metadata: { subject: 'CN=x', teamId: null, fingerprint: '01'.repeat(32), notBefore: null, notAfter: null } });
      assert.deepEqual(db.repos.certificates.credential(android), { kind: 'android', keystore: Buffer.from('JKS'), certificate: null, password: 'store', keyPassword: 'key', alias: 'upload' });
      const swapped = { ...android, password_sealed: ios.password_sealed };
      assert.throws(() => db.repos.certificates.credential(swapped), (error: unknown) => error instanceof AppError && error.code === 'internal_error');
      const moved = { ...profile, id: 'prf_other' };
      assert.throws(() => db.repos.certificateProfiles.open(moved), (error: unknown) => error instanceof AppError && error.code === 'internal_error', 'a profile sealed for one row does not open as another');
      const kinds = await db.repos.certificates.list(acc.id, { kind: 'android' });
      assert.deepEqual(kinds.items.map((c) => c.id), [android.id]);
    });

    test('certificate profiles: several per certificate, one row per UUID, the last one kept', async () => {
      const acc = await account();
      const cert = await db.repos.certificates.create({ accountId: acc.id, kind: 'ios_enterprise', name: null, material: Buffer.from('p12'), metadata: { subject: null, teamId: 'T', fingerprint: '03'.repeat(32), notBefore: null, notAfter: null } });
      const add = (uuid: string, appId: string) => db.repos.certificateProfiles.add({ accountId: acc.id, certificateId: cert.id, bytes: Buffer.from(uuid), metadata: profileMetadata(uuid, appId) });
      const [first, second] = await Promise.all([add('UUID-A', 'T.com.example.app'), add('UUID-B', 'T.com.example.app.share')]);
      assert.ok(first.created && second.created);
      const [againA, againB] = await Promise.all([add('UUID-A', 'T.com.example.app'), add('UUID-A', 'T.com.example.app')]);
      assert.equal(againA.created || againB.created, false);
      assert.equal(againA.profile.id, first.profile.id);
      const listed = await db.repos.certificateProfiles.list(acc.id, cert.id);
      assert.deepEqual(listed.map((p) => p.uuid).sort(), ['UUID-A', 'UUID-B']);
      assert.deepEqual(JSON.parse(listed[0]!.entitlements_json!), { 'aps-environment': 'production' });
      const other = await account();
      assert.deepEqual(await db.repos.certificateProfiles.list(other.id, cert.id), [], 'foreign account');
      assert.equal(await db.repos.certificateProfiles.find(other.id, cert.id, first.profile.id), null);
      assert.equal((await db.repos.certificateProfiles.listForCertificates(acc.id, [cert.id])).get(cert.id)?.length, 2);

      const up = await upload(acc.id);
      const task = await db.repos.tasks.create(taskInput(acc.id, up.id, { certificateId: cert.id }));
      await rejectsWithCode(db.repos.certificateProfiles.delete(acc.id, cert.id, first.profile.id), 'certificate_in_use');
      await db.repos.tasks.finish(task.id, { status: 'canceled' });
      // Two concurrent removals of the last two profiles: exactly one wins, one profile stays.
      const outcomes = await Promise.allSettled([db.repos.certificateProfiles.delete(acc.id, cert.id, first.profile.id), db.repos.certificateProfiles.delete(acc.id, cert.id, second.profile.id)]);
      assert.equal(outcomes.filter((o) => o.status === 'fulfilled' && o.value === true).length, 1);
      const refused = outcomes.find((o) => o.status === 'rejected') as PromiseRejectedResult | undefined;
      assert.ok(refused && refused.reason instanceof AppError && refused.reason.code === 'certificate_profile_required', String(refused?.reason));
      assert.equal((await db.repos.certificateProfiles.list(acc.id, cert.id)).length, 1);
      assert.equal(await db.repos.certificateProfiles.delete(acc.id, cert.id, 'prf_missing'), false);
      await db.repos.certificates.delete(acc.id, cert.id);
      assert.equal((await db.kysely.selectFrom('certificate_profiles').select('id').where('certificate_id', '=', cert.id).execute()).length, 0, 'profiles go with their certificate');
    });

    test('developer App IDs: concurrent records meet on one row; capability changes are dated', async () => {
      const acc = await account();
      const dev = await db.repos.developerAccounts.create(developerAccountInput(acc.id));
      const record = (capabilities: string[], changed: boolean) =>
        db.repos.developerAppIds.record({ developerAccountId: dev.id, identifier: 'com.example.app', state: 'registered', ascBundleId: 'BID1', capabilities, changed, detail: null });
      const rows = await Promise.all([record(['PUSH_NOTIFICATIONS'], true), record(['PUSH_NOTIFICATIONS', 'ASSOCIATED_DOMAINS'], true), record(['PUSH_NOTIFICATIONS'], false)]);
      assert.equal(new Set(rows.map((r) => r.id)).size, 1, 'one row per (account, identifier)');
      const changedAt = (await db.repos.developerAppIds.find(dev.id, 'com.example.app'))!.capabilities_changed_at;
      assert.ok(changedAt);
      const later = await record(['ASSOCIATED_DOMAINS', 'PUSH_NOTIFICATIONS'], false);
      assert.equal(later.capabilities_changed_at, changedAt, 'an unchanged record keeps the date');
      assert.deepEqual(JSON.parse(later.capabilities_json), ['ASSOCIATED_DOMAINS', 'PUSH_NOTIFICATIONS']);
      await db.repos.developerAppIds.record({ developerAccountId: dev.id, identifier: 'com.taken.app', state: 'unavailable', ascBundleId: null, capabilities: [], changed: false, detail: 'another team' });
      assert.deepEqual(await db.repos.developerAppIds.unavailable(dev.id, ['com.example.app', 'com.taken.app', 'com.unknown']), ['com.taken.app']);
    });

    test('certificates: deletion is refused while an active task uses it', async () => {
      const acc = await account();
      const cert = await db.repos.certificates.create({ accountId: acc.id, kind: 'android', name: null, material: Buffer.from('k'), metadata: { subject: null, teamId: null, fingerprint: '02'.repeat(32), notBefore: null, notAfter: null } });
      const up = await upload(acc.id);
      const task = await db.repos.tasks.create(taskInput(acc.id, up.id, { certificateId: cert.id }));
      assert.equal(await db.repos.tasks.countActiveByCertificate(cert.id), 1);
      await rejectsWithCode(db.repos.certificates.delete(acc.id, cert.id), 'certificate_in_use');
      await db.repos.tasks.finish(task.id, { status: 'canceled' });
      assert.equal(await db.repos.tasks.countActiveByCertificate(cert.id), 0);
      assert.equal(await db.repos.certificates.delete((await account()).id, cert.id), false, 'foreign account');
      assert.equal(await db.repos.certificates.delete(acc.id, cert.id), true);
      assert.equal(await db.repos.certificates.delete(acc.id, cert.id), false);
      assert.equal((await db.repos.tasks.find(acc.id, task.id))?.certificate_id, null, 'history survives the certificate');
    });

    test('webhook deliveries: every attempt is kept, oldest first', async () => {
      const task = await processingTask();
      for (const attempt of [1, 2]) {
        await db.repos.webhookDeliveries.record({ taskId: task.id, accountId: task.account_id, event: 'task.succeeded', url: 'https://h.example/cb', attempt, outcome: attempt === 2 ? 'delivered' : 'failed', statusCode: attempt === 2 ? 200 : 503, error: attempt === 2 ? null : 'x'.repeat(2000), durationMs: 12.6 });
      }
      const rows = await db.repos.webhookDeliveries.listForTask(task.id);
      assert.deepEqual(rows.map((r) => [r.attempt, r.outcome, r.status_code, r.duration_ms]), [[1, 'failed', 503, 13], [2, 'delivered', 200, 13]]);
      assert.equal(rows[0]!.error?.length, 500);
      const quiet = await db.repos.tasks.create(taskInput(task.account_id, task.upload_id));
      const batch = await db.repos.webhookDeliveries.listForTasks([task.id, quiet.id]);
      assert.deepEqual(batch.get(task.id), rows, 'the batch lookup returns what the single lookup does');
      assert.equal(batch.has(quiet.id), false);
      assert.equal((await db.repos.webhookDeliveries.listForTasks([])).size, 0);
    });

    test('idempotency keys: the first task holding a key wins; purge forgets old keys', async () => {
      const task = await processingTask();
      const second = await db.repos.tasks.create(taskInput(task.account_id, task.upload_id));
      const first = await db.repos.idempotency.remember({ accountId: task.account_id, key: 'K1', requestHash: 'h1', taskId: task.id });
      assert.equal(first.task_id, task.id);
      const again = await db.repos.idempotency.remember({ accountId: task.account_id, key: 'K1', requestHash: 'h2', taskId: second.id });
      assert.deepEqual([again.task_id, again.request_hash], [task.id, 'h1']);
      assert.equal((await db.repos.idempotency.find(task.account_id, 'K1'))?.task_id, task.id);
      assert.equal(await db.repos.idempotency.purge(new Date(Date.now() - 60_000)), 0);
      assert.ok((await db.repos.idempotency.purge(new Date(Date.now() + 1000))) >= 1);
      assert.equal(await db.repos.idempotency.find(task.account_id, 'K1'), null);
    });

    test('distributions: one per task, quota-checked download counts, app links', async () => {
      const task = await processingTask();
      const app = await db.repos.apps.upsert({ accountId: task.account_id, platform: 'ios', bundleId: 'com.example.dist', name: 'D' });
      const input = { accountId: task.account_id, taskId: task.id, appId: app.id, platform: 'ios' as const, slug: `slug-${task.id}`, iconBlobKey: null };
      const first = await db.repos.distributions.create(input);
      const again = await db.repos.distributions.create({ ...input, slug: 'another-slug' });
      assert.equal(again.id, first.id, 'a task has one distribution');
      assert.equal((await db.repos.distributions.findBySlug(first.slug))?.id, first.id);
      assert.equal(await db.repos.distributions.findByTask((await account()).id, task.id), null, 'scoped to the account');
      await db.repos.distributions.update(task.account_id, first.id, { maxDownloads: 2, expiresAt: new Date('2031-05-06T07:08:09Z'), passwordHash: 'scrypt$x' });
      const counts = await Promise.all([1, 2, 3, 4, 5].map(() => db.repos.distributions.countDownload(first.id, new Date('2030-01-02T10:00:00Z'))));
      assert.deepEqual(counts.filter((n) => n !== null).sort(), [1, 2], 'the quota is never overshot');
      assert.deepEqual(await db.repos.distributions.dailyDownloads(first.id), [{ day: '2030-01-02', downloads: 2 }]);
      const updated = await db.repos.distributions.find(task.account_id, first.id);
      assert.deepEqual([updated?.downloads, updated?.expires_at, updated?.password_hash], [2, '2031-05-06T07:08:09.000Z', 'scrypt$x']);
      await db.repos.distributions.update(task.account_id, first.id, { enabled: false, passwordHash: null });
      assert.deepEqual((await db.repos.distributions.listAllForApp(task.account_id, app.id)).items.map((d) => [d.id, d.enabled]), [[first.id, 'no']], 'the history shows disabled links too');
      assert.deepEqual((await db.repos.distributions.listAllForApp((await account()).id, app.id)).items, [], 'scoped to the account');
      const link = await db.repos.distributions.ensureAppLink(task.account_id, app.id, `app-${app.id}`);
      assert.equal((await db.repos.distributions.ensureAppLink(task.account_id, app.id, 'other')).slug, link.slug);
      assert.equal((await db.repos.distributions.findAppLinkBySlug(link.slug))?.app_id, app.id);
    });

    test('distributions: what the package requires, and download starts a client may resume', async () => {
      const task = await processingTask();
      const created = await db.repos.distributions.create({
        accountId: task.account_id, taskId: task.id, appId: null, platform: 'android', slug: `req-${task.id}`, iconBlobKey: null,
        minimumOs: '24', deviceFamilies: null, nativeAbis: ['arm64-v8a'],
      });
      assert.deepEqual([created.minimum_os, created.device_families, created.native_abis], ['24', null, '["arm64-v8a"]']);
      const at = (iso: string) => new Date(iso);
      await db.repos.distributions.recordDownloadStart(created.id, 'client-a', at('2030-01-02T10:00:00Z'), at('2030-01-01T10:00:00Z'));
      assert.equal(await db.repos.distributions.downloadStartedSince(created.id, 'client-a', at('2030-01-02T09:00:00Z')), true);
      assert.equal(await db.repos.distributions.downloadStartedSince(created.id, 'client-a', at('2030-01-02T11:00:00Z')), false, 'too long ago');
      assert.equal(await db.repos.distributions.downloadStartedSince(created.id, 'client-b', at('2030-01-02T09:00:00Z')), false, 'another client');
      // A later start replaces the earlier one, and starts older than the window are forgotten.
      await db.repos.distributions.recordDownloadStart(created.id, 'client-b', at('2030-01-05T10:00:00Z'), at('2030-01-04T10:00:00Z'));
      assert.equal(await db.repos.distributions.downloadStartedSince(created.id, 'client-a', at('2030-01-01T00:00:00Z')), false);
      await db.repos.distributions.recordDownloadStart(created.id, 'client-b', at('2030-01-06T10:00:00Z'), at('2030-01-05T10:00:00Z'));
      assert.equal(await db.repos.distributions.downloadStartedSince(created.id, 'client-b', at('2030-01-06T00:00:00Z')), true);
    });

    test('transactions commit together or not at all', async () => {
      const acc = await account();
      const up = await upload(acc.id);
      await assert.rejects(
        db.transaction(async (tx) => {
          await tx.repos.tasks.create(taskInput(acc.id, up.id));
          throw new Error('roll back');
        }),
        /roll back/,
      );
      assert.deepEqual((await db.repos.tasks.list(acc.id)).items, []);
      const task = await db.transaction((tx) => tx.repos.tasks.create(taskInput(acc.id, up.id)));
      assert.equal((await db.repos.tasks.find(acc.id, task.id))?.status, 'pending');
    });
  });
}
