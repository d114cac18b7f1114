// Signing credentials. Private material and passwords are sealed before insert and only
// opened by `credential()`, i.e. by the worker right before signing; listings never decrypt.
import type { Kysely } from 'kysely';
import { AppError } from '../../errors.ts';
import type { Credential } from '../credential.ts';
import { newId } from '../ids.ts';
import type { CertificateKind, CertificateRow, Database } from '../schema.ts';
import type { SecretBox } from '../secret-box.ts';
import { before, decodeCursor, nowIso, pageLimit, toPage, type Page, type PageRequest } from './pagination.ts';

export interface NewCertificateInput {
  accountId: string;
  kind: CertificateKind;
  name: string | null;
  /** Plaintext secrets; sealed with the SecretBox before they touch the database. */
  material: Buffer;
  certificate?: Buffer | null;
  password?: string | null;
  keyPassword?: string | null;
  keyAlias?: string | null;
  metadata: {
    subject: string | null;
    teamId: string | null;
    fingerprint: string;
    notBefore: Date | null;
    notAfter: Date | null;
  };
}

export interface CertificateRepository {
  create(input: NewCertificateInput): Promise<CertificateRow>;
  find(accountId: string, id: string): Promise<CertificateRow | null>;
  list(accountId: string, page?: PageRequest & { kind?: CertificateKind }): Promise<Page<CertificateRow>>;
  /** Deletes; AppError `certificate_in_use` while pending/processing tasks use it. False if missing. */
  delete(accountId: string, id: string): Promise<boolean>;
  /**
   * Decrypts the signing material into the Signer's Credential shape; an iOS certificate's
   * profiles are opened by the certificateProfiles repository and passed in.
   */
  credential(row: CertificateRow, profiles?: ReadonlyArray<{ id: string; bytes: Buffer }>): Credential;
}

type SealedColumn = 'material_sealed' | 'certificate_sealed' | 'password_sealed' | 'key_password_sealed';

// The row id and column are bound into each ciphertext (GCM additional data), so sealed values
// cannot be swapped between columns or certificates.
const context = (id: string, column: SealedColumn): string => `certificates.${column}:${id}`;
const iso = (date: Date | null | undefined): string | null => (date ? nowIso(date) : null);

export function certificateRepository(db: Kysely<Database>, box: SecretBox): CertificateRepository {
  const seal = (id: string, column: SealedColumn, value: Buffer | string | null | undefined): string | null =>
    value === null || value === undefined ? null : box.seal(value, context(id, column));
  const open = (row: CertificateRow, column: SealedColumn): Buffer | null => {
    const sealed = row[column];
    return sealed === null ? null : box.open(sealed, context(row.id, column));
  };

  return {
    async create(input) {
      const id = newId('crt');
      const m = input.metadata;
      const row: CertificateRow = {
        id,
        account_id: input.accountId,
        kind: input.kind,
        name: input.name,
        material_sealed: box.seal(input.material, context(id, 'material_sealed')),
        certificate_sealed: seal(id, 'certificate_sealed', input.certificate),
        password_sealed: seal(id, 'password_sealed', input.password),
        key_password_sealed: seal(id, 'key_password_sealed', input.keyPassword),
        key_alias: input.keyAlias ?? null,
        // Profiles live in certificate_profiles since migration 0008.
        profile_sealed: null,
        subject: m.subject,
        team_id: m.teamId,
        fingerprint: m.fingerprint,
        not_before: iso(m.notBefore),
        not_after: iso(m.notAfter),
        profile_name: null,
        profile_app_id: null,
        profile_type: null,
        profile_expires_at: null,
        created_at: nowIso(),
        health_state: null,
        health_changed_at: null,
      };
      await db.insertInto('certificates').values(row).execute();
      return row;
    },

    async find(accountId, id) {
      return (
        (await db.selectFrom('certificates').selectAll().where('id', '=', id).where('account_id', '=', accountId).executeTakeFirst()) ??
        null
      );
    },

    async list(accountId, page) {
      const limit = pageLimit(page);
      const cursor = decodeCursor(page?.cursor);
      let query = db.selectFrom('certificates').selectAll().where('account_id', '=', accountId);
      if (page?.kind !== undefined) query = query.where('kind', '=', page.kind);
      if (cursor !== null) query = query.where(before('created_at', 'id', cursor));
      const rows = await query.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(limit + 1).execute();
      return toPage(rows, limit, (row) => row.created_at);
    },

    async delete(accountId, id) {
      // One statement: the in-use check and the delete cannot be split by a task created between them.
      const result = await db
        .deleteFrom('certificates')
        .where('id', '=', id)
        .where('account_id', '=', accountId)
        .where(({ not, exists, selectFrom }) =>
          not(
            exists(
              selectFrom('tasks')
                .select('tasks.id')
                .where('tasks.certificate_id', '=', id)
                .where('tasks.status', 'in', ['pending', 'processing']),
            ),
          ),
        )
        .executeTakeFirst();
      if (result.numDeletedRows > 0n) return true;
      const stillThere = await db
        .selectFrom('certificates')
        .select('id')
        .where('id', '=', id)
        .where('account_id', '=', accountId)
        .executeTakeFirst();
      if (stillThere !== undefined) throw new AppError('certificate_in_use', undefined, { details: { certificate_id: id } });
      return false;
    },

    credential(row, profiles = []) {
      const material = open(row, 'material_sealed');
      if (material === null) throw new AppError('internal_error', `certificate ${row.id} has no key material`);
      const text = (column: SealedColumn): string | null => open(row, column)?.toString('utf8') ?? null;
      // Every iOS kind signs the same way (p12 + profiles); the signer's credential shape is one.
      if (row.kind !== 'android') {
        if (profiles.length === 0) throw new AppError('certificate_profile_required', `Certificate ${row.id} has no provisioning profile; attach one with POST /v1/certificates/${row.id}/profiles.`);
        return { kind: 'ios_enterprise', p12: material, password: text('password_sealed') ?? '', profiles: profiles.map((p) => ({ id: p.id, bytes: p.bytes })) } satisfies Credential;
      }
      return {
        kind: 'android',
        keystore: material,
        certificate: open(row, 'certificate_sealed'),
        password: text('password_sealed'),
        keyPassword: text('key_password_sealed'),
        alias: row.key_alias,
      } satisfies Credential;
    },
  };
}
