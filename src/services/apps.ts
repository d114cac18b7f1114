// Apps: packages grouped by (platform, bundle id) per account, with their uploads and tasks.
import type { Db } from '../db/database.ts';
import { collectRows } from '../db/repositories/pagination.ts';
import { AppError } from '../errors.ts';
import type { Principal } from './principal.ts';
import type { TaskService } from './tasks.ts';
import { appSummaryView, uploadView, type AppDetailView, type AppSummaryView } from './views.ts';

/** How many uploads and tasks an app's page shows (newest first). */
const DETAIL_ITEMS = 50;

export class AppService {
  private readonly db: Db;
  private readonly tasks: TaskService;

  constructor(options: { db: Db; tasks: TaskService }) {
    this.db = options.db;
    this.tasks = options.tasks;
  }

  async list(principal: Principal): Promise<AppSummaryView[]> {
    return collectRows((page) => this.db.repos.apps.list(principal.accountId, page), appSummaryView);
  }

  async get(principal: Principal, appId: string): Promise<AppDetailView> {
    const app = await this.db.repos.apps.find(principal.accountId, appId);
    if (!app) throw new AppError('app_not_found', `No app ${appId}.`);
    const [uploads, tasks] = await Promise.all([
      this.db.repos.uploads.listByApp(principal.accountId, app.id, { limit: DETAIL_ITEMS }),
      this.db.repos.tasks.list(principal.accountId, { appId: app.id, limit: DETAIL_ITEMS }),
    ]);
    return {
      ...appSummaryView(app),
      uploads: uploads.items.map(uploadView),
      tasks: await this.tasks.views(tasks.items),
    };
  }
}
