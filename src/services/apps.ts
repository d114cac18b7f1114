// Apps: packages grouped by (platform, bundle id) per account, with their uploads, tasks and
// releases (install links), the newest release's icon, the permanent link and download counts.
import type { Db } from '../db/database.ts';
import type { DistributionRow } from '../db/distribution-tables.ts';
import type { AppRow } from '../db/schema.ts';
import { collectRows } from '../db/repositories/pagination.ts';
import type { DistributionService } from '../distribution/service.ts';
import { AppError } from '../errors.ts';
import type { Principal } from './principal.ts';
import type { TaskService } from './tasks.ts';
import { appSummaryView, uploadView, type AppDetailView, type AppSummaryView, type ReleaseView } from './views.ts';

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

  async list(principal: Principal): Promise<AppSummaryView[]> {
    const rows = await collectRows((page) => this.db.repos.apps.list(principal.accountId, page), (row: AppRow) => row);
    return Promise.all(rows.map((row) => this.summary(row)));
  }

  async get(principal: Principal, appId: string): Promise<AppDetailView> {
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
      uploads: uploads.items.map(uploadView),
      tasks: await this.tasks.views(tasks.items),
      releases: await Promise.all(releases.items.map((d) => this.release(d))),
      downloads_by_day: downloads.byDay,
    };
  }

  private async summary(row: AppRow): Promise<AppSummaryView> {
    const [latest, link, downloads] = await Promise.all([
      this.db.repos.distributions.latestForApp(row.id),
      this.db.repos.distributions.findAppLink(row.id),
      this.db.repos.distributions.appDownloads(row.id),
    ]);
    const base = this.distributions?.baseUrl ?? null;
    const appUrl = link && base !== null ? `${base}/a/${link.slug}` : null;
    return {
      ...appSummaryView(row),
      icon_url: latest?.icon_blob_key && base !== null ? `${base}/d/${latest.slug}/icon.png` : null,
      app_url: appUrl,
      qr_code_url: appUrl === null ? null : `${appUrl}/qr.svg`,
      latest_release: latest ? await this.release(latest) : null,
      downloads: downloads.total,
    };
  }

  private async release(d: DistributionRow): Promise<ReleaseView> {
    const task = await this.db.repos.tasks.find(d.account_id, d.task_id);
    return {
      distribution_id: d.id,
      task_id: d.task_id,
      version: task?.app_version ?? null,
      build: task?.app_build ?? null,
      url: this.distributions ? this.distributions.links(d).url : null,
      downloads: d.downloads,
      enabled: d.enabled === 'yes',
      created_at: d.created_at,
      notes: task?.notes ?? null,
    };
  }
}
