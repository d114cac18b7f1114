// The App IDs a super-signed app needs in one developer account, made to exist with their
// capabilities (capability-plan.ts). Idempotent across workers without a lock held over network
// calls: each step is safe to run twice at once.
// - App Store Connect: a bundle id registered meanwhile answers 409 and is found again
//   (AppStoreConnect.ensureBundleId); an enabled capability answers 409 and is found in the list
//   (enableCapability). Another team owning the identifier is `bundle_id_unavailable`.
// - Signet: developer_app_ids holds one row per (account, identifier), upserted with what Apple
//   last answered; once it lists every capability a plan needs, devices skip Apple entirely.
//   "Unavailable" is remembered for a day, so an account that cannot host an app is not asked again
//   for every device (the owner may give the identifier up; then it is tried again).
import type { AppStoreConnect } from '../apple/app-store-connect.ts';
import type { Db } from '../db/database.ts';
import type { DeveloperAppIdRow } from '../db/profile-tables.ts';
import type { DeveloperAccountRow } from '../db/super-tables.ts';
import { AppError, errorCodeOf } from '../errors.ts';
import { appIdsOf, type BundlePlan, type SuperAppPlan } from './capability-plan.ts';
import { SUPER_APP_ID, SUPER_APP_ID_NAME } from './constants.ts';

const UNAVAILABLE_RECHECK_MS = 86_400_000;

export class AppIdRegistry {
  readonly #db: Db;

  constructor(db: Db) {
    this.#db = db;
  }

  /** Every App ID of the plan, existing in the account's team with its capabilities (app first). */
  async ensure(api: AppStoreConnect, account: DeveloperAccountRow, plan: SuperAppPlan): Promise<DeveloperAppIdRow[]> {
    const rows: DeveloperAppIdRow[] = [];
    for (const appId of appIdsOf(plan)) {
      const needed = [...new Map(plan.bundles.filter((b) => b.appId === appId).flatMap((b) => b.capabilities).map((c) => [c.capabilityType, c])).values()];
      rows.push(await this.#ensureOne(api, account, appId, needed));
    }
    return rows;
  }

  /** Whether the account is known to be unable to host the plan (another team owns an App ID). */
  async knownUnavailable(account: DeveloperAccountRow, plan: SuperAppPlan): Promise<boolean> {
    const ids = appIdsOf(plan).filter((id) => id !== SUPER_APP_ID);
    for (const id of await this.#db.repos.developerAppIds.unavailable(account.id, ids)) {
      const row = await this.#db.repos.developerAppIds.find(account.id, id);
      if (row && Date.parse(row.updated_at) > Date.now() - UNAVAILABLE_RECHECK_MS) return true;
    }
    return false;
  }

  async #ensureOne(api: AppStoreConnect, account: DeveloperAccountRow, identifier: string, needed: BundlePlan['capabilities']): Promise<DeveloperAppIdRow> {
    const repo = this.#db.repos.developerAppIds;
    const known = await repo.find(account.id, identifier);
    if (known?.state === 'unavailable' && Date.parse(known.updated_at) > Date.now() - UNAVAILABLE_RECHECK_MS) throw unavailable(identifier, known.detail);
    const enabled = new Set<string>(known?.state === 'registered' ? (JSON.parse(known.capabilities_json) as string[]) : []);
    if (known?.state === 'registered' && known.asc_bundle_id !== null && needed.every((c) => enabled.has(c.capabilityType))) return known;

    let bundle;
    try {
      bundle = await api.ensureBundleId(identifier, identifier === SUPER_APP_ID ? SUPER_APP_ID_NAME : appIdName(identifier));
    } catch (error) {
      if (errorCodeOf(error) !== 'bundle_id_unavailable') throw error;
      const detail = error instanceof Error ? error.message : String(error);
      await repo.record({ developerAccountId: account.id, identifier, state: 'unavailable', ascBundleId: null, capabilities: [], changed: false, detail });
      throw unavailable(identifier, detail, error);
    }
    let changed = false;
    const atApple = new Set<string>(needed.length === 0 ? [] : (await api.listCapabilities(bundle.id)).map((c) => c.capabilityType));
    for (const capability of needed) {
      if (atApple.has(capability.capabilityType)) continue;
      await api.enableCapability(bundle.id, capability);
      atApple.add(capability.capabilityType);
      changed = true;
    }
    return repo.record({ developerAccountId: account.id, identifier, state: 'registered', ascBundleId: bundle.id, capabilities: [...atApple], changed, detail: null });
  }
}

/** Apple's App ID descriptions take letters, digits and spaces only. */
function appIdName(identifier: string): string {
  return `Signet ${identifier.replace(/[^A-Za-z0-9]+/g, ' ').trim()}`.slice(0, 255);
}

function unavailable(identifier: string, detail: string | null, cause?: unknown): AppError {
  return new AppError('bundle_id_unavailable', `The App ID "${identifier}" is registered by another Apple team, so this developer account cannot provision the app with its capabilities.`, {
    ...(cause === undefined ? {} : { cause }),
    details: { identifier, ...(detail === null ? {} : { apple: detail }) },
  });
}
