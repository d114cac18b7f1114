// Install links: publishing a succeeded task, the account-side settings (password, expiry, quota,
// enabled), and the public checks every /d/{slug} request goes through. HTTP lives in
// src/http/routes/{distributions,install-pages}.ts; this module knows nothing of requests.
import { Readable } from 'node:stream';
import type { Db } from '../db/database.ts';
import { newSlug } from '../db/ids.ts';
import type { DistributionRow } from '../db/distribution-tables.ts';
import type { TaskRow } from '../db/schema.ts';
import { AppError, type ErrorCode } from '../errors.ts';
import { FileSource } from '../signing/data-source.ts';
import { inspectPackage } from '../signing/inspect/index.ts';
import type { BlobStore } from '../storage/blob-store.ts';
import { assertBlobKey } from '../storage/blob-keys.ts';
import { hashPassword } from './access.ts';
import { normalizePng } from './cgbi.ts';
import { itmsServicesUrl } from './manifest.ts';

export const ICON_TYPES = { png: 'image/png', webp: 'image/webp', jpeg: 'image/jpeg' } as const;

export interface DistributionLinks {
  url: string;
  qr_code_url: string;
  download_url: string;
  manifest_url: string | null;
  itms_services_url: string | null;
}

export interface DistributionSettings {
  password?: string | null;
  expiresAt?: Date | null;
  maxDownloads?: number | null;
  enabled?: boolean;
}

/** A distribution that may be served, with the task it publishes. */
export interface Release {
  distribution: DistributionRow;
  task: TaskRow & { artifact_blob_key: string; artifact_size: number };
}

export interface DistributionServiceOptions {
  db: Db;
  blobs: BlobStore;
  /** Public base URL, no trailing slash (config.publicUrl or the local listener). */
  baseUrl: string;
}

export class DistributionService {
  readonly #db: Db;
  readonly #blobs: BlobStore;
  readonly #options: DistributionServiceOptions;

  constructor(options: DistributionServiceOptions) {
    this.#db = options.db;
    this.#blobs = options.blobs;
    this.#options = options;
  }

  /** Read on every use: the listener's port (and so the URL) may be known only after start-up. */
  get baseUrl(): string {
    return this.#options.baseUrl;
  }

  /**
   * Gives a succeeded task its install link (idempotent) and makes sure its app has a permanent
   * link. The icon is extracted once here, converted from CgBI, and stored beside the artifact.
   */
  async publish(task: TaskRow): Promise<DistributionRow> {
    const existing = await this.#db.repos.distributions.findByTask(task.account_id, task.id);
    if (existing) return existing;
    if (task.status !== 'succeeded' || task.artifact_blob_key === null) {
      throw new AppError('artifact_not_ready', `task ${task.id} has no signed artifact to distribute`);
    }
    const slug = newSlug();
    const iconBlobKey = await this.#storeIcon(task.artifact_blob_key, slug);
    const distribution = await this.#db.repos.distributions.create({
      accountId: task.account_id,
      taskId: task.id,
      appId: task.app_id,
      platform: task.platform,
      slug,
      iconBlobKey,
    });
    if (task.app_id !== null) await this.#db.repos.distributions.ensureAppLink(task.account_id, task.app_id, newSlug());
    return distribution;
  }

  links(distribution: DistributionRow): DistributionLinks {
    const page = `${this.baseUrl}/d/${distribution.slug}`;
    const ios = distribution.platform === 'ios';
    return {
      url: page,
      qr_code_url: `${page}/qr.svg`,
      download_url: `${page}/download`,
      manifest_url: ios ? `${page}/manifest.plist` : null,
      itms_services_url: ios ? itmsServicesUrl(`${page}/manifest.plist`) : null,
    };
  }

  /** Links of the account, newest first (the console's links page). */
  list(accountId: string, page: { limit: number; cursor: string | null }) {
    return this.#db.repos.distributions.list(accountId, page);
  }

  /** What a link installs: the identity its task recorded. */
  async appOf(distribution: DistributionRow): Promise<{ name: string | null; bundle_id: string | null; version: string | null; build: string | null }> {
    const task = await this.#db.repos.tasks.find(distribution.account_id, distribution.task_id);
    return { name: task?.app_name ?? null, bundle_id: task?.bundle_id ?? null, version: task?.app_version ?? null, build: task?.app_build ?? null };
  }

  async forTask(accountId: string, taskId: string): Promise<DistributionRow> {
    const task = await this.#db.repos.tasks.find(accountId, taskId);
    if (!task) throw new AppError('task_not_found', `no task ${taskId}`);
    const distribution = await this.#db.repos.distributions.findByTask(accountId, taskId);
    if (distribution) return distribution;
    if (task.status === 'succeeded') return this.publish(task); // a task that succeeded before publishing existed
    throw new AppError('artifact_not_ready', `task ${taskId} is ${task.status}; install links exist once it has succeeded`);
  }

  async find(accountId: string, id: string): Promise<DistributionRow> {
    const distribution = await this.#db.repos.distributions.find(accountId, id);
    if (!distribution) throw new AppError('distribution_not_found', `no distribution ${id}`);
    return distribution;
  }

  async update(accountId: string, id: string, settings: DistributionSettings): Promise<DistributionRow> {
    await this.find(accountId, id);
    const patch: Parameters<Db['repos']['distributions']['update']>[2] = {};
    if (settings.password !== undefined) patch.passwordHash = settings.password === null ? null : await hashPassword(settings.password);
    if (settings.expiresAt !== undefined) patch.expiresAt = settings.expiresAt;
    if (settings.maxDownloads !== undefined) patch.maxDownloads = settings.maxDownloads;
    if (settings.enabled !== undefined) patch.enabled = settings.enabled;
    const updated = await this.#db.repos.distributions.update(accountId, id, patch);
    if (!updated) throw new AppError('distribution_not_found', `no distribution ${id}`);
    return updated;
  }

  dailyDownloads(id: string): Promise<Array<{ day: string; downloads: number }>> {
    return this.#db.repos.distributions.dailyDownloads(id);
  }

  /** The release behind a public slug, or `distribution_not_found` (also for unknown slugs). */
  async release(slug: string): Promise<Release> {
    const distribution = /^[0-9A-Za-z]{20,64}$/.test(slug) ? await this.#db.repos.distributions.findBySlug(slug) : null;
    const task = distribution ? await this.#db.repos.tasks.find(distribution.account_id, distribution.task_id) : null;
    if (!distribution || !task || task.artifact_blob_key === null || task.artifact_size === null) {
      throw new AppError('distribution_not_found', 'no install link here');
    }
    return { distribution, task: task as Release['task'] };
  }

  /** The release behind a public slug, refused with the reason when the link may not be used now. */
  async availableRelease(slug: string): Promise<Release> {
    const release = await this.release(slug);
    const reason = this.unavailable(release.distribution);
    if (reason) throw new AppError(reason);
    return release;
  }

  /** The newest release of the app behind a permanent link. */
  async latestRelease(appSlug: string): Promise<{ release: Release; appSlug: string }> {
    const link = /^[0-9A-Za-z]{20,64}$/.test(appSlug) ? await this.#db.repos.distributions.findAppLinkBySlug(appSlug) : null;
    const latest = link ? await this.#db.repos.distributions.latestForApp(link.app_id) : null;
    if (!link || !latest) throw new AppError('distribution_not_found', 'this app has no release to install');
    return { release: await this.release(latest.slug), appSlug };
  }

  async history(appSlug: string): Promise<{ appName: string | null; releases: Release[] }> {
    const link = /^[0-9A-Za-z]{20,64}$/.test(appSlug) ? await this.#db.repos.distributions.findAppLinkBySlug(appSlug) : null;
    if (!link) throw new AppError('distribution_not_found', 'no such app link');
    const app = await this.#db.repos.apps.find(link.account_id, link.app_id);
    const page = await this.#db.repos.distributions.listForApp(link.app_id, { limit: 50 });
    const releases = await Promise.all(page.items.map((d) => this.release(d.slug).catch(() => null)));
    return { appName: app?.name ?? null, releases: releases.filter((r): r is Release => r !== null) };
  }

  async appLinkUrl(appId: string): Promise<string | null> {
    const link = await this.#db.repos.distributions.findAppLink(appId);
    return link ? `${this.baseUrl}/a/${link.slug}` : null;
  }

  /**
   * The developer name iOS shows under Settings › General › VPN & Device Management, for the
   * "trust" instructions: the certificate's O=, else its CN without the "iPhone Distribution:" prefix.
   */
  async organization(task: TaskRow): Promise<string | null> {
    const certificate = task.certificate_id ? await this.#db.repos.certificates.find(task.account_id, task.certificate_id) : null;
    const subject = certificate?.subject ?? '';
    const org = /(?:^|,)\s*O=((?:\\,|[^,])+)/.exec(subject)?.[1];
    const cn = /(?:^|,)\s*CN=((?:\\,|[^,])+)/.exec(subject)?.[1]?.replace(/^iPhone Distribution:\s*/, '').replace(/\s*\([A-Z0-9]{10}\)$/, '');
    return (org ?? cn)?.replace(/\\(.)/g, '$1').trim() || null;
  }

  /** Why a link may not be used right now (checked on every page view and download). */
  unavailable(distribution: DistributionRow, now = new Date()): Extract<ErrorCode, 'link_disabled' | 'link_expired' | 'download_quota_exceeded'> | null {
    if (distribution.enabled !== 'yes') return 'link_disabled';
    if (distribution.expires_at !== null && distribution.expires_at <= now.toISOString()) return 'link_expired';
    if (distribution.max_downloads !== null && distribution.downloads >= distribution.max_downloads) return 'download_quota_exceeded';
    return null;
  }

  /** Counts a download against the quota; false when the quota is already used up. */
  async countDownload(distribution: DistributionRow): Promise<boolean> {
    return (await this.#db.repos.distributions.countDownload(distribution.id)) !== null;
  }

  /** The signed package's bytes, whole or an inclusive byte range. */
  artifact(task: Release['task'], range: { start: number; end: number } | null): Promise<Readable> {
    return this.#blobs.get(task.artifact_blob_key, range ?? {});
  }

  /** The stored icon and its content type, or null when the package has none Signet could read. */
  async icon(distribution: DistributionRow): Promise<{ body: Readable; contentType: string } | null> {
    const key = distribution.icon_blob_key;
    if (key === null) return null;
    const extension = key.slice(key.lastIndexOf('.') + 1) as keyof typeof ICON_TYPES;
    return { body: await this.#blobs.get(key), contentType: ICON_TYPES[extension] ?? 'application/octet-stream' };
  }

  async #storeIcon(artifactKey: string, slug: string): Promise<string | null> {
    const icon = await this.#blobs.withLocalFile(artifactKey, async (path) => {
      const source = await FileSource.open(path);
      try {
        return (await inspectPackage(source)).icon;
      } finally {
        await source.close();
      }
    }).catch(() => null); // an unreadable icon never blocks a release; the page shows a placeholder
    if (!icon?.bytes) return null;
    let bytes = icon.bytes;
    if (icon.format === 'png') {
      try {
        bytes = normalizePng(icon.bytes); // iOS icons are CgBI PNGs that browsers cannot show
      } catch {
        return null;
      }
    }
    const key = assertBlobKey(`icons/${slug}.${icon.format}`);
    await this.#blobs.put(key, Readable.from([bytes]), { contentType: ICON_TYPES[icon.format] });
    return key;
  }
}
