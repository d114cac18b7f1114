// Tasks: creation (validation, certificate choice, idempotency, enqueueing in one transaction),
// reading, listing, canceling, and the signed artifact. The worker side lives in worker.ts.
import type { Readable } from 'node:stream';
import type { Kysely } from 'kysely';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Db } from '../db/database.ts';
import type { Repositories } from '../db/repositories.ts';
import { sha256Hex } from '../db/ids.ts';
import { allRows } from '../db/repositories/pagination.ts';
import { IOS_CERTIFICATE_KINDS, type CertificateKind, type CertificateRow, type Database, type Platform, type TaskRow, type TaskStatus, type WebhookDeliveryRow } from '../db/schema.ts';
import { AppError } from '../errors.ts';
import { SigningError } from '../signing/errors.ts';
import { appIdPatternMatches } from '../signing/ios/profile/checks.ts';
import type { JobQueue } from '../queue/job-queue.ts';
import type { BlobStore } from '../storage/blob-store.ts';
import type { CertType } from './signer.ts';
import type { Principal } from './principal.ts';
import { OutboundAllowList, validateOutboundUrl, type OutboundOptions } from './outbound.ts';
import type { TaskLinksView } from '../distribution/service.ts';

export interface CreateTaskInput {
  /** The upload's id (`tmp_…`; the API calls it file_key). */
  fileKey: string;
  certType: CertType;
  certificateId?: string;
  callbackUrl?: string;
  /** iOS enterprise: the certificate profile (`prf_…`) per bundle id, overriding the matching rule. */
  profiles?: Record<string, string>;
  /** Release notes (normalised by release-notes.ts); absent: the upload's. */
  notes?: string | null;
}

/** A task with the webhook deliveries made for it, oldest first. */
export interface TaskRecord {
  task: TaskRow;
  deliveries: readonly WebhookDeliveryRow[];
  /** Where a succeeded task's release installs from (null: not succeeded, or not published). */
  links: TaskLinksView | null;
}

export interface ArtifactHandle {
  size: number;
  sha256: string;
  fileName: string;
  contentType: string;
  open(range: { start: number; end: number } | null): Promise<Readable>;
}

const TERMINAL: readonly TaskStatus[] = ['succeeded', 'failed', 'canceled'];

/** One step of a followed task: a change of status or attempt, then the whole task once it ended. */
export type TaskEvent = { event: 'status'; task: TaskRow } | { event: 'task'; record: TaskRecord };

/** The certificate kind a (platform, cert_type) pair signs with, or null when none can. */
function certificateKindFor(platform: Platform, certType: CertType): CertificateKind | null {
  if (platform === 'android') return certType === 'enterprise' ? 'android' : null;
  return certType === 'enterprise' ? 'ios_enterprise' : null;
}

/**
 * Key order must not matter for "the same body": hash a canonical form. With `fileSha256`, the
 * file_key is replaced by the uploaded file's SHA-256, so a retried pipeline step that uploads
 * the same file again (a new file_key) and repeats its Idempotency-Key gets its first task back.
 */
function requestHash(input: CreateTaskInput, fileSha256?: string): string {
  const sorted = (o: object) => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined).sort(([a], [b]) => a.localeCompare(b)));
  const body = fileSha256 === undefined ? input : { ...input, fileKey: undefined, fileSha256 };
  const canonical = sorted({ ...body, ...(input.profiles ? { profiles: sorted(input.profiles) } : {}) });
  return sha256Hex(JSON.stringify(canonical));
}

class IdempotencyRace extends Error {
  readonly winner: string;
  readonly sameBody: boolean;
  constructor(winner: string, sameBody: boolean) {
    super('idempotency key taken concurrently');
    this.winner = winner;
    this.sameBody = sameBody;
  }
}

export interface TaskServiceOptions {
  db: Db;
  queue: JobQueue;
  blobs: BlobStore;
  now?: () => Date;
  /** Super signature: whether the account has a usable Apple developer account (absent: never). */
  hasDeveloperAccount?: (accountId: string) => Promise<boolean>;
  /** Pending + processing tasks one account may have; 0: no quota. */
  pendingTaskQuota?: number;
  /** Which callback_url destinations are acceptable (default: public addresses only). */
  outbound?: OutboundOptions;
  /** A succeeded task's install links (publishing them if needed); absent: tasks show none. */
  links?: (task: TaskRow) => Promise<TaskLinksView | null>;
}

export class TaskService {
  private readonly options: TaskServiceOptions;
  private readonly now: () => Date;
  private readonly cancelListeners = new Set<(taskId: string) => void>();

  constructor(options: TaskServiceOptions) {
    this.options = options;
    this.now = options.now ?? (() => new Date());
  }

  async create(principal: Principal, input: CreateTaskInput, idempotencyKey: string | null): Promise<TaskRow> {
    const { db, queue } = this.options;
    const notes = input.notes;
    const given = await db.repos.uploads.find(principal.accountId, input.fileKey);
    const hash = requestHash(input, given?.sha256);
    if (idempotencyKey !== null) {
      const previous = await db.repos.idempotency.find(principal.accountId, idempotencyKey);
      // Keys stored before hashes named the file's content hashed the file_key itself.
      if (previous) return this.replay(principal, previous.task_id, previous.request_hash === hash || previous.request_hash === requestHash(input));
    }

    if (input.callbackUrl !== undefined) validateOutboundUrl(input.callbackUrl, 'callback_url', this.options.outbound ?? { allow: new OutboundAllowList('') });
    const quota = this.options.pendingTaskQuota ?? 0;
    if (quota > 0 && (await db.repos.tasks.countActiveByAccount(principal.accountId, quota)) >= quota) {
      throw new AppError('task_quota_exceeded', `The account already has ${quota} pending or processing tasks, its quota; wait for some to finish.`, { details: { quota } });
    }
    const upload = given;
    if (!upload) throw new AppError('file_key_not_found', `No upload with file_key ${input.fileKey}.`);
    if (Date.parse(upload.expires_at) <= this.now().getTime()) {
      throw new AppError('file_key_expired', `The upload ${input.fileKey} expired at ${upload.expires_at}; upload the file again.`);
    }
    const kind = certificateKindFor(upload.platform, input.certType);
    if (upload.platform === 'android' && input.certType === 'super') {
      throw new AppError('cert_type_unsupported', 'cert_type "super" applies to iOS only; sign an APK with cert_type "enterprise".');
    }
    // A super task signs with the account's Apple developer accounts (chosen per device), not a certificate row.
    const certificate = input.certType === 'super' ? await this.requireDeveloperAccount(principal) : await this.chooseCertificate(principal, kind, input);
    const options = input.profiles === undefined ? {} : { profiles: await this.checkProfileChoice(principal, certificate, input.profiles) };

    try {
      const task = await db.transaction(async (tx) => {
        const row = await tx.repos.tasks.create({
          accountId: principal.accountId,
          platform: upload.platform,
          uploadId: upload.id,
          inputBlobKey: upload.blob_key,
          inputFilename: upload.filename,
          certificateId: certificate?.id ?? null,
          certType: input.certType,
          options,
          callbackUrl: input.callbackUrl ?? null,
          appId: upload.app_id,
          app: { bundleId: upload.bundle_id, name: upload.app_name, version: upload.app_version, build: upload.app_build },
          notes: notes === undefined ? upload.notes : notes,
        });
        if (idempotencyKey !== null) {
          const held = await tx.repos.idempotency.remember({ accountId: principal.accountId, key: idempotencyKey, requestHash: hash, taskId: row.id });
          // Another request with this key committed first: roll ours back, answer with theirs.
          if (held.task_id !== row.id) throw new IdempotencyRace(held.task_id, held.request_hash === hash);
        }
        await queue.enqueue('sign_task', { taskId: row.id }, { transaction: tx.kysely, maxAttempts: row.max_attempts });
        return row;
      });
      return task;
    } catch (error) {
      if (error instanceof IdempotencyRace) return this.replay(principal, error.winner, error.sameBody);
      throw error;
    }
  }

  /**
   * An ordinary signing task that signs `source`'s input again with `certificate` (certificate
   * rotation), created and queued inside `tx`. The input blob is the source task's (kept while its
   * release is live); per-bundle profile choices name the old certificate's profiles and are
   * dropped; no callback_url (account webhooks still see it end).
   */
  async resign(tx: { kysely: Kysely<Database>; repos: Repositories }, source: TaskRow, certificate: CertificateRow): Promise<TaskRow> {
    const { profiles: _dropped, ...options } = JSON.parse(source.options_json) as Record<string, unknown>;
    const row = await tx.repos.tasks.create({
      accountId: source.account_id,
      platform: source.platform,
      uploadId: source.upload_id,
      inputBlobKey: source.input_blob_key,
      inputFilename: source.input_filename,
      certificateId: certificate.id,
      certType: source.cert_type,
      options,
      callbackUrl: null,
      appId: source.app_id,
      app: { bundleId: source.bundle_id, name: source.app_name, version: source.app_version, build: source.app_build },
    });
    await this.options.queue.enqueue('sign_task', { taskId: row.id }, { transaction: tx.kysely, maxAttempts: row.max_attempts });
    return row;
  }

  private async replay(principal: Principal, taskId: string, sameBody: boolean): Promise<TaskRow> {
    if (!sameBody) throw new AppError('idempotency_conflict', 'This Idempotency-Key was already used with a different request body.');
    const task = await this.options.db.repos.tasks.find(principal.accountId, taskId);
    if (!task) throw new AppError('task_not_found');
    return task;
  }

  /**
   * A task's explicit profile per bundle id: each must be a profile of the task's certificate
   * whose App ID covers that bundle id (checked now, so a typo is a 4xx, not a failed task).
   */
  private async checkProfileChoice(principal: Principal, certificate: CertificateRow | null, choice: Record<string, string>): Promise<Record<string, string>> {
    if (certificate === null || certificate.kind === 'android') {
      throw new AppError('invalid_request', 'profiles (a profile per bundle id) applies to iOS enterprise tasks only.', { details: { field: 'profiles' } });
    }
    for (const [bundleId, profileId] of Object.entries(choice)) {
      const profile = await this.options.db.repos.certificateProfiles.find(principal.accountId, certificate.id, profileId);
      if (!profile) throw new AppError('profile_not_found', `Certificate ${certificate.id} has no provisioning profile ${profileId} (named for "${bundleId}").`, { details: { field: 'profiles', bundle_id: bundleId, profile_id: profileId } });
      const pattern = profile.app_id?.slice(profile.app_id.indexOf('.') + 1) ?? '';
      if (!appIdPatternMatches(pattern, bundleId)) {
        throw new SigningError('bundle_id_mismatch', `Profile ${profileId} (${profile.app_id}) does not cover "${bundleId}".`, { details: { field: 'profiles', bundle_id: bundleId, profile_id: profileId } });
      }
    }
    return choice;
  }

  private async requireDeveloperAccount(principal: Principal): Promise<null> {
    if (!(await this.options.hasDeveloperAccount?.(principal.accountId))) {
      throw new AppError('certificate_required', 'cert_type "super" needs a usable Apple developer account; register one with POST /v1/developer-accounts.');
    }
    return null;
  }

  private async chooseCertificate(principal: Principal, kind: CertificateKind | null, input: CreateTaskInput): Promise<CertificateRow> {
    const repo = this.options.db.repos.certificates;
    if (kind === null) {
      throw new AppError('certificate_required', `cert_type "${input.certType}" needs signing credentials this account has not set up.`);
    }
    const now = this.now().toISOString();
    if (input.certificateId !== undefined) {
      const chosen = await repo.find(principal.accountId, input.certificateId);
      if (!chosen) throw new AppError('certificate_not_found', `No certificate ${input.certificateId}.`);
      // Named explicitly, any iOS certificate signs an iOS task (ad-hoc and development builds
      // install on the devices their profiles list); by default only in-house ones are chosen.
      const fits = kind === 'ios_enterprise' ? IOS_CERTIFICATE_KINDS.includes(chosen.kind) : chosen.kind === kind;
      if (!fits) throw new AppError('certificate_required', `Certificate ${chosen.id} is ${chosen.kind}; this task needs a ${kind} certificate.`);
      // Nothing signed with an expired or revoked certificate installs: say so now, not as a failed task.
      if (chosen.not_after !== null && chosen.not_after <= now) throw new SigningError('certificate_expired', `Certificate ${chosen.id} expired on ${chosen.not_after.slice(0, 10)}.`);
      const revocation = await this.options.db.repos.lifecycle.findRevocation(chosen.fingerprint);
      if (revocation?.status === 'revoked') throw new AppError('certificate_revoked', `Certificate ${chosen.id} was revoked${revocation.revoked_at ? ` on ${revocation.revoked_at.slice(0, 10)}` : ''}.`);
      return chosen;
    }
    // Default: the newest certificate of the right kind that has neither expired nor been revoked
    // (as its OCSP responder last answered).
    for await (const certificate of allRows((page) => repo.list(principal.accountId, { ...page, kind }))) {
      if (certificate.not_after !== null && certificate.not_after <= now) continue;
      if ((await this.options.db.repos.lifecycle.findRevocation(certificate.fingerprint))?.status === 'revoked') continue;
      return certificate;
    }
    throw new AppError('certificate_required', `No usable ${kind} certificate (none that has neither expired nor been revoked); upload one with POST /v1/certificates.`);
  }

  async get(principal: Principal, taskId: string): Promise<TaskRecord> {
    const task = await this.find(principal, taskId);
    return this.record(task);
  }

  async record(task: TaskRow): Promise<TaskRecord> {
    return { task, deliveries: await this.options.db.repos.webhookDeliveries.listForTask(task.id), links: await this.linksOf(task) };
  }

  /** A page of tasks with their webhook deliveries, read in one query. */
  async records(tasks: readonly TaskRow[]): Promise<TaskRecord[]> {
    const deliveries = await this.options.db.repos.webhookDeliveries.listForTasks(tasks.map((t) => t.id));
    const links = await Promise.all(tasks.map((task) => this.linksOf(task)));
    return tasks.map((task, i) => ({ task, deliveries: deliveries.get(task.id) ?? [], links: links[i] ?? null }));
  }

  /** The links of a succeeded task; a failure to publish them leaves them out rather than failing the read. */
  private async linksOf(task: TaskRow): Promise<TaskLinksView | null> {
    if (task.status !== 'succeeded' || !this.options.links) return null;
    return this.options.links(task).catch(() => null);
  }

  async list(principal: Principal, query: { status: TaskStatus | null; limit: number; cursor: string | null }): Promise<{ items: TaskRecord[]; nextCursor: string | null }> {
    const status = query.status ?? undefined;
    const page = await this.options.db.repos.tasks.list(principal.accountId, {
      limit: query.limit,
      cursor: query.cursor,
      ...(status === undefined ? {} : { status }),
    });
    return { items: await this.records(page.items), nextCursor: page.nextCursor };
  }

  /** Cancels a pending or processing task; a processing run is aborted by the worker. */
  async cancel(principal: Principal, taskId: string): Promise<TaskRecord> {
    const task = await this.find(principal, taskId);
    if (task.status === 'canceled') return this.record(task);
    if (task.status === 'succeeded' || task.status === 'failed') throw new AppError('task_not_cancelable', `The task already ${task.status}.`);
    const canceled = await this.options.db.repos.tasks.finish(task.id, { status: 'canceled' });
    if (canceled) {
      for (const listener of this.cancelListeners) listener(task.id);
      return this.record(canceled);
    }
    // Lost a race with the worker finishing it.
    const now = await this.find(principal, taskId);
    if (now.status === 'canceled') return this.record(now);
    throw new AppError('task_not_cancelable', `The task already ${now.status}.`);
  }

  /**
   * A task's progress as events, for GET /tasks/{id}/events: a `status` event now and at every
   * change of status or attempt (read from the database every `pollMs`, so a worker in another
   * process is seen too), then one `task` event with the whole task once it has ended. Ends when
   * the task ends or `signal` aborts.
   */
  async *follow(principal: Principal, taskId: string, signal: AbortSignal, pollMs = 500): AsyncGenerator<TaskEvent> {
    let last = '';
    for (;;) {
      const task = await this.find(principal, taskId);
      const state = `${task.status}/${task.attempts}`;
      if (state !== last) {
        last = state;
        yield { event: 'status', task };
      }
      if (TERMINAL.includes(task.status)) {
        yield { event: 'task', record: await this.record(task) };
        return;
      }
      try {
        await sleep(pollMs, undefined, { signal });
      } catch {
        return;
      }
    }
  }

  /** In-process notification of cancels (the worker aborts a running task at once). */
  onCancel(listener: (taskId: string) => void): () => void {
    this.cancelListeners.add(listener);
    return () => this.cancelListeners.delete(listener);
  }

  async artifact(principal: Principal, taskId: string): Promise<ArtifactHandle> {
    const task = await this.find(principal, taskId);
    if (task.status !== 'succeeded' || task.artifact_blob_key === null || task.artifact_size === null || task.artifact_sha256 === null) {
      throw new AppError('artifact_not_ready', `The task is ${task.status}; it has no signed artifact.`);
    }
    const blobKey = task.artifact_blob_key;
    const extension = task.platform === 'ios' ? 'ipa' : 'apk';
    const base = task.input_filename.replace(/\.(ipa|apk)$/i, '');
    return {
      size: task.artifact_size,
      sha256: task.artifact_sha256,
      fileName: `${base}-signed.${extension}`,
      contentType: task.platform === 'ios' ? 'application/octet-stream' : 'application/vnd.android.package-archive',
      open: (range) => this.options.blobs.get(blobKey, range ?? {}),
    };
  }

  private async find(principal: Principal, taskId: string): Promise<TaskRow> {
    const task = await this.options.db.repos.tasks.find(principal.accountId, taskId);
    if (!task) throw new AppError('task_not_found', `No task ${taskId}.`);
    return task;
  }
}
