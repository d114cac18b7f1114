// Certificate rotation in one call: every live release (an enabled, unexpired install link) signed
// with one certificate is signed again with another, each by an ordinary signing task created
// through the task service (so it is verified like any task); when a task succeeds its link is
// pointed at the new build (compare-and-set on the link's task), so /d/<slug> and /a/<slug> keep
// their URLs and serve the old build until the new one has verified. Progress is read from the
// tasks themselves, so a crash between a task's end and the swap is repaired on the next read.
import type { Db } from '../db/database.ts';
import type { RotationItemRow, RotationItemState, RotationRow } from '../db/lifecycle-tables.ts';
import type { CertificateRow, TaskRow } from '../db/schema.ts';
import type { DistributionService } from '../distribution/service.ts';
import { AppError } from '../errors.ts';
import { SigningError } from '../signing/errors.ts';
import type { BlobStore } from '../storage/blob-store.ts';
import type { Principal } from './principal.ts';
import type { TaskService } from './tasks.ts';

export interface RotationItemView {
  distribution_id: string;
  url: string;
  platform: string;
  app: { bundle_id: string | null; name: string | null; version: string | null; build: string | null };
  old_task_id: string;
  new_task_id: string | null;
  /** planned (dry run), running, done (the link serves the new build), failed, skipped. */
  state: RotationItemState | 'planned';
  error: string | null;
}

export interface RotationView {
  /** `rot_…`; null for a dry run (nothing was stored). */
  id: string | null;
  dry_run: boolean;
  from_certificate_id: string;
  to_certificate_id: string;
  /** planned (dry run), running, done (every link serves the new builds), failed (some did not). */
  state: 'planned' | 'running' | 'done' | 'failed';
  counts: { planned: number; running: number; done: number; failed: number; skipped: number };
  items: RotationItemView[];
  created_at: string | null;
}

export interface RotationServiceOptions {
  db: Db;
  tasks: TaskService;
  distributions: DistributionService;
  blobs: BlobStore;
  now?: () => Date;
}

export class RotationService {
  private readonly options: RotationServiceOptions;
  private readonly now: () => Date;

  constructor(options: RotationServiceOptions) {
    this.options = options;
    this.now = options.now ?? (() => new Date());
  }

  async rotate(principal: Principal, fromId: string, input: { to: string; dryRun: boolean }): Promise<RotationView> {
    const { db } = this.options;
    const from = await this.certificate(principal, fromId);
    const to = await this.certificate(principal, input.to);
    await this.checkTarget(from, to);
    const live = await db.repos.rotations.liveDistributions(principal.accountId, from.id, this.now());
    const planned = await Promise.all(
      live.map(async (distribution) => ({ distribution, stored: await this.options.blobs.exists(distribution.input_blob_key) })),
    );
    if (input.dryRun) {
      const items = await Promise.all(
        planned.map(async ({ distribution, stored }) => this.itemView(distribution.id, { old_task_id: distribution.task_id, new_task_id: null, state: stored ? 'planned' : 'skipped', error: stored ? null : INPUT_MISSING })),
      );
      return this.view(null, from.id, to.id, items, null, true);
    }
    for (const rotation of await db.repos.rotations.list(principal.accountId, 20)) {
      if (rotation.from_certificate_id !== from.id) continue;
      if ((await this.reconcile(rotation)).some((item) => item.state === 'running')) {
        throw new AppError('rotation_in_progress', `Rotation ${rotation.id} is still re-signing this certificate's releases.`, { details: { rotation_id: rotation.id } });
      }
    }
    const rotation = await db.transaction(async (tx) => {
      const items: Array<{ distributionId: string; oldTaskId: string; newTaskId: string }> = [];
      for (const { distribution, stored } of planned) {
        if (!stored) continue;
        const source = await tx.repos.tasks.find(principal.accountId, distribution.task_id);
        if (!source) continue;
        const task = await this.options.tasks.resign(tx, source, to);
        items.push({ distributionId: distribution.id, oldTaskId: source.id, newTaskId: task.id });
      }
      return tx.repos.rotations.create({ accountId: principal.accountId, fromCertificateId: from.id, toCertificateId: to.id, items });
    });
    return this.get(principal, rotation.id);
  }

  async get(principal: Principal, id: string): Promise<RotationView> {
    const rotation = await this.options.db.repos.rotations.find(principal.accountId, id);
    if (!rotation) throw new AppError('rotation_not_found', `No rotation ${id}.`);
    const items = await Promise.all((await this.reconcile(rotation)).map((item) => this.itemView(item.distribution_id, item)));
    return this.view(rotation.id, rotation.from_certificate_id, rotation.to_certificate_id, items, rotation.created_at, false);
  }

  async list(principal: Principal): Promise<RotationView[]> {
    const rows = await this.options.db.repos.rotations.list(principal.accountId, 50);
    return Promise.all(rows.map((row) => this.get(principal, row.id)));
  }

  /**
   * Worker hook, when a task has succeeded: if it re-signs a release for a rotation, its link now
   * serves it (true: do not publish a link of its own).
   */
  async onTaskSucceeded(task: TaskRow): Promise<boolean> {
    const item = await this.options.db.repos.rotations.itemForTask(task.id);
    if (!item) return false;
    if (item.state === 'running') await this.swap(item, task.id);
    return true;
  }

  /** Brings running items up to date with their tasks; returns the items. */
  private async reconcile(rotation: RotationRow): Promise<RotationItemRow[]> {
    const { db } = this.options;
    const items = await db.repos.rotations.items(rotation.id);
    for (const item of items) {
      if (item.state !== 'running' || item.new_task_id === null) continue;
      const task = await db.repos.tasks.find(rotation.account_id, item.new_task_id);
      if (task === null || task.status === 'failed' || task.status === 'canceled') {
        const error = task === null ? 'the task is gone' : (task.error_message ?? `the task was ${task.status}`);
        await db.repos.rotations.setItemState(rotation.id, item.distribution_id, 'failed', error);
        Object.assign(item, { state: 'failed', error });
      } else if (task.status === 'succeeded') {
        Object.assign(item, await this.swap(item, task.id));
      }
    }
    return items;
  }

  private async swap(item: RotationItemRow, taskId: string): Promise<Pick<RotationItemRow, 'state' | 'error'>> {
    const { db } = this.options;
    const swapped = await db.repos.rotations.swapTask(item.distribution_id, item.old_task_id, taskId);
    const current = await db.kysely.selectFrom('distributions').select('task_id').where('id', '=', item.distribution_id).executeTakeFirst();
    const state: RotationItemState = swapped || current?.task_id === taskId ? 'done' : 'skipped';
    const error = state === 'done' ? null : 'the link was pointed at another release meanwhile';
    await db.repos.rotations.setItemState(item.rotation_id, item.distribution_id, state, error);
    return { state, error };
  }

  private async checkTarget(from: CertificateRow, to: CertificateRow): Promise<void> {
    if (from.id === to.id) throw new AppError('invalid_request', 'to must name another certificate.', { details: { field: 'to' } });
    if (from.kind !== to.kind) throw new AppError('invalid_request', `Certificate ${to.id} is ${to.kind}; releases signed with ${from.id} need a ${from.kind} certificate.`, { details: { field: 'to' } });
    if (to.not_after !== null && Date.parse(to.not_after) <= this.now().getTime()) throw new SigningError('certificate_expired', `Certificate ${to.id} expired on ${to.not_after.slice(0, 10)}.`, { details: { field: 'to' } });
    const revocation = await this.options.db.repos.lifecycle.findRevocation(to.fingerprint);
    if (revocation?.status === 'revoked') throw new AppError('certificate_revoked', `Certificate ${to.id} was revoked.`, { details: { field: 'to' } });
    if (to.kind !== 'android' && (await this.options.db.repos.certificateProfiles.list(to.account_id, to.id)).length === 0) {
      throw new AppError('invalid_request', `Certificate ${to.id} has no provisioning profile to sign with.`, { details: { field: 'to' } });
    }
  }

  private async certificate(principal: Principal, id: string): Promise<CertificateRow> {
    const row = await this.options.db.repos.certificates.find(principal.accountId, id);
    if (!row) throw new AppError('certificate_not_found', `No certificate ${id}.`);
    return row;
  }

  private async itemView(distributionId: string, item: Pick<RotationItemRow, 'old_task_id' | 'new_task_id' | 'error'> & { state: RotationItemView['state'] }): Promise<RotationItemView> {
    const { db, distributions } = this.options;
    const distribution = await db.kysely.selectFrom('distributions').selectAll().where('id', '=', distributionId).executeTakeFirstOrThrow();
    const task = await db.repos.tasks.find(distribution.account_id, item.old_task_id);
    return {
      distribution_id: distributionId,
      url: distributions.links(distribution).url,
      platform: distribution.platform,
      app: { bundle_id: task?.bundle_id ?? null, name: task?.app_name ?? null, version: task?.app_version ?? null, build: task?.app_build ?? null },
      old_task_id: item.old_task_id,
      new_task_id: item.new_task_id,
      state: item.state,
      error: item.error,
    };
  }

  private view(id: string | null, from: string, to: string, items: RotationItemView[], createdAt: string | null, dryRun: boolean): RotationView {
    const count = (state: RotationItemView['state']) => items.filter((i) => i.state === state).length;
    const counts = { planned: items.length, running: count('running'), done: count('done'), failed: count('failed'), skipped: count('skipped') };
    const state = dryRun ? 'planned' : counts.running > 0 ? 'running' : counts.failed > 0 ? 'failed' : 'done';
    return { id, dry_run: dryRun, from_certificate_id: from, to_certificate_id: to, state, counts, items, created_at: createdAt };
  }
}

const INPUT_MISSING = 'The package this release was signed from is no longer stored (SIGNET_KEEP_LIVE_INPUTS); upload it again to re-sign.';
