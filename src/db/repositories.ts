// Every query the service runs, grouped per table behind small interfaces. Rows are returned as
// stored (snake_case, ISO timestamps; see schema.ts); the HTTP layer shapes them into API JSON.
// All methods that take `accountId` scope the query to that account, so a foreign id reads as
// "not found" and never leaks another account's data.
import type { Credential } from './credential.ts';
import type { AppLinkRow, DistributionRow } from './distribution-tables.ts';
import type { CertificateProfileRepository } from './repositories/certificate-profiles.ts';
import type { DeveloperAccountRepository } from './repositories/developer-accounts.ts';
import type { DeveloperAppIdRepository } from './repositories/developer-app-ids.ts';
import type { InvitationRepository, PasswordResetRepository, SessionRepository, SetupTokenRepository } from './repositories/sessions.ts';
import type { SuperSignatureRepository } from './repositories/super-signature.ts';
import type { UserRepository } from './repositories/users.ts';
import type { Scope } from './user-tables.ts';
import type {
  AccountRow,
  ApiKeyRow,
  AppRow,
  CertificateKind,
  CertificateRow,
  IdempotencyKeyRow,
  Platform,
  TaskBundle,
  TaskRow,
  TaskWarning,
  TaskStatus,
  UploadRow,
  WebhookDeliveryRow,
} from './schema.ts';

/** One page of a newest-first listing; pass `nextCursor` back as `cursor` for the next page. */
export interface Page<T> {
  items: T[];
  nextCursor: string | null;
}

/** `cursor` is opaque; a malformed one is AppError `invalid_request`. `limit` is clamped to 1..100 (default 20). */
export interface PageRequest {
  limit?: number;
  cursor?: string | null;
}

export interface AccountRepository {
  /** Creates the account with a fresh webhook secret. AppError `invalid_request` if the name is taken. */
  create(name: string): Promise<AccountRow>;
  /** The account with this name, created first if missing (for `signet keys create --account`). */
  ensure(name: string): Promise<AccountRow>;
  findById(id: string): Promise<AccountRow | null>;
  findByName(name: string): Promise<AccountRow | null>;
  list(): Promise<AccountRow[]>;
  /** The plaintext webhook secret (`whsec_…`) used to sign this account's webhook bodies. */
  webhookSecret(accountId: string): Promise<string>;
  /** Replaces the webhook secret and returns the new plaintext. */
  rotateWebhookSecret(accountId: string): Promise<string>;
  /** Bytes the account keeps in storage: its uploads (until swept) and its tasks' signed artifacts. */
  storedBytes(accountId: string): Promise<number>;
}

export interface ApiKeyRepository {
  /** Generates `sk_` + base62(32 random bytes); `key` is returned this once and only its SHA-256 is stored. */
  create(input: { accountId: string; label?: string | null; scopes?: readonly Scope[]; expiresAt?: Date | null; createdBy?: string | null }): Promise<{ key: string; apiKey: ApiKeyRow }>;
  /**
   * Resolves a presented key to its account, or null (unknown, malformed, revoked or expired). The lookup
   * is by SHA-256, then the stored and computed hashes are compared in constant time.
   * Updates last_used_at at most once a minute per key.
   */
  authenticate(key: string): Promise<{ apiKey: ApiKeyRow; account: AccountRow } | null>;
  list(accountId: string): Promise<ApiKeyRow[]>;
  /**
   * Revokes the key; returns false when it does not exist in that account (or is already
   * revoked). `accountId` null: whatever its account (the operator's `signet keys revoke`).
   */
  revoke(accountId: string | null, id: string): Promise<boolean>;
}

export interface UploadRepository {
  /** Inserts an upload whose blob is already stored; `id` is the file_key (ids.newFileKey()). */
  create(input: {
    id: string;
    accountId: string;
    filename: string;
    platform: Platform;
    size: number;
    sha256: string;
    blobKey: string;
    expiresAt: Date;
    notes?: string | null;
  }): Promise<UploadRow>;
  find(accountId: string, fileKey: string): Promise<UploadRow | null>;
  /** Records the package identity found by inspecting the upload and links it to its app. */
  setApp(
    fileKey: string,
    app: { appId: string; bundleId: string; name: string | null; version: string | null; build: string | null },
  ): Promise<void>;
  /** Replaces the upload's release notes (a multipart `notes` field sent after the file). */
  setNotes(fileKey: string, notes: string | null): Promise<void>;
  /** Uploads of an app, newest first. */
  listByApp(accountId: string, appId: string, page?: PageRequest): Promise<Page<UploadRow>>;
  /**
   * Expired uploads the sweeper may delete: expires_at <= now and no pending/processing task
   * still needs the blob (those wait until their task is terminal).
   */
  listExpired(now: Date, limit: number): Promise<UploadRow[]>;
  /** Deletes the row (the caller deletes the blob first). Returns false if it was already gone. */
  delete(fileKey: string): Promise<boolean>;
}

export interface AppRepository {
  /** Finds or creates the app for (account, platform, bundle id); refreshes `name` when given. */
  upsert(input: { accountId: string; platform: Platform; bundleId: string; name: string | null }): Promise<AppRow>;
  find(accountId: string, id: string): Promise<AppRow | null>;
  /**
   * Apps, most recently active first (upsert and touch refresh updated_at). The sort key moves,
   * so an app touched while a client pages may appear twice or be skipped once; the listing is
   * meant for humans, where recency matters more than a perfect snapshot.
   */
  list(accountId: string, page?: PageRequest & { platform?: Platform }): Promise<Page<AppRow>>;
  touch(id: string, now?: Date): Promise<void>;
}

export interface NewTaskInput {
  accountId: string;
  platform: Platform;
  uploadId: string;
  inputBlobKey: string;
  inputFilename: string;
  certificateId: string | null;
  certType: string;
  options: Record<string, unknown>;
  callbackUrl: string | null;
  appId: string | null;
  /** The package identity read at upload; the signer's report replaces it when the task succeeds. */
  app?: { bundleId: string | null; name: string | null; version: string | null; build: string | null };
  maxAttempts?: number; // default 3
  /** Release notes (plain text or Markdown). */
  notes?: string | null;
}

/** How a task run ended; `finish` applies it only if the task is not terminal yet. */
export type TaskOutcome =
  | {
      status: 'succeeded';
      artifact: { blobKey: string; size: number; sha256: string };
      app: { bundleId: string | null; name: string | null; version: string | null; build: string | null };
      verification: string[];
      /** Which profile signed which bundle (iOS). */
      bundles?: TaskBundle[];
      /** What signing left out and why. */
      warnings?: TaskWarning[];
    }
  | { status: 'failed'; error: { code: string; message: string } }
  | { status: 'canceled' };

export interface TaskRepository {
  /** Inserts a `pending` task (id `tsk_…`). Enqueue its sign_task job in the same transaction. */
  create(input: NewTaskInput): Promise<TaskRow>;
  /** accountId null = any account (worker side). */
  find(accountId: string | null, id: string): Promise<TaskRow | null>;
  /** Newest first, optionally one status and/or one app. */
  list(accountId: string, page?: PageRequest & { status?: TaskStatus; appId?: string }): Promise<Page<TaskRow>>;
  /**
   * A run begins: pending|processing → processing, attempts := attempt, started_at := now.
   * Null when the task is already terminal (e.g. canceled while queued): skip the work.
   */
  start(id: string, attempt: number): Promise<TaskRow | null>;
  /** Graceful release: processing → pending, so the next run starts cleanly. */
  handBack(id: string): Promise<void>;
  /**
   * The single way into a terminal state: an optimistic UPDATE … WHERE status IN
   * ('pending','processing'). Exactly one caller wins; the others get null (and must discard
   * their result, e.g. delete an artifact blob they wrote).
   */
  finish(id: string, outcome: TaskOutcome): Promise<TaskRow | null>;
  /** Tasks using this certificate that are still pending or processing. */
  countActiveByCertificate(certificateId: string): Promise<number>;
  /** The account's pending or processing tasks, counted up to `upTo` (a quota check needs no more). */
  countActiveByAccount(accountId: string, upTo: number): Promise<number>;
  /** Tasks of every account per status (metrics). */
  countByStatus(): Promise<Record<TaskStatus, number>>;
}

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

export interface WebhookDeliveryRepository {
  record(input: {
    taskId: string;
    accountId: string;
    event: string;
    url: string;
    attempt: number;
    outcome: 'delivered' | 'failed' | 'refused';
    statusCode: number | null;
    error: string | null;
    durationMs: number;
  }): Promise<WebhookDeliveryRow>;
  /** Every attempt for the task, oldest first. */
  listForTask(taskId: string): Promise<WebhookDeliveryRow[]>;
  /** The deliveries of several tasks in one query (listings), by task id; tasks without any are absent. */
  listForTasks(taskIds: readonly string[]): Promise<Map<string, WebhookDeliveryRow[]>>;
}

export interface IdempotencyRepository {
  find(accountId: string, key: string): Promise<IdempotencyKeyRow | null>;
  /**
   * Records key → task unless the key already exists, and returns the row that holds the key
   * (the caller's own, or the earlier winner's: then roll back and answer with the winner's
   * task, or `idempotency_conflict` if its request_hash differs).
   */
  remember(input: { accountId: string; key: string; requestHash: string; taskId: string }): Promise<IdempotencyKeyRow>;
  /** Forgets keys older than `before`; returns how many. */
  purge(before: Date): Promise<number>;
}

export interface Repositories {
  accounts: AccountRepository;
  apiKeys: ApiKeyRepository;
  uploads: UploadRepository;
  apps: AppRepository;
  tasks: TaskRepository;
  certificates: CertificateRepository;
  certificateProfiles: CertificateProfileRepository;
  webhookDeliveries: WebhookDeliveryRepository;
  idempotency: IdempotencyRepository;
  distributions: DistributionRepository;
  developerAccounts: DeveloperAccountRepository;
  developerAppIds: DeveloperAppIdRepository;
  superSignature: SuperSignatureRepository;
  users: UserRepository;
  sessions: SessionRepository;
  setupTokens: SetupTokenRepository;
  invitations: InvitationRepository;
  passwordResets: PasswordResetRepository;
}

export interface DistributionRepository {
  /** Inserts the task's distribution (idempotent per task: an existing one is returned). */
  create(input: {
    accountId: string;
    taskId: string;
    appId: string | null;
    platform: Platform;
    slug: string;
    iconBlobKey: string | null;
    /** What the package requires (migration 0009); see DistributionsTable. */
    minimumOs?: string | null;
    deviceFamilies?: readonly string[] | null;
    nativeAbis?: readonly string[] | null;
  }): Promise<DistributionRow>;
  find(accountId: string, id: string): Promise<DistributionRow | null>;
  findByTask(accountId: string, taskId: string): Promise<DistributionRow | null>;
  /** Public lookup by the slug of /d/{slug}; no account scope (the slug is the credential). */
  findBySlug(slug: string): Promise<DistributionRow | null>;
  /** Applies the given fields (null clears password/expiry/quota); null when not found. */
  update(accountId: string, id: string, patch: { passwordHash?: string | null; expiresAt?: Date | null; maxDownloads?: number | null; enabled?: boolean }): Promise<DistributionRow | null>;
  /** Counts one download if the quota allows; returns the new total, or null when the quota is exhausted. */
  countDownload(id: string, now?: Date): Promise<number | null>;
  /** Downloads per UTC day, newest first (the last 366 days at most). */
  dailyDownloads(id: string): Promise<Array<{ day: string; downloads: number }>>;
  /** The newest enabled distribution of an app (its permanent link serves it). */
  latestForApp(appId: string): Promise<DistributionRow | null>;
  /** Every distribution of the account (enabled or not), newest first: the console's links page. */
  list(accountId: string, page?: PageRequest): Promise<Page<DistributionRow>>;
  /** Every distribution of an app (enabled or not), newest first: the console's versions, the permanent link and the version history. */
  listAllForApp(accountId: string, appId: string, page?: PageRequest): Promise<Page<DistributionRow>>;
  /** Downloads of all of an app's links: the total, and per UTC day (newest first, at most 366 days). */
  appDownloads(appId: string): Promise<{ total: number; byDay: Array<{ day: string; downloads: number }> }>;
  /** Usable links per certificate of the account (enabled, unexpired, quota left), by certificate id. */
  liveLinksByCertificate(accountId: string, now?: Date): Promise<Map<string, number>>;
  /** The app's permanent link, created with `slug` if it has none yet. */
  ensureAppLink(accountId: string, appId: string, slug: string): Promise<AppLinkRow>;
  findAppLink(appId: string): Promise<AppLinkRow | null>;
  findAppLinkBySlug(slug: string): Promise<AppLinkRow | null>;
  /**
   * Records that `clientKey` started a counted download of the link at `now` (replacing an older
   * start), and forgets starts older than `forgetBefore`.
   */
  recordDownloadStart(id: string, clientKey: string, now: Date, forgetBefore: Date): Promise<void>;
  /** True when `clientKey` started a counted download of the link at or after `since`. */
  downloadStartedSince(id: string, clientKey: string, since: Date): Promise<boolean>;
}
