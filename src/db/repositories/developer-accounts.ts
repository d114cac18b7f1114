// Apple developer accounts and the devices registered in them. The .p8 key, the .p12 and its
// password are sealed before insert (context binds row id and column) and opened only by
// `secrets()`, right before an App Store Connect call or a signing run.
//
// Device slots: a row in developer_devices IS a slot (Apple counts every device ever added to a
// class in the membership year, disabled ones included). `reserveSlot` inserts a `reserved` row
// only while the class has fewer rows than the account's cap, inside the caller's transaction:
// on PostgreSQL the account row is locked FOR UPDATE first so concurrent reservations for one
// account are serialised; SQLite has a single writer already. A concurrent reservation of the
// same UDID hits the (account, udid) unique key and returns the row that won.
import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database } from '../schema.ts';
import type { SecretBox } from '../secret-box.ts';
import type { DeveloperAccountHealth, DeveloperAccountRow, DeveloperDeviceRow, DeveloperDeviceStatus } from '../super-tables.ts';
import { nowIso } from './pagination.ts';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** `prefix_` + 22 base62 characters, like src/db/ids.ts newId (whose prefix list is closed). */
export function superId(prefix: 'dac' | 'ddv' | 'dai' | 'spf' | 'sbd' | 'enr' | 'stp'): string {
  let out = '';
  while (out.length < 22) for (const byte of randomBytes(32)) if (byte < 248 && out.length < 22) out += BASE62[byte % 62];
  return `${prefix}_${out}`;
}

type SealedColumn = 'p8_sealed' | 'p12_sealed' | 'p12_password_sealed';
const context = (id: string, column: SealedColumn): string => `developer_accounts.${column}:${id}`;

export interface NewDeveloperAccount {
  accountId: string;
  name: string | null;
  issuerId: string;
  keyId: string;
  p8Pem: string;
  p12: Buffer;
  p12Password: string | null;
  teamId: string;
  certificate: { subject: string; serial: string; fingerprint: string; notAfter: Date };
  ascCertificateId: string;
  slotsPerClass: number;
  bundleIds: Array<{ id: string; identifier: string }>;
  health: DeveloperAccountHealth;
  healthDetail: string | null;
}

export interface DeveloperAccountSecrets {
  p8Pem: string;
  p12: Buffer;
  p12Password: string;
}

export interface SyncedDevice {
  udid: string;
  deviceClass: string;
  status: string;
  ascDeviceId: string;
  name: string | null;
}

export interface DeveloperAccountRepository {
  create(input: NewDeveloperAccount): Promise<DeveloperAccountRow>;
  find(accountId: string, id: string): Promise<DeveloperAccountRow | null>;
  /** Worker side: no tenant scope. */
  findById(id: string): Promise<DeveloperAccountRow | null>;
  /** Every developer account of the tenant, oldest first (the pool's stable order). */
  list(accountId: string): Promise<DeveloperAccountRow[]>;
  delete(accountId: string, id: string): Promise<boolean>;
  setHealth(id: string, health: DeveloperAccountHealth, detail: string | null): Promise<void>;
  setBundleIds(id: string, bundleIds: Array<{ id: string; identifier: string }>): Promise<void>;
  secrets(row: DeveloperAccountRow): DeveloperAccountSecrets;
  /** Slots used (reserved included) per device class. */
  usage(id: string): Promise<Record<string, number>>;
  /** Records devices Apple already has (sync); existing rows get Apple's status and id. */
  syncDevices(id: string, devices: readonly SyncedDevice[]): Promise<void>;
  findDevice(developerAccountId: string, udid: string): Promise<DeveloperDeviceRow | null>;
  /** Rows of this UDID in any of the tenant's developer accounts. */
  findDeviceInAccounts(accountId: string, udid: string): Promise<DeveloperDeviceRow[]>;
  /**
   * Reserves a slot for the UDID (see the file comment). Returns the existing row when the UDID
   * already has one, the new `reserved` row, or null when the class is full. Call inside a
   * transaction.
   */
  reserveSlot(input: { developerAccountId: string; udid: string; deviceClass: string; name: string | null; lock: boolean }): Promise<{ device: DeveloperDeviceRow; reserved: boolean } | null>;
  updateDevice(id: string, patch: { status?: DeveloperDeviceStatus; ascDeviceId?: string; deviceClass?: string }): Promise<DeveloperDeviceRow | null>;
  /** Gives a slot back when Apple refused the device before consuming it (still `reserved`). */
  releaseReservation(id: string): Promise<void>;
  /** Devices that can go into a profile: ENABLED at Apple. */
  enabledDevices(developerAccountId: string): Promise<DeveloperDeviceRow[]>;
  /** A new distribution identity (rotation): sealed like at creation; health back to ok. */
  replaceCertificate(id: string, input: { p12: Buffer; p12Password: string | null; certificate: NewDeveloperAccount['certificate']; ascCertificateId: string }): Promise<DeveloperAccountRow | null>;
}

export function developerAccountRepository(db: Kysely<Database>, box: SecretBox): DeveloperAccountRepository {
  const open = (row: DeveloperAccountRow, column: SealedColumn): Buffer | null => {
    const sealed = row[column];
    return sealed === null ? null : box.open(sealed, context(row.id, column));
  };
  const findDevice = async (developerAccountId: string, udid: string) =>
    (await db.selectFrom('developer_devices').selectAll().where('developer_account_id', '=', developerAccountId).where('udid', '=', udid).executeTakeFirst()) ?? null;

  return {
    async create(input) {
      const id = superId('dac');
      const now = nowIso();
      const row: DeveloperAccountRow = {
        id,
        account_id: input.accountId,
        name: input.name,
        issuer_id: input.issuerId,
        key_id: input.keyId,
        p8_sealed: box.seal(input.p8Pem, context(id, 'p8_sealed')),
        p12_sealed: box.seal(input.p12, context(id, 'p12_sealed')),
        p12_password_sealed: input.p12Password === null ? null : box.seal(input.p12Password, context(id, 'p12_password_sealed')),
        team_id: input.teamId,
        certificate_subject: input.certificate.subject,
        certificate_serial: input.certificate.serial,
        certificate_fingerprint: input.certificate.fingerprint,
        certificate_not_after: nowIso(input.certificate.notAfter),
        asc_certificate_id: input.ascCertificateId,
        health: input.health,
        health_detail: input.healthDetail,
        slots_per_class: input.slotsPerClass,
        bundle_ids_json: JSON.stringify(input.bundleIds),
        checked_at: now,
        created_at: now,
        updated_at: now,
        health_state: null,
        health_changed_at: null,
      };
      await db.insertInto('developer_accounts').values(row).execute();
      return row;
    },

    async find(accountId, id) {
      return (await db.selectFrom('developer_accounts').selectAll().where('id', '=', id).where('account_id', '=', accountId).executeTakeFirst()) ?? null;
    },

    async findById(id) {
      return (await db.selectFrom('developer_accounts').selectAll().where('id', '=', id).executeTakeFirst()) ?? null;
    },

    async list(accountId) {
      return db.selectFrom('developer_accounts').selectAll().where('account_id', '=', accountId).orderBy('created_at', 'asc').orderBy('id', 'asc').execute();
    },

    async delete(accountId, id) {
      const result = await db.deleteFrom('developer_accounts').where('id', '=', id).where('account_id', '=', accountId).executeTakeFirst();
      return result.numDeletedRows > 0n;
    },

    async replaceCertificate(id, input) {
      const now = nowIso();
      await db
        .updateTable('developer_accounts')
        .set({
          p12_sealed: box.seal(input.p12, context(id, 'p12_sealed')),
          p12_password_sealed: input.p12Password === null ? null : box.seal(input.p12Password, context(id, 'p12_password_sealed')),
          certificate_subject: input.certificate.subject,
          certificate_serial: input.certificate.serial,
          certificate_fingerprint: input.certificate.fingerprint,
          certificate_not_after: nowIso(input.certificate.notAfter),
          asc_certificate_id: input.ascCertificateId,
          health: 'ok',
          health_detail: null,
          health_state: null,
          checked_at: now,
          updated_at: now,
        })
        .where('id', '=', id)
        .execute();
      return (await db.selectFrom('developer_accounts').selectAll().where('id', '=', id).executeTakeFirst()) ?? null;
    },

    async setHealth(id, health, detail) {
      const now = nowIso();
      await db.updateTable('developer_accounts').set({ health, health_detail: detail, checked_at: now, updated_at: now }).where('id', '=', id).execute();
    },

    async setBundleIds(id, bundleIds) {
      await db.updateTable('developer_accounts').set({ bundle_ids_json: JSON.stringify(bundleIds), updated_at: nowIso() }).where('id', '=', id).execute();
    },

    secrets(row) {
      const p8 = open(row, 'p8_sealed');
      const p12 = open(row, 'p12_sealed');
      if (p8 === null || p12 === null) throw new Error(`developer account ${row.id} lacks its key material`);
      return { p8Pem: p8.toString('utf8'), p12, p12Password: open(row, 'p12_password_sealed')?.toString('utf8') ?? '' };
    },

    async usage(id) {
      const rows = await db
        .selectFrom('developer_devices')
        .select(['device_class', (eb) => eb.fn.countAll<number>().as('n')])
        .where('developer_account_id', '=', id)
        .groupBy('device_class')
        .execute();
      return Object.fromEntries(rows.map((r) => [r.device_class, Number(r.n)]));
    },

    async syncDevices(id, devices) {
      const now = nowIso();
      for (const device of devices) {
        const existing = await findDevice(id, device.udid);
        if (existing) {
          await db
            .updateTable('developer_devices')
            .set({ status: device.status, asc_device_id: device.ascDeviceId, device_class: device.deviceClass, updated_at: now })
            .where('id', '=', existing.id)
            .execute();
        } else {
          await db
            .insertInto('developer_devices')
            .values({ id: superId('ddv'), developer_account_id: id, udid: device.udid, device_class: device.deviceClass, status: device.status, asc_device_id: device.ascDeviceId, name: device.name, created_at: now, updated_at: now })
            .execute();
        }
      }
    },

    findDevice,

    async findDeviceInAccounts(accountId, udid) {
      return db
        .selectFrom('developer_devices')
        .innerJoin('developer_accounts', 'developer_accounts.id', 'developer_devices.developer_account_id')
        .selectAll('developer_devices')
        .where('developer_accounts.account_id', '=', accountId)
        .where('developer_devices.udid', '=', udid)
        .orderBy('developer_devices.created_at', 'asc')
        .execute();
    },

    async reserveSlot(input) {
      if (input.lock) {
        await db.selectFrom('developer_accounts').select('id').where('id', '=', input.developerAccountId).forUpdate().executeTakeFirst();
      }
      const existing = await findDevice(input.developerAccountId, input.udid);
      if (existing) return { device: existing, reserved: false };
      const account = await db.selectFrom('developer_accounts').select('slots_per_class').where('id', '=', input.developerAccountId).executeTakeFirst();
      if (!account) return null;
      const used = await db
        .selectFrom('developer_devices')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('developer_account_id', '=', input.developerAccountId)
        .where('device_class', '=', input.deviceClass)
        .executeTakeFirstOrThrow();
      if (Number(used.n) >= account.slots_per_class) return null;
      const now = nowIso();
      const row: DeveloperDeviceRow = {
        id: superId('ddv'),
        developer_account_id: input.developerAccountId,
        udid: input.udid,
        device_class: input.deviceClass,
        status: 'reserved',
        asc_device_id: null,
        name: input.name,
        created_at: now,
        updated_at: now,
      };
      await db.insertInto('developer_devices').values(row).execute();
      return { device: row, reserved: true };
    },

    async updateDevice(id, patch) {
      const set: Record<string, string> = { updated_at: nowIso() };
      if (patch.status !== undefined) set.status = patch.status;
      if (patch.ascDeviceId !== undefined) set.asc_device_id = patch.ascDeviceId;
      if (patch.deviceClass !== undefined) set.device_class = patch.deviceClass;
      await db.updateTable('developer_devices').set(set).where('id', '=', id).execute();
      return (await db.selectFrom('developer_devices').selectAll().where('id', '=', id).executeTakeFirst()) ?? null;
    },

    async releaseReservation(id) {
      await db.deleteFrom('developer_devices').where('id', '=', id).where('status', '=', 'reserved').execute();
    },

    async enabledDevices(developerAccountId) {
      return db
        .selectFrom('developer_devices')
        .selectAll()
        .where('developer_account_id', '=', developerAccountId)
        .where('status', '=', 'ENABLED')
        .where('asc_device_id', 'is not', null)
        .orderBy('created_at', 'asc')
        .execute();
    },
  };
}
