// The Signer of `super` tasks (iOS, ad-hoc per device). A super task prepares its upload: it
// picks the account's first usable developer account, makes sure its wildcard App ID exists
// (constants.ts), and signs the whole app with that account's distribution identity and a
// template profile (template-profile.ts). The prepared build is the task's artifact; installable
// builds are made per device by the install page's flow (device-flow.ts).
import type { Db } from '../db/database.ts';
import { SUPER_APP_ID, SUPER_APP_ID_NAME } from './constants.ts';
import type { DeviceBuildSigner } from './device-signer.ts';
import { AppError } from '../errors.ts';
import { FileSource } from '../signing/data-source.ts';
import { inspectPackage } from '../signing/inspect/index.ts';
import { teamNameOf, type DeveloperAccountService } from '../services/developer-accounts.ts';
import type { CertType, Platform, Signer, SignRequest, SignResult } from '../services/signer.ts';

export interface SuperTaskSignerOptions {
  db: Db;
  accounts: DeveloperAccountService;
  engine: DeviceBuildSigner;
}

export class SuperTaskSigner implements Signer {
  readonly platform: Platform = 'ios';
  readonly certTypes: readonly CertType[] = ['super'];
  readonly #options: SuperTaskSignerOptions;

  constructor(options: SuperTaskSignerOptions) {
    this.#options = options;
  }

  async sign(request: SignRequest): Promise<SignResult> {
    const { db, accounts, engine } = this.#options;
    if (request.credential.kind !== 'developer_accounts') throw new AppError('cert_type_unsupported', 'A super task signs with the account\'s Apple developer accounts.');
    const candidates = (await db.repos.developerAccounts.list(request.credential.accountId)).filter((a) => accounts.usable(a));
    const account = candidates[0];
    if (!account) throw new AppError('certificate_required', 'No usable Apple developer account; register one with POST /v1/developer-accounts.');

    const source = await FileSource.open(request.inputPath);
    let info;
    try {
      info = await inspectPackage(source, { iconBytes: false });
    } finally {
      await source.close();
    }
    if (info.platform !== 'ios' || !info.bundleId) throw new AppError('cert_type_unsupported', 'cert_type "super" signs iOS apps only.');
    request.signal.throwIfAborted();

    try {
      await accounts.client(account).ensureBundleId(SUPER_APP_ID, SUPER_APP_ID_NAME);
    } catch (error) {
      await accounts.recordFailure(account, error);
      throw error;
    }
    const secrets = db.repos.developerAccounts.secrets(account);
    const prepared = await engine.prepare({
      inputPath: request.inputPath,
      outputPath: request.outputPath,
      p12: secrets.p12,
      password: secrets.p12Password,
      teamId: account.team_id,
      teamName: teamNameOf(account),
      appIdPattern: SUPER_APP_ID,
      signal: request.signal,
    });
    return { app: prepared.app, verification: prepared.verification };
  }
}
