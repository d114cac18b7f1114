// Apps: packages grouped by (platform, bundle id) per account, with their uploads, tasks and
// releases (install links), the newest release's icon, the permanent link and download counts.
import type { Db } from '../db/database.ts';
import type { DistributionRow } from '../db/distribution-tables.ts';
import type { AppRow, UploadRow } from '../db/schema.ts';
import { collectRows } from '../db/repositories/pagination.ts';
import type { DistributionService } from '../distribution/service.ts';
import { AppError } from '../errors.ts';
import type { Principal } from './principal.ts';
import type { TaskRecord, TaskService } from './tasks.ts';

/** An install link of an app with the version it installs; `url` is null without a public base URL. */
export interface Release {
  distribution: DistributionRow;
  version: string | null;
  build: string | null;
  url: string | null;
  /** Release notes of the task that published it (plain text or Markdown). */
  notes: string | null;
}

export interface AppSummary {
  app: AppRow;
  iconUrl: string | null;
  /** The permanent link that always installs the newest release. */
  appUrl: string | null;
  qrCodeUrl: string | null;
  latestRelease: Release | null;
  downloads: number;
}

export interface AppDetail extends AppSummary {
  uploads: UploadRow[];
  tasks: TaskRecord[];
  releases: Release[];
  downloadsByDay: Array<{ day: string; downloads: number }>;
}

/** How many uploads, tasks and releases an app's page shows (newest first). */
const DETAIL_ITEMS = 50;

export class AppService {
  private readonly db: Db;
  private readonly tasks: TaskService;
  private readonly distributions: DistributionService | null;

  constructor(options: { db: Db; tasks: TaskService; distributions?: DistributionService }) {
    this.db = options.db;
    this.tasks = options.tasks;
    this.distributions = options.distributions ?? null;
  }

  async list(principal: Principal): Promise<AppSummary[]> {
    const rows = await collectRows((page) => this.db.repos.apps.list(principal.accountId, page), (row: AppRow) => row);
    return Promise.all(rows.map((row) => this.summary(row)));
  }

  async get(principal: Principal, appId: string): Promise<AppDetail> {
    const app = await this.db.repos.apps.find(principal.accountId, appId);
    if (!app) throw new AppError('app_not_found', `No app ${appId}.`);
    const [summary, uploads, tasks, releases, downloads] = await Promise.all([
      this.summary(app),
      this.db.repos.uploads.listByApp(principal.accountId, app.id, { limit: DETAIL_ITEMS }),
      this.db.repos.tasks.list(principal.accountId, { appId: app.id, limit: DETAIL_ITEMS }),
      this.db.repos.distributions.listAllForApp(principal.accountId, app.id, { limit: DETAIL_ITEMS }),
      this.db.repos.distributions.appDownloads(app.id),
    ]);
    return {
      ...summary,
      uploads: uploads.items,
      tasks: await this.tasks.records(tasks.items),
      releases: await Promise.all(releases.items.map((d) => this.release(d))),
      downloadsByDay: downloads.byDay,
    };
  }

  private async summary(row: AppRow): Promise<AppSummary> {
    const [latest, link, downloads] = await Promise.all([
      this.db.repos.distributions.latestForApp(row.id),
      this.db.repos.distributions.findAppLink(row.id),
      this.db.repos.distributions.appDownloads(row.id),
    ]);
    const base = this.distributions?.baseUrl ?? null;
    const appUrl = link && base !== null ? `${base}/a/${link.slug}` : null;
    return {
      app: row,
      iconUrl: latest?.icon_blob_key && base !== null ? `${base}/d/${latest.slug}/icon.png` : null,
      appUrl,
      qrCodeUrl: appUrl === null ? null : `${appUrl}/qr.svg`,
      latestRelease: latest ? await this.release(latest) : null,
      downloads: downloads.total,
    };
  }

  private async release(d: DistributionRow): Promise<Release> {
    const task = await this.db.repos.tasks.find(d.account_id, d.task_id);
    return {
      distribution: d,
      version: task?.app_version ?? null,
      build: task?.app_build ?? null,
      url: this.distributions ? this.distributions.links(d).url : null,
      notes: task?.notes ?? null,
    };
  }
}
