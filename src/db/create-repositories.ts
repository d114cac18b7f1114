// Binds every repository to one Kysely instance (the database or a transaction).
import type { Kysely } from 'kysely';
import { accountRepository, apiKeyRepository } from './repositories/accounts.ts';
import { accountWebhookRepository } from './repositories/account-webhooks.ts';
import { certificateProfileRepository } from './repositories/certificate-profiles.ts';
import { certificateRepository } from './repositories/certificates.ts';
import { developerAccountRepository } from './repositories/developer-accounts.ts';
import { developerAppIdRepository } from './repositories/developer-app-ids.ts';
import { distributionRepository } from './repositories/distributions.ts';
import { lifecycleRepository } from './repositories/lifecycle.ts';
import { rotationRepository } from './repositories/rotations.ts';
import { invitationRepository, passwordResetRepository, sessionRepository, setupTokenRepository } from './repositories/sessions.ts';
import { superSignatureRepository } from './repositories/super-signature.ts';
import { userRepository } from './repositories/users.ts';
import { taskRepository } from './repositories/tasks.ts';
import { appRepository, uploadRepository } from './repositories/uploads.ts';
import { idempotencyRepository, webhookDeliveryRepository } from './repositories/webhooks.ts';
import type { Repositories } from './repositories.ts';
import type { Database } from './schema.ts';
import type { SecretBox } from './secret-box.ts';

export function createRepositories(db: Kysely<Database>, box: SecretBox): Repositories {
  return {
    accounts: accountRepository(db, box),
    apiKeys: apiKeyRepository(db),
    uploads: uploadRepository(db),
    apps: appRepository(db),
    tasks: taskRepository(db),
    certificates: certificateRepository(db, box),
    certificateProfiles: certificateProfileRepository(db, box),
    webhookDeliveries: webhookDeliveryRepository(db),
    idempotency: idempotencyRepository(db),
    distributions: distributionRepository(db),
    developerAccounts: developerAccountRepository(db, box),
    developerAppIds: developerAppIdRepository(db),
    superSignature: superSignatureRepository(db),
    users: userRepository(db),
    sessions: sessionRepository(db),
    setupTokens: setupTokenRepository(db),
    invitations: invitationRepository(db),
    passwordResets: passwordResetRepository(db),
    lifecycle: lifecycleRepository(db),
    accountWebhooks: accountWebhookRepository(db),
    rotations: rotationRepository(db),
  };
}
