// The provisioning profiles of iOS enterprise certificates (several per certificate: the app and
// each extension may have their own explicit App ID). The profile bytes are sealed; the metadata
// beside them (App ID, type, expiry, entitlements) is what profiles show anyone they are given
// to, so listings never decrypt.
import type { Kysely } from 'kysely';
import { AppError } from '../../errors.ts';
import { newId } from '../ids.ts';
import type { CertificateProfileRow } from '../profile-tables.ts';
import type { Database } from '../schema.ts';
import type { SecretBox } from '../secret-box.ts';
import { nowIso } from './pagination.ts';

export interface ProfileMetadata {
  name: string | null;
  uuid: string;
  appId: string | null;
  type: string | null;
  teamId: string | null;
  expiresAt: Date | null;
  /** The entitlements the profile grants, as plain JSON. */
  entitlements: unknown;
}

export interface NewCertificateProfile {
  accountId: string;
  certificateId: string;
  /** The .mobileprovision; sealed before it touches the database. */
  bytes: Buffer;
  metadata: ProfileMetadata;
}

export interface CertificateProfileRepository {
  /**
   * Attaches a profile to a certificate. The same profile (UUID) attached twice is one row:
   * the existing row is returned with `created: false`.
   */
  add(input: NewCertificateProfile): Promise<{ profile: CertificateProfileRow; created: boolean }>;
  /** The certificate's profiles, oldest first. */
  list(accountId: string, certificateId: string): Promise<CertificateProfileRow[]>;
  /** The profiles of several certificates in one query (listings), by certificate id. */
  listForCertificates(accountId: string, certificateIds: readonly string[]): Promise<Map<string, CertificateProfileRow[]>>;
  find(accountId: string, certificateId: string, id: string): Promise<CertificateProfileRow | null>;
  /**
   * Detaches a profile. AppError `certificate_in_use` while pending/processing tasks use the
   * certificate, `certificate_profile_required` for its last profile. False if missing.
   */
  delete(accountId: string, certificateId: string, id: string): Promise<boolean>;
  /** The decrypted .mobileprovision. */
  open(row: CertificateProfileRow): Buffer;
  /** Records what only the sealed bytes held for a profile carried over by migration 0008. */
  fillMetadata(id: string, metadata: Pick<ProfileMetadata, 'uuid' | 'entitlements'>): Promise<void>;
}

// The ciphertext is bound to the row it was sealed for (GCM additional data): this profile row,
// or, for profiles uploaded before migration 0008, their certificate row.
function context(row: Pick<CertificateProfileRow, 'id' | 'certificate_id' | 'sealed_as'>): string {
  return row.sealed_as === 'certificate' ? `certificates.profile_sealed:${row.certificate_id}` : `certificate_profiles.profile_sealed:${row.id}`;
}

export function certificateProfileRepository(db: Kysely<Database>, box: SecretBox): CertificateProfileRepository {
  const find = async (accountId: string, certificateId: string, id: string) =>
    (await db.selectFrom('certificate_profiles').selectAll().where('id', '=', id).where('certificate_id', '=', certificateId).where('account_id', '=', accountId).executeTakeFirst()) ?? null;
  const byUuid = async (certificateId: string, uuid: string) =>
    (await db.selectFrom('certificate_profiles').selectAll().where('certificate_id', '=', certificateId).where('uuid', '=', uuid).executeTakeFirst()) ?? null;

  return {
    async add(input) {
      const existing = await byUuid(input.certificateId, input.metadata.uuid);
      if (existing) return { profile: existing, created: false };
      const id = newId('prf');
      const m = input.metadata;
      const row: CertificateProfileRow = {
        id,
        certificate_id: input.certificateId,
        account_id: input.accountId,
        profile_sealed: box.seal(input.bytes, context({ id, certificate_id: input.certificateId, sealed_as: 'profile' })),
        sealed_as: 'profile',
        name: m.name,
        uuid: m.uuid,
        app_id: m.appId,
        type: m.type,
        team_id: m.teamId,
        expires_at: m.expiresAt ? nowIso(m.expiresAt) : null,
        entitlements_json: JSON.stringify(m.entitlements),
        created_at: nowIso(),
      };
      try {
        await db.insertInto('certificate_profiles').values(row).execute();
        return { profile: row, created: true };
      } catch (error) {
        // The same profile attached concurrently: the (certificate, uuid) key keeps one row.
        const winner = await byUuid(input.certificateId, m.uuid);
        if (winner) return { profile: winner, created: false };
        throw error;
      }
    },

    async list(accountId, certificateId) {
      return db
        .selectFrom('certificate_profiles')
        .selectAll()
        .where('certificate_id', '=', certificateId)
        .where('account_id', '=', accountId)
        .orderBy('created_at', 'asc')
        .orderBy('id', 'asc')
        .execute();
    },

    async listForCertificates(accountId, certificateIds) {
      const out = new Map<string, CertificateProfileRow[]>();
      if (certificateIds.length === 0) return out;
      const rows = await db
        .selectFrom('certificate_profiles')
        .selectAll()
        .where('certificate_id', 'in', [...certificateIds])
        .where('account_id', '=', accountId)
        .orderBy('created_at', 'asc')
        .orderBy('id', 'asc')
        .execute();
      for (const row of rows) out.set(row.certificate_id, [...(out.get(row.certificate_id) ?? []), row]);
      return out;
    },

    find,

    async delete(accountId, certificateId, id) {
      const remove = async (trx: Kysely<Database>): Promise<boolean> => {
        // Removals of one certificate's profiles take turns (the no-op UPDATE row-locks the
        // certificate on PostgreSQL; SQLite has one writer): two concurrent removals of the last
        // two profiles cannot both see "another one remains".
        await trx.updateTable('certificates').set((eb) => ({ id: eb.ref('id') })).where('id', '=', certificateId).where('account_id', '=', accountId).execute();
        const result = await trx
          .deleteFrom('certificate_profiles')
          .where('id', '=', id)
          .where('certificate_id', '=', certificateId)
          .where('account_id', '=', accountId)
          .where(({ not, exists, selectFrom }) =>
            not(exists(selectFrom('tasks').select('tasks.id').where('tasks.certificate_id', '=', certificateId).where('tasks.status', 'in', ['pending', 'processing']))),
          )
          .where(({ exists, selectFrom }) =>
            exists(selectFrom('certificate_profiles as other').select('other.id').where('other.certificate_id', '=', certificateId).where('other.id', '!=', id)),
          )
          .executeTakeFirst();
        return result.numDeletedRows > 0n;
      };
      if (await (db.isTransaction ? remove(db) : db.transaction().execute(remove))) return true;
      if ((await find(accountId, certificateId, id)) === null) return false;
      const busy = await db.selectFrom('tasks').select('id').where('certificate_id', '=', certificateId).where('status', 'in', ['pending', 'processing']).executeTakeFirst();
      if (busy) throw new AppError('certificate_in_use', 'Pending or processing tasks use this certificate; remove the profile once they have finished.', { details: { certificate_id: certificateId } });
      throw new AppError('certificate_profile_required', 'This is the certificate\'s last provisioning profile; attach its replacement first.', { details: { certificate_id: certificateId, profile_id: id } });
    },

    open(row) {
      return box.open(row.profile_sealed, context(row));
    },

    async fillMetadata(id, metadata) {
      await db
        .updateTable('certificate_profiles')
        .set({ uuid: metadata.uuid, entitlements_json: JSON.stringify(metadata.entitlements) })
        .where('id', '=', id)
        .where('uuid', 'is', null)
        .execute();
    },
  };
}
