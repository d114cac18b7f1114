// Every query the service runs, grouped per table behind small interfaces. Rows are returned as
// stored (snake_case, ISO timestamps; see schema.ts); the HTTP layer shapes them into API JSON.
// All methods that take `accountId` scope the query to that account, so a foreign id reads as
// "not found" and never leaks another account's data.
// The repositories live one per table group in ./repositories/, each beside its interface; this
// file only gathers them (and re-exports their types for callers), so no member imports it back.
import type { AccountRepository, ApiKeyRepository } from './repositories/accounts.ts';
import type { AccountWebhookRepository } from './repositories/account-webhooks.ts';
import type { CertificateProfileRepository } from './repositories/certificate-profiles.ts';
import type { CertificateRepository } from './repositories/certificates.ts';
import type { DeveloperAccountRepository } from './repositories/developer-accounts.ts';
import type { DeveloperAppIdRepository } from './repositories/developer-app-ids.ts';
import type { DistributionRepository } from './repositories/distributions.ts';
import type { LifecycleRepository } from './repositories/lifecycle.ts';
import type { RotationRepository } from './repositories/rotations.ts';
import type { InvitationRepository, PasswordResetRepository, SessionRepository, SetupTokenRepository } from './repositories/sessions.ts';
import type { SuperSignatureRepository } from './repositories/super-signature.ts';
import type { TaskRepository } from './repositories/tasks.ts';
import type { AppRepository, UploadRepository } from './repositories/uploads.ts';
import type { UserRepository } from './repositories/users.ts';
import type { IdempotencyRepository, WebhookDeliveryRepository } from './repositories/webhooks.ts';

export type { AccountRepository, ApiKeyRepository } from './repositories/accounts.ts';
export type { CertificateRepository, NewCertificateInput } from './repositories/certificates.ts';
export type { DistributionRepository } from './repositories/distributions.ts';
export type { LifecycleRepository } from './repositories/lifecycle.ts';
export type { Page, PageRequest } from './repositories/pagination.ts';
export type { NewTaskInput, TaskOutcome, TaskRepository } from './repositories/tasks.ts';
export type { AppRepository, UploadRepository } from './repositories/uploads.ts';
export type { IdempotencyRepository, WebhookDeliveryRepository } from './repositories/webhooks.ts';

export interface Repositories {
  accounts: AccountRepository;
  apiKeys: ApiKeyRepository;
  uploads: UploadRepository;
  apps: AppRepository;
  tasks: TaskRepository;
  certificates: CertificateRepository;
  certificateProfiles: CertificateProfileRepository;
  webhookDeliveries: WebhookDeliveryRepository;
  idempotency: IdempotencyRepository;
  distributions: DistributionRepository;
  developerAccounts: DeveloperAccountRepository;
  developerAppIds: DeveloperAppIdRepository;
  superSignature: SuperSignatureRepository;
  users: UserRepository;
  sessions: SessionRepository;
  setupTokens: SetupTokenRepository;
  invitations: InvitationRepository;
  passwordResets: PasswordResetRepository;
  lifecycle: LifecycleRepository;
  accountWebhooks: AccountWebhookRepository;
  rotations: RotationRepository;
}
