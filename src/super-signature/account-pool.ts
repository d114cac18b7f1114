// Which developer account hosts a device (distribution-protocols.md §3.3, "Account choice"):
// 1. sticky: an account of this tenant where the UDID already has a slot (costs nothing);
// 2. otherwise a usable account with a free slot for the device's class, preferring accounts
//    that already host the app (their profile just grows), then the most free slots.
// The slot is reserved in the database before Apple is asked (a registration can never be
// undone for a year, §3.2.5), in a transaction per candidate account; concurrent arrivals of the
// same UDID meet on the (account, udid) unique key and share one row.
import type { Db } from '../db/database.ts';
import type { DeveloperAccountRow, DeveloperDeviceRow } from '../db/super-tables.ts';
import { AppError, type ErrorCode } from '../errors.ts';
import type { DeveloperAccountService } from '../services/developer-accounts.ts';

export interface PoolChoice {
  account: DeveloperAccountRow;
  device: DeveloperDeviceRow;
  /** True when this call took a new slot (release it if Apple then refuses the device). */
  reserved: boolean;
}

const HEALTH_CODES: Record<string, ErrorCode> = {
  key_rejected: 'developer_key_rejected',
  agreement_required: 'developer_agreement_required',
  certificate_expired: 'developer_certificate_unusable',
  certificate_revoked: 'developer_certificate_unusable',
  unreachable: 'apple_unavailable',
};

export class AccountPool {
  readonly #db: Db;
  readonly #accounts: DeveloperAccountService;

  constructor(options: { db: Db; accounts: DeveloperAccountService }) {
    this.#db = options.db;
    this.#accounts = options.accounts;
  }

  async choose(input: { tenantId: string; udid: string; deviceClass: string; bundleIdentifier: string; deviceName: string | null; exclude?: ReadonlySet<string> }): Promise<PoolChoice> {
    const repo = this.#db.repos.developerAccounts;
    const all = await repo.list(input.tenantId);
    const healthy = all.filter((a) => this.#accounts.usable(a));
    // `exclude`: accounts Apple just said are full (their slots were used outside Signet).
    const usable = healthy.filter((a) => !input.exclude?.has(a.id));

    for (const existing of await repo.findDeviceInAccounts(input.tenantId, input.udid)) {
      const account = usable.find((a) => a.id === existing.developer_account_id);
      if (account && existing.status !== 'INELIGIBLE') return { account, device: existing, reserved: false };
    }
    if (healthy.length === 0) {
      const first = all[0];
      if (!first) throw new AppError('certificate_required', 'This Signet account has no Apple developer account for super signature.');
      const code = HEALTH_CODES[first.health] ?? 'developer_certificate_unusable';
      throw new AppError(code, `No developer account can take new devices: ${first.health_detail ?? first.health}.`);
    }

    const ranked = await Promise.all(
      usable.map(async (account) => {
        const used = (await repo.usage(account.id))[input.deviceClass] ?? 0;
        const hosting = (await this.#db.repos.superSignature.currentProfile(account.id, input.bundleIdentifier)) !== null;
        return { account, free: account.slots_per_class - used, hosting };
      }),
    );
    ranked.sort((a, b) => Number(b.hosting) - Number(a.hosting) || b.free - a.free);
    for (const { account, free } of ranked) {
      if (free <= 0) continue;
      const result = await this.#db.transaction((tx) =>
        tx.repos.developerAccounts.reserveSlot({
          developerAccountId: account.id,
          udid: input.udid,
          deviceClass: input.deviceClass,
          name: input.deviceName,
          lock: this.#db.dialect === 'postgres',
        }),
      );
      if (result) return { account, ...result };
    }
    throw new AppError('device_slots_exhausted', `Every developer account has used its ${input.deviceClass} device slots for this membership year.`);
  }
}
