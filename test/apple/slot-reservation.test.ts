// Device slots are reserved in the database before Apple is asked: concurrent reservations never
// exceed an account's cap, and concurrent arrivals of one UDID share one slot (SQLite and
// PostgreSQL, whose reservations lock the account row).
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { openDatabase, type Db } from '../../src/db/database.ts';
import { createTestPostgres, type TestPostgres } from '../support/postgres.ts';

async function seedAccount(db: Db, slots: number): Promise<string> {
  const tenant = await db.repos.accounts.create(`tenant-${Math.random()}`);
  const row = await db.repos.developerAccounts.create({
    accountId: tenant.id,
    name: null,
    issuerId: '00000000-0000-0000-0000-000000000000',
    keyId: 'KEY0000001',
    p8Pem: 'pem',
    p12: Buffer.from('p12'),
    p12Password: 'pw',
    teamId: 'TEAM000001',
    certificate: { subject: 'CN=x', serial: '1', fingerprint: 'f', notAfter: new Date(Date.now() + 86_400_000) },
    ascCertificateId: 'CERT1',
    slotsPerClass: slots,
    bundleIds: [],
    health: 'ok',
    healthDetail: null,
  });
  return row.id;
}

function reserve(db: Db, developerAccountId: string, udid: string) {
  return db.transaction((tx) => tx.repos.developerAccounts.reserveSlot({ developerAccountId, udid, deviceClass: 'IPHONE', name: null, lock: db.dialect === 'postgres' }));
}

for (const dialect of ['sqlite', 'postgres'] as const) {
  describe(`slot reservation (${dialect})`, () => {
    let db: Db;
    let cleanup: () => Promise<void>;
    before(async () => {
      if (dialect === 'sqlite') {
        const dataDir = await mkdtemp(path.join(tmpdir(), 'signet-slots-'));
        db = await openDatabase({ dataDir, databaseUrl: null, masterKey: null });
        cleanup = () => rm(dataDir, { recursive: true, force: true });
      } else {
        const pg: TestPostgres = await createTestPostgres();
        db = await openDatabase({ dataDir: await mkdtemp(path.join(tmpdir(), 'signet-slots-')), databaseUrl: pg.url, masterKey: null });
        cleanup = () => pg.drop();
      }
    });
    after(async () => {
      await db?.close();
      await cleanup?.();
    });

    it('never reserves more slots than the cap, however many devices arrive at once', async () => {
      const id = await seedAccount(db, 5);
      const results = await Promise.all(Array.from({ length: 12 }, (_, i) => reserve(db, id, `00008030-${String(i).padStart(16, '0')}`)));
      assert.equal(results.filter((r) => r?.reserved).length, 5);
      assert.equal(results.filter((r) => r === null).length, 7);
      assert.equal((await db.repos.developerAccounts.usage(id)).IPHONE, 5);
    });

    it('gives concurrent arrivals of one UDID one slot', async () => {
      const id = await seedAccount(db, 100);
      const results = await Promise.all(Array.from({ length: 6 }, () => reserve(db, id, '00008030-00000000000000FF')));
      assert.equal(results.filter((r) => r?.reserved).length, 1);
      assert.equal(new Set(results.map((r) => r?.device.id)).size, 1);
      assert.equal((await db.repos.developerAccounts.usage(id)).IPHONE, 1);
    });

    it('releases a reservation Apple refused, but never a registered device', async () => {
      const id = await seedAccount(db, 100);
      const reserved = (await reserve(db, id, '00008030-0000000000000ABC'))!;
      const registered = (await reserve(db, id, '00008030-0000000000000DEF'))!;
      await db.repos.developerAccounts.updateDevice(registered.device.id, { status: 'ENABLED', ascDeviceId: 'D1' });
      await db.repos.developerAccounts.releaseReservation(reserved.device.id);
      await db.repos.developerAccounts.releaseReservation(registered.device.id);
      assert.equal((await db.repos.developerAccounts.usage(id)).IPHONE, 1);
      assert.deepEqual((await db.repos.developerAccounts.enabledDevices(id)).map((d) => d.asc_device_id), ['D1']);
    });
  });
}
