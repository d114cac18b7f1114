// Uploads: a package streamed into the blob store (hashed on the fly, size-capped), inspected,
// grouped into its app, and recorded under a short-lived file_key. Also the sweeper that deletes
// expired uploads and their blobs.
import path from 'node:path';
import type { Readable } from 'node:stream';
import type { Db } from '../db/database.ts';
import { newFileKey } from '../db/ids.ts';
import type { Platform, UploadRow } from '../db/schema.ts';
import { AppError, errorCodeOf } from '../errors.ts';
import type { DataSource } from '../signing/data-source.ts';
import { SigningError } from '../signing/errors.ts';
import { uploadBlobKey } from '../storage/blob-keys.ts';
import type { BlobStore, PutOptions, PutResult } from '../storage/blob-store.ts';
import type { Principal } from './principal.ts';

/** What the package inspector reads from a package. */
export interface PackageIdentity {
  platform: Platform;
  bundleId: string | null;
  name: string | null;
  version: string | null;
  build: string | null;
}
/**
 * Reads a package's identity from random-access reads of it (the blob where it is stored: no
 * local copy); throws SigningError `invalid_package` (with the reason) for non-apps.
 */
export type PackageInspector = (source: DataSource, signal?: AbortSignal) => Promise<PackageIdentity>;

const EXTENSIONS: Record<string, Platform> = { '.ipa': 'ios', '.apk': 'android' };

/** The platform a file name claims, or `unsupported_file_type`. */
function platformOfFileName(fileName: string): Platform {
  const platform = EXTENSIONS[path.extname(fileName).toLowerCase()];
  if (!platform) throw new AppError('unsupported_file_type', `Only .ipa and .apk files are accepted, got "${path.basename(fileName).slice(0, 200)}".`);
  return platform;
}

export interface UploadServiceOptions {
  db: Db;
  blobs: BlobStore;
  inspect: PackageInspector;
  maxUploadBytes: number;
  fileKeyTtlSeconds: number;
  /**
   * Keep an expired upload while a live release (enabled, unexpired install link) was signed from
   * it, so it can be re-signed with another certificate (default true; SIGNET_KEEP_LIVE_INPUTS).
   */
  keepLiveInputs?: boolean;
  /** Bytes one account may keep in storage (uploads + signed artifacts); 0: no quota. */
  storageQuotaBytes?: number;
  /** Counts received bytes (metrics). */
  onReceived?: (bytes: number, platform: Platform) => void;
  now?: () => Date;
}

export class UploadService {
  private readonly options: UploadServiceOptions;
  private readonly now: () => Date;

  constructor(options: UploadServiceOptions) {
    this.options = options;
    this.now = options.now ?? (() => new Date());
  }

  /**
   * Whether the account may upload a file of `declaredBytes` (null: unknown yet), before a byte of
   * it is read; returns the most bytes this upload may then have. Throws file_too_large or
   * storage_quota_exceeded.
   */
  async admit(principal: Principal, declaredBytes: number | null): Promise<number> {
    const { maxUploadBytes, storageQuotaBytes = 0 } = this.options;
    if (declaredBytes !== null && declaredBytes > maxUploadBytes) throw new AppError('file_too_large', `The file exceeds ${maxUploadBytes} bytes.`);
    if (storageQuotaBytes <= 0) return maxUploadBytes;
    const left = storageQuotaBytes - (await this.options.db.repos.accounts.storedBytes(principal.accountId));
    if (left <= 0 || (declaredBytes !== null && declaredBytes > left)) {
      throw new AppError('storage_quota_exceeded', `The account stores ${storageQuotaBytes - left} of its ${storageQuotaBytes} bytes; this upload does not fit.`, {
        details: { quota_bytes: storageQuotaBytes, free_bytes: Math.max(0, left) },
      });
    }
    return Math.min(maxUploadBytes, left);
  }

  /**
   * Stores one uploaded file. `truncated` reports whether the multipart parser cut the part
   * short (it does so silently at its own limit). On any failure nothing of the file remains.
   */
  async receive(principal: Principal, input: { fileName: string; stream: Readable; signal: AbortSignal; truncated?: () => boolean; maxBytes?: number; notes?: string | null }): Promise<UploadRow> {
    let platform: Platform;
    try {
      platform = platformOfFileName(input.fileName);
    } catch (error) {
      input.stream.resume(); // let the parser move past the refused part
      throw error;
    }
    return this.record(principal, platform, input, (blobKey, options) => this.options.blobs.put(blobKey, input.stream, options));
  }

  /**
   * Stores a finished upload that is already a local file (a resumable upload on disk): the blob
   * store adopts the file (renamed into place on disk) rather than copying it, and the package is
   * then inspected and recorded exactly like receive's. `sha256`: the digest computed while the
   * file was written, if any (else the store reads the file once to hash it). On success the file is gone from `path`;
   * on failure nothing of the upload remains in the blob store and the file is the caller's.
   */
  async receiveFile(principal: Principal, input: { fileName: string; path: string; sha256?: string | null; signal: AbortSignal; maxBytes?: number; notes?: string | null }): Promise<UploadRow> {
    const platform = platformOfFileName(input.fileName);
    const known = input.sha256 ? { sha256: input.sha256 } : {};
    return this.record(principal, platform, input, (blobKey, options) => this.options.blobs.adoptFile(input.path, blobKey, { ...options, ...known }));
  }

  /** Stores the bytes under a new file_key (`store`), then inspects and records them; on failure deletes the blob. */
  private async record(
    principal: Principal,
    platform: Platform,
    input: { fileName: string; signal: AbortSignal; truncated?: () => boolean; maxBytes?: number; notes?: string | null },
    store: (blobKey: string, options: PutOptions) => Promise<PutResult>,
  ): Promise<UploadRow> {
    const { blobs, db } = this.options;
    const fileKey = newFileKey();
    const blobKey = uploadBlobKey(fileKey);
    const maxBytes = input.maxBytes ?? this.options.maxUploadBytes;
    const stored = await store(blobKey, {
      maxBytes,
      signal: input.signal,
      contentType: platform === 'ios' ? 'application/octet-stream' : 'application/vnd.android.package-archive',
    }).catch((error: unknown) => {
      // Cut short by the account's quota rather than the size limit: say which.
      if (errorCodeOf(error) === 'file_too_large' && maxBytes < this.options.maxUploadBytes) throw new AppError('storage_quota_exceeded', `This upload does not fit in the account's storage quota (${maxBytes} bytes free).`, { cause: error });
      throw error;
    });
    this.options.onReceived?.(stored.size, platform);
    try {
      if (input.truncated?.()) throw new AppError('file_too_large', `The file exceeds ${this.options.maxUploadBytes} bytes.`);
      const identity = await this.identify(blobKey, platform, input.signal);
      const fileName = path.basename(input.fileName.replaceAll('\\', '/')).slice(0, 255);
      const now = this.now();
      const row = await db.transaction(async ({ repos }) => {
        const created = await repos.uploads.create({
          id: fileKey,
          accountId: principal.accountId,
          filename: fileName,
          platform,
          size: stored.size,
          sha256: stored.sha256,
          blobKey,
          expiresAt: new Date(now.getTime() + this.options.fileKeyTtlSeconds * 1000),
          notes: input.notes ?? null,
        });
        if (identity.bundleId === null) return created;
        const app = await repos.apps.upsert({ accountId: principal.accountId, platform, bundleId: identity.bundleId, name: identity.name });
        const appFields = { appId: app.id, bundleId: identity.bundleId, name: identity.name, version: identity.version, build: identity.build };
        await repos.uploads.setApp(fileKey, appFields);
        return {
          ...created,
          app_id: app.id,
          bundle_id: identity.bundleId,
          app_name: identity.name,
          app_version: identity.version,
          app_build: identity.build,
        } satisfies UploadRow;
      });
      return row;
    } catch (error) {
      await blobs.delete(blobKey);
      throw error;
    }
  }

  /** Sets the release notes of an upload just received (a multipart field that followed the file). */
  async setNotes(principal: Principal, fileKey: string, notes: string | null): Promise<UploadRow> {
    const row = await this.options.db.repos.uploads.find(principal.accountId, fileKey);
    if (!row) throw new AppError('file_key_not_found', `No upload with file_key ${fileKey}.`);
    await this.options.db.repos.uploads.setNotes(fileKey, notes);
    return { ...row, notes };
  }

  /** Deletes an upload just received whose request was then refused (its blob, then its row). */
  async discard(principal: Principal, fileKey: string): Promise<void> {
    const row = await this.options.db.repos.uploads.find(principal.accountId, fileKey);
    if (!row) return;
    await this.options.blobs.delete(row.blob_key);
    await this.options.db.repos.uploads.delete(fileKey);
  }

  private async identify(blobKey: string, platform: Platform, signal: AbortSignal): Promise<PackageIdentity> {
    let identity: PackageIdentity;
    try {
      const source = await this.options.blobs.openSource(blobKey, { signal });
      try {
        identity = await this.options.inspect(source, signal);
      } finally {
        await source.close();
      }
    } catch (error) {
      // Whatever the engines say about a package that is not a readable app (bad zip, no
      // manifest…), the upload answer is invalid_package with their reason.
      const code = errorCodeOf(error);
      if (error instanceof SigningError && code !== 'invalid_package') {
        throw new SigningError('invalid_package', `Not a readable app package: ${error.message}`, { cause: error });
      }
      throw error;
    }
    if (identity.platform !== platform) {
      throw new SigningError('invalid_package', `The file is named like an ${platform === 'ios' ? 'iOS' : 'Android'} package but holds an ${identity.platform === 'ios' ? 'iOS' : 'Android'} app.`);
    }
    return identity;
  }

  /** Deletes expired uploads whose blobs no active task needs; returns how many. */
  async sweepExpired(batch = 100): Promise<number> {
    const { db, blobs } = this.options;
    let deleted = 0;
    for (;;) {
      const expired = await db.repos.uploads.listExpired(this.now(), batch, { keepLiveInputs: this.options.keepLiveInputs ?? true });
      for (const upload of expired) {
        // Blob first: a crash in between leaves a row the next sweep retries, never an orphan blob.
        await blobs.delete(upload.blob_key);
        if (await db.repos.uploads.delete(upload.id)) deleted += 1;
      }
      if (expired.length < batch) return deleted;
    }
  }
}
