// Table types of migration 0002 (install links); part of `Database` in ./schema.ts.
import type { Selectable } from 'kysely';
import type { Platform } from '../signing/platform.ts';

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
  // Migration 0009: read from the signed package when published (null: published before).
  /** iOS MinimumOSVersion ("15.0"); Android minSdkVersion as a decimal API level ("24"). */
  minimum_os: string | null;
  /** iOS: JSON array of device families ("iphone", "ipad", …) from UIDeviceFamily. */
  device_families: string | null;
  /** Android: JSON array of the ABIs the APK carries native code for (lib/<abi>/); [] = none. */
  native_abis: string | null;
}

export interface DistributionDailyDownloadsTable {
  distribution_id: string;
  /** UTC day, YYYY-MM-DD. */
  day: string;
  downloads: number;
}

/**
 * The first (counted) download of a link by one client (an HMAC of its address and user agent):
 * lets that client's Range continuations finish after the quota filled. Migration 0009.
 */
export interface DownloadStartsTable {
  distribution_id: string;
  client_key: string;
  started_at: string;
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
  download_starts: DownloadStartsTable;
}

export type DistributionRow = Selectable<DistributionsTable>;
export type AppLinkRow = Selectable<AppLinksTable>;
