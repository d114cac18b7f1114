// The Signer of `super` tasks (iOS, ad-hoc per device). A super task prepares its upload: it reads
// what each bundle is signed with and plans its App IDs (capability-plan.ts: the team's wildcard
// for apps that need no capability, else an explicit App ID per bundle with its capabilities),
// takes the first usable developer account whose team can have those App IDs, registers them
// there with their capabilities (app-ids.ts), and signs the whole app with that account's
// distribution identity and template profiles (template-profile.ts). The prepared build is the
// task's artifact, the plan is stored with the task, and the task's answer names each bundle's
// App ID and capabilities and what could not be carried over. Installable builds are made per
// device by the install page's flow (device-flow.ts).
import type { Db } from '../db/database.ts';
import type { DeveloperAccountRow } from '../db/super-tables.ts';
import { AppError, errorCodeOf } from '../errors.ts';
import { teamNameOf, type DeveloperAccountService } from '../services/developer-accounts.ts';
import type { CertType, Platform, Signer, SignRequest, SignResult } from '../services/signer.ts';
import { AppIdRegistry } from './app-ids.ts';
import { planCapabilities, type SuperAppPlan } from './capability-plan.ts';
import type { DeviceBuildSigner } from './device-signer.ts';

export interface SuperTaskSignerOptions {
  db: Db;
  accounts: DeveloperAccountService;
  engine: DeviceBuildSigner;
}

export class SuperTaskSigner implements Signer {
  readonly platform: Platform = 'ios';
  readonly certTypes: readonly CertType[] = ['super'];
  readonly #options: SuperTaskSignerOptions;
  readonly #appIds: AppIdRegistry;

  constructor(options: SuperTaskSignerOptions) {
    this.#options = options;
    this.#appIds = new AppIdRegistry(options.db);
  }

  async sign(request: SignRequest): Promise<SignResult> {
    const { db, accounts, engine } = this.#options;
    if (request.credential.kind !== 'developer_accounts') throw new AppError('cert_type_unsupported', 'A super task signs with the account\'s Apple developer accounts.');
    const candidates = (await db.repos.developerAccounts.list(request.credential.accountId)).filter((a) => accounts.usable(a));
    if (candidates.length === 0) throw new AppError('certificate_required', 'No usable Apple developer account; register one with POST /v1/developer-accounts.');

    // The package readers and the iOS re-signing engine (pkijs through it) load on the first super task, not at server start.
    const [{ inspectPackage }, { readProvisionedBundles }] = await Promise.all([import('../signing/inspect/index.ts'), import('../signing/ios/resign/index.ts')]);
    const info = await inspectPackage(request.input, { iconBytes: false });
    if (info.platform !== 'ios' || !info.bundleId) throw new AppError('cert_type_unsupported', 'cert_type "super" signs iOS apps only.');
    let plan = planCapabilities(await readProvisionedBundles(request.input, request.signal));
    request.signal.throwIfAborted();
    // A re-run keeps the plan its first run stored (devices may already use it).
    plan = JSON.parse(await db.repos.superSignature.savePlan(request.taskId, JSON.stringify(plan))) as SuperAppPlan;

    const account = await this.#hostingAccount(candidates, plan);
    const secrets = db.repos.developerAccounts.secrets(account);
    const prepared = await engine.prepare({
      input: request.input,
      outputPath: request.outputPath,
      p12: secrets.p12,
      password: secrets.p12Password,
      teamId: account.team_id,
      teamName: teamNameOf(account),
      plan,
      signal: request.signal,
    });
    return {
      app: prepared.app,
      verification: prepared.verification,
      bundles: plan.bundles.map((b) => ({
        path: b.path,
        bundleId: b.bundleId,
        applicationIdentifier: `${account.team_id}.${b.appId}`,
        profile: null,
        capabilities: b.capabilities.map((c) => c.capabilityType),
      })),
      warnings: plan.leftOut,
    };
  }

  /** The first account whose team has (or can register) the plan's App IDs, with their capabilities. */
  async #hostingAccount(candidates: DeveloperAccountRow[], plan: SuperAppPlan): Promise<DeveloperAccountRow> {
    let unavailable: unknown = null;
    for (const account of candidates) {
      try {
        await this.#appIds.ensure(this.#options.accounts.client(account), account, plan);
        return account;
      } catch (error) {
        if (errorCodeOf(error) === 'bundle_id_unavailable') {
          unavailable = error;
          continue;
        }
        await this.#options.accounts.recordFailure(account, error);
        throw error;
      }
    }
    throw unavailable;
  }
}
