// Per-device builds in milliseconds (issue §6): the first device of a (task, developer account)
// pays for a prepared build and its incremental template — the task's own prepared build when the
// account signed it, else a whole-app re-sign with a template profile — and stores the template's
// shared file once; every device then costs signForProfile and a part of about a megabyte
// (src/signing/ios/resign-incremental). The .ipa a device downloads is shared ++ part.
//
// Templates live in memory (a few per process, least recently used first out) and are rebuilt
// from the stored prepared build after a restart; their shared file is deterministic, so a
// rebuilt one matches the stored blob byte for byte (sizes are checked). The first build of each
// in-memory template is verified whole with `signet verify`'s checks before it is handed out.
import { createHash, randomBytes, type Hash } from 'node:crypto';
import { createReadStream, promises as fs } from 'node:fs';
import path from 'node:path';
import type { Db } from '../db/database.ts';
import type { TaskRow } from '../db/schema.ts';
import type { DeveloperAccountRow } from '../db/super-tables.ts';
import { AppError } from '../errors.ts';
import type { Identity } from '../signing/cms/index.ts';
import { FileSink } from '../signing/data-sink.ts';
import { FileSource, type DataSource } from '../signing/data-source.ts';
import { SigningError } from '../signing/errors.ts';
import type { IncrementalTemplate } from '../signing/ios/resign-incremental/index.ts';
import { withBlobSource, type BlobStore } from '../storage/blob-store.ts';
import { assertBlobKey } from '../storage/blob-keys.ts';
import { teamNameOf } from '../services/developer-accounts.ts';
import type { Logger } from '../services/logger.ts';
import type { SuperAppPlan } from './capability-plan.ts';
import { ConcatSource } from './concat-source.ts';
import type { DeviceBuildSigner } from './device-signer.ts';

export interface IncrementalBuildsOptions {
  db: Db;
  blobs: BlobStore;
  engine: DeviceBuildSigner;
  workDir: string;
  logger: Logger;
  /** Templates kept in memory (default 4). */
  maxTemplates?: number;
}

interface LoadedTemplate {
  template: IncrementalTemplate;
  identity: Identity;
  sharedKey: string;
  /** SHA-256 state over the shared file, continued with each part for the build's digest. */
  sharedHash: Hash;
  verified: boolean;
}

export interface IncrementalBuild {
  partKey: string;
  sharedKey: string;
  sharedSize: number;
  size: number;
  sha256: string;
}

export class IncrementalBuilds {
  readonly #options: IncrementalBuildsOptions;
  readonly #templates = new Map<string, Promise<LoadedTemplate>>();

  constructor(options: IncrementalBuildsOptions) {
    this.#options = options;
  }

  /**
   * The device build of (task, profiles) with the account's identity (one profile per App ID of
   * the plan), or null when the profiles cannot be applied incrementally (the caller then
   * re-signs the whole app).
   */
  async build(task: TaskRow, account: DeveloperAccountRow, plan: SuperAppPlan, profiles: Buffer[], buildId: string, signal?: AbortSignal): Promise<IncrementalBuild | null> {
    const loaded = await this.#template(task, account, plan, signal);
    const [{ signForProfile }, { parseProvisioningProfile }] = await Promise.all([import('../signing/ios/resign-incremental/index.ts'), import('../signing/ios/profile/index.ts')]);
    let part;
    try {
      part = signForProfile(loaded.template, { identity: loaded.identity, profile: profiles.map((p) => parseProvisioningProfile(p)) });
    } catch (error) {
      if (error instanceof SigningError && error.code === 'incremental_template_mismatch') {
        this.#options.logger.info({ task_id: task.id, reason: error.message }, 'profile not applicable incrementally; re-signing the whole app');
        return null;
      }
      throw error;
    }
    const { blobs } = this.#options;
    await fs.mkdir(this.#options.workDir, { recursive: true });
    const partPath = path.join(this.#options.workDir, `${buildId}-${randomBytes(4).toString('hex')}.part`);
    try {
      const handle = await fs.open(partPath, 'w');
      try {
        await handle.writev(part.chunks);
      } finally {
        await handle.close();
      }
      if (!loaded.verified) {
        await withBlobSource(blobs, loaded.sharedKey, (shared) => verifyComposite(shared, partPath), signal ? { signal } : {});
        loaded.verified = true;
      }
      const sha = loaded.sharedHash.copy();
      for (const chunk of part.chunks) sha.update(chunk);
      const partKey = assertBlobKey(`super/${task.id}/${buildId}.part`);
      await blobs.put(partKey, createReadStream(partPath));
      return { partKey, sharedKey: loaded.sharedKey, sharedSize: loaded.template.sharedSize, size: part.size, sha256: sha.digest('hex') };
    } finally {
      await fs.rm(partPath, { force: true });
    }
  }

  #template(task: TaskRow, account: DeveloperAccountRow, plan: SuperAppPlan, signal?: AbortSignal): Promise<LoadedTemplate> {
    const key = `${task.id}:${account.id}:${account.certificate_fingerprint}`;
    let loading = this.#templates.get(key);
    if (loading) {
      this.#templates.delete(key);
      this.#templates.set(key, loading); // most recently used last
      return loading;
    }
    loading = this.#load(task, account, plan, signal);
    this.#templates.set(key, loading);
    loading.catch(() => this.#templates.delete(key));
    while (this.#templates.size > (this.#options.maxTemplates ?? 4)) this.#templates.delete(this.#templates.keys().next().value!);
    return loading;
  }

  async #load(task: TaskRow, account: DeveloperAccountRow, plan: SuperAppPlan, signal?: AbortSignal): Promise<LoadedTemplate> {
    const { db, blobs, engine } = this.#options;
    const { buildIncrementalTemplate } = await import('../signing/ios/resign-incremental/index.ts');
    const secrets = db.repos.developerAccounts.secrets(account);
    const identity = await engine.identity(secrets.p12, secrets.p12Password);
    await fs.mkdir(this.#options.workDir, { recursive: true });
    const base = path.join(this.#options.workDir, `${task.id}-${account.id}-${randomBytes(4).toString('hex')}`);
    const sharedPath = `${base}.shared`;
    const preparedPath = `${base}.prepared.ipa`;
    const fromPrepared = async (prepared: DataSource): Promise<IncrementalTemplate> => {
      const sink = await FileSink.create(sharedPath);
      try {
        return await buildIncrementalTemplate(prepared, sink, signal ? { signal } : {});
      } finally {
        await sink.close();
      }
    };
    const reading = signal ? { signal } : {};
    try {
      // The task's own prepared build, if this account's certificate signed it (read where it is
      // stored); else a prepared build re-signed from the upload (read where it is stored) into
      // a local file, which the template is then built from. The template's shared file stays
      // local until stored: this (task, account) builds every device from it.
      let template = task.artifact_blob_key ? await withBlobSource(blobs, task.artifact_blob_key, fromPrepared, reading).catch(() => null) : null;
      if (!template?.signerCertificate?.equals(identity.certificate)) {
        await withBlobSource(
          blobs,
          task.input_blob_key,
          (input) => engine.prepare({ input, outputPath: preparedPath, p12: secrets.p12, password: secrets.p12Password, teamId: account.team_id, teamName: teamNameOf(account), plan, ...reading }),
          reading,
        );
        const prepared = await FileSource.open(preparedPath);
        try {
          template = await fromPrepared(prepared);
        } finally {
          await prepared.close();
        }
      }
      const sharedHash = createHash('sha256');
      for await (const chunk of createReadStream(sharedPath)) sharedHash.update(chunk as Buffer);
      let row = await db.repos.superSignature.findTemplate(task.id, account.id);
      if (!row) {
        const sharedKey = assertBlobKey(`super/${task.id}/${account.id}.shared`);
        await blobs.put(sharedKey, createReadStream(sharedPath));
        row = await db.repos.superSignature.saveTemplate({ taskId: task.id, developerAccountId: account.id, sharedBlobKey: sharedKey, sharedSize: template.sharedSize });
      } else if (row.shared_size !== template.sharedSize) {
        throw new AppError('internal_error', `the rebuilt shared file of ${task.id} differs from the stored one (${template.sharedSize} vs ${row.shared_size} bytes)`);
      }
      this.#options.logger.info({ task_id: task.id, developer_account_id: account.id, shared_size: template.sharedSize }, 'incremental template ready');
      return { template, identity, sharedKey: row.shared_blob_key, sharedHash, verified: false };
    } finally {
      await Promise.all([fs.rm(sharedPath, { force: true }), fs.rm(preparedPath, { force: true })]);
    }
  }
}

/** `signet verify`'s checks over shared ++ part; the pipeline's verdict (verification_failed) when they fail. */
async function verifyComposite(shared: DataSource, partPath: string): Promise<void> {
  const [{ verifyIpa }, { assertOutputVerified }] = await Promise.all([import('../signing/ios/verify-ipa/index.ts'), import('../signing/pipeline/verdict.ts')]);
  const part = await FileSource.open(partPath);
  try {
    assertOutputVerified(await verifyIpa(new ConcatSource([shared, part])));
  } finally {
    await part.close();
  }
}
