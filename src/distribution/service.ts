// Install links: publishing a succeeded task, the account-side settings (password, expiry, quota,
// enabled), and the public checks every /d/{slug} request goes through. HTTP lives in
// src/http/routes/{distributions,install-pages}.ts; this module knows nothing of requests.
import { Readable } from 'node:stream';
import type { Db } from '../db/database.ts';
import { newSlug } from '../db/ids.ts';
import type { DistributionRow } from '../db/distribution-tables.ts';
import type { TaskRow } from '../db/schema.ts';
import { allRows } from '../db/repositories/pagination.ts';
import { AppError, type ErrorCode } from '../errors.ts';
import type { BlobStore } from '../storage/blob-store.ts';
import { assertBlobKey } from '../storage/blob-keys.ts';
import { hashPassword } from './access.ts';
import { itmsServicesUrl } from './manifest.ts';
import type { ReleaseFacts } from './release-facts.ts';

export const ICON_TYPES = { png: 'image/png', webp: 'image/webp', jpeg: 'image/jpeg' } as const;

export interface DistributionLinks {
  url: string;
  qr_code_url: string;
  download_url: string;
  manifest_url: string | null;
  itms_services_url: string | null;
}

/** Where a succeeded task's release is installed from (its install link, published on success). */
export interface TaskLinksView {
  distribution_id: string;
  /** The install page (/d/{slug}). */
  install_url: string;
  qr_code_url: string;
  /** The app's permanent link (always its newest release); null for a package without a bundle id. */
  app_url: string | null;
  /** Direct download of the signed package (counted). */
  download_url: string;
  /** iOS: the itms-services:// link that installs the app. */
  itms_services_url: string | null;
  manifest_url: string | null;
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

/** Why a link may not be used right now. */
export type UnavailableReason = Extract<ErrorCode, 'link_disabled' | 'link_expired' | 'download_quota_exceeded'>;

/** A release as its version history shows it: usable (perhaps behind a password) or why not. */
export type ReleaseState = 'available' | 'password' | 'expired' | 'disabled' | 'exhausted';

/** What the package requires, as stored when it was published (null: not recorded). */
export interface ReleaseRequirements {
  minimumOs: string | null;
  deviceFamilies: string[] | null;
  nativeAbis: string[] | null;
}

/** How long a client that started a counted download may resume it after the quota filled. */
export const RESUME_WINDOW_MS = 24 * 3600_000;

export interface DistributionServiceOptions {
  db: Db;
  /** Called once when a download fills a link's quota (account events). */
  onQuotaReached?: (distribution: DistributionRow, downloads: number) => Promise<void>;
  blobs: BlobStore;
  /** Public base URL, no trailing slash (config.publicUrl or the local listener). */
  baseUrl: string;
  /**
   * Reads a stored artifact's icon and requirements. CPU-heavy (icon decoding): src/main runs it
   * on a worker thread (ReleaseReader), never on the event loop that serves requests.
   */
  readFacts: (artifactBlobKey: string) => Promise<ReleaseFacts>;
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
   * link. The icon (as a standard image) and the requirements are read once here, off the event
   * loop, and stored with the release.
   */
  async publish(task: TaskRow): Promise<DistributionRow> {
    const existing = await this.#db.repos.distributions.findByTask(task.account_id, task.id);
    if (existing) return existing;
    if (task.status !== 'succeeded' || task.artifact_blob_key === null) {
      throw new AppError('artifact_not_ready', `task ${task.id} has no signed artifact to distribute`);
    }
    const slug = newSlug();
    // An unreadable package costs the icon and the requirements, never the release.
    const facts = await this.#options.readFacts(task.artifact_blob_key).catch(() => null);
    const iconBlobKey = facts?.icon ? await this.#storeIcon(facts.icon, slug) : null;
    const distribution = await this.#db.repos.distributions.create({
      accountId: task.account_id,
      taskId: task.id,
      appId: task.app_id,
      platform: task.platform,
      slug,
      iconBlobKey,
      minimumOs: facts?.minimumOs ?? null,
      deviceFamilies: facts?.deviceFamilies ?? null,
      nativeAbis: facts?.nativeAbis ?? null,
    });
    if (task.app_id !== null) await this.#db.repos.distributions.ensureAppLink(task.account_id, task.app_id, newSlug());
    return distribution;
  }

  /**
   * The devices an ad-hoc or development release installs on (the UDIDs its certificate's
   * profiles list); null for releases that install anywhere (in-house, Android, super).
   */
  async provisionedDevices(task: TaskRow): Promise<Set<string> | null> {
    if (task.platform !== 'ios' || task.certificate_id === null || task.cert_type === 'super') return null;
    const certificate = await this.#db.repos.certificates.find(task.account_id, task.certificate_id);
    if (!certificate || (certificate.kind !== 'ios_adhoc' && certificate.kind !== 'ios_development')) return null;
    const { parseProvisioningProfile } = await import('../signing/ios/profile/index.ts');
    const devices = new Set<string>();
    for (const row of await this.#db.repos.certificateProfiles.list(task.account_id, certificate.id)) {
      for (const udid of parseProvisioningProfile(this.#db.repos.certificateProfiles.open(row)).devices) devices.add(udid.toUpperCase());
    }
    return devices;
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

  /**
   * A succeeded task's install links, as tasks, task events and webhooks show them; publishes the
   * release first if the worker has not yet (two publishers racing: the loser reads the winner's).
   */
  async taskLinks(task: TaskRow): Promise<TaskLinksView | null> {
    if (task.status !== 'succeeded') return null;
    const distribution =
      (await this.#db.repos.distributions.findByTask(task.account_id, task.id)) ??
      (await this.publish(task).catch(async (error: unknown) => {
        const winner = await this.#db.repos.distributions.findByTask(task.account_id, task.id);
        if (winner) return winner;
        throw error;
      }));
    const links = this.links(distribution);
    return {
      distribution_id: distribution.id,
      install_url: links.url,
      qr_code_url: links.qr_code_url,
      app_url: distribution.app_id ? await this.appLinkUrl(distribution.app_id) : null,
      download_url: links.download_url,
      itms_services_url: links.itms_services_url,
      manifest_url: links.manifest_url,
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

  /**
   * What the app's permanent link serves: its newest release that can be installed (perhaps
   * behind a password), else its newest release with the reason it cannot.
   */
  async latestRelease(appSlug: string): Promise<{ release: Release; unavailable: UnavailableReason | null }> {
    const link = await this.#appLink(appSlug);
    let newest: Release | null = null;
    for await (const distribution of allRows((page) => this.#db.repos.distributions.listAllForApp(link.account_id, link.app_id, page))) {
      const release = await this.release(distribution.slug).catch(() => null);
      if (release === null) continue;
      newest ??= release;
      if (this.unavailable(distribution) === null) return { release, unavailable: null };
    }
    if (newest === null) throw new AppError('distribution_not_found', 'this app has no release to install');
    return { release: newest, unavailable: this.unavailable(newest.distribution) };
  }

  /**
   * The app's version history, newest first: each release once (the tasks of one upload, or
   * several links to the same version and build, are one release, shown by its best link).
   */
  async history(appSlug: string, limit = 100): Promise<{ appName: string | null; releases: Array<{ release: Release; state: ReleaseState }> }> {
    const link = await this.#appLink(appSlug);
    const app = await this.#db.repos.apps.find(link.account_id, link.app_id);
    const page = await this.#db.repos.distributions.listAllForApp(link.account_id, link.app_id, { limit });
    const releases = (await Promise.all(page.items.map((d) => this.release(d.slug).catch(() => null)))).filter((r): r is Release => r !== null);
    const chosen = new Map<string, { release: Release; state: ReleaseState }>();
    for (const release of releases) {
      const { task } = release;
      const key = task.app_version === null && task.app_build === null ? `upload:${task.upload_id}` : `version:${task.app_version}\n${task.app_build}`;
      const state = this.state(release.distribution);
      const current = chosen.get(key);
      // Newest first already; a usable link replaces an unusable one of the same release.
      if (current === undefined || (!usable(current.state) && usable(state))) chosen.set(key, { release, state });
    }
    return { appName: app?.name ?? null, releases: [...chosen.values()] };
  }

  /** A release's state for its history row. */
  state(distribution: DistributionRow, now = new Date()): ReleaseState {
    const reason = this.unavailable(distribution, now);
    if (reason === 'link_disabled') return 'disabled';
    if (reason === 'link_expired') return 'expired';
    if (reason === 'download_quota_exceeded') return 'exhausted';
    return distribution.password_hash === null ? 'available' : 'password';
  }

  /** What the release's package requires, as read when it was published. */
  requirements(distribution: DistributionRow): ReleaseRequirements {
    const list = (json: string | null): string[] | null => {
      if (json === null) return null;
      const value: unknown = JSON.parse(json);
      return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : null;
    };
    return { minimumOs: distribution.minimum_os, deviceFamilies: list(distribution.device_families), nativeAbis: list(distribution.native_abis) };
  }

  async #appLink(appSlug: string) {
    const link = /^[0-9A-Za-z]{20,64}$/.test(appSlug) ? await this.#db.repos.distributions.findAppLinkBySlug(appSlug) : null;
    if (!link) throw new AppError('distribution_not_found', 'no such app link');
    return link;
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
  unavailable(distribution: DistributionRow, now = new Date()): UnavailableReason | null {
    if (distribution.enabled !== 'yes') return 'link_disabled';
    if (distribution.expires_at !== null && distribution.expires_at <= now.toISOString()) return 'link_expired';
    if (distribution.max_downloads !== null && distribution.downloads >= distribution.max_downloads) return 'download_quota_exceeded';
    return null;
  }

  /**
   * Counts a download against the quota; false when the quota is already used up. `client`
   * (an opaque key of the downloading client) may then resume this download for RESUME_WINDOW_MS
   * even after the quota filled.
   */
  async countDownload(distribution: DistributionRow, client: string, now = new Date()): Promise<boolean> {
    const count = await this.#db.repos.distributions.countDownload(distribution.id, now);
    if (count === null) return false;
    // The one increment that fills the quota announces it (the increment is atomic).
    if (distribution.max_downloads !== null && count === distribution.max_downloads) await this.#options.onQuotaReached?.(distribution, count);
    await this.#db.repos.distributions.recordDownloadStart(distribution.id, client, now, new Date(now.getTime() - RESUME_WINDOW_MS));
    return true;
  }

  /** True when `client` started a counted download of this link recently enough to resume it. */
  mayResume(distribution: DistributionRow, client: string, now = new Date()): Promise<boolean> {
    return this.#db.repos.distributions.downloadStartedSince(distribution.id, client, new Date(now.getTime() - RESUME_WINDOW_MS));
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

  async #storeIcon(icon: NonNullable<ReleaseFacts['icon']>, slug: string): Promise<string> {
    const key = assertBlobKey(`icons/${slug}.${icon.format}`);
    await this.#blobs.put(key, Readable.from([icon.bytes]), { contentType: ICON_TYPES[icon.format] });
    return key;
  }
}

function usable(state: ReleaseState): boolean {
  return state === 'available' || state === 'password';
}
