// Table types of migration 0002 (install links); part of `Database` in ./schema.ts.
import type { Selectable } from 'kysely';
import type { Platform } from './schema.ts';

export interface DistributionsTable {
  id: string;
  account_id: string;
  task_id: string;
  app_id: string | null;
  /** The unguessable part of /d/{slug}: 26 base62 characters (~155 bits). */
  slug: string;
  platform: Platform;
  /** Standard PNG of the app icon (CgBI already converted), when the package has one. */
  icon_blob_key: string | null;
  /** scrypt hash (`scrypt$N$r$p$salt$hash`, base64 parts) when the link is password protected. */
  password_hash: string | null;
  expires_at: string | null;
  max_downloads: number | null;
  downloads: number;
  /** 'yes' | 'no' (no booleans on SQLite). */
  enabled: 'yes' | 'no';
  created_at: string;
  updated_at: string;
}

export interface DistributionDailyDownloadsTable {
  distribution_id: string;
  /** UTC day, YYYY-MM-DD. */
  day: string;
  downloads: number;
}

export interface AppLinksTable {
  app_id: string;
  account_id: string;
  slug: string;
  created_at: string;
}

export interface DistributionTables {
  distributions: DistributionsTable;
  distribution_daily_downloads: DistributionDailyDownloadsTable;
  app_links: AppLinksTable;
}

export type DistributionRow = Selectable<DistributionsTable>;
export type AppLinkRow = Selectable<AppLinksTable>;
