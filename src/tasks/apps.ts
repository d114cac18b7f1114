// Apps: packages grouped by (platform, bundle id) per account, with their uploads and tasks.
import type { Db } from '../db/database.ts';
import type { Page, PageRequest } from '../db/repositories.ts';
import { AppError } from '../errors.ts';
import type { Principal } from './principal.ts';
import type { TaskService } from './tasks.ts';
import { appSummaryView, uploadView, type AppDetailView, type AppSummaryView } from './views.ts';

/** How many uploads and tasks an app's page shows (newest first). */
const DETAIL_ITEMS = 50;

async function all<T>(fetch: (page: PageRequest) => Promise<Page<T>>): Promise<T[]> {
  const out: T[] = [];
  let cursor: string | null = null;
  do {
    const page = await fetch({ limit: 100, cursor });
    out.push(...page.items);
    cursor = page.nextCursor;
  } while (cursor !== null);
  return out;
}

export class AppService {
  private readonly db: Db;
  private readonly tasks: TaskService;

  constructor(options: { db: Db; tasks: TaskService }) {
    this.db = options.db;
    this.tasks = options.tasks;
  }

  async list(principal: Principal): Promise<AppSummaryView[]> {
    return (await all((page) => this.db.repos.apps.list(principal.accountId, page))).map(appSummaryView);
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
