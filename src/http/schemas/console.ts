// TypeBox shapes of the console's resources: sessions, members, invitations, API keys, the
// account and its webhook settings. Mirrors src/services/{sessions,users,invitations,api-keys}.ts.
import { Type } from 'typebox';
import { ROLES, SCOPES } from '../../db/user-tables.ts';
import { NullableString, Timestamp } from './common.ts';

export const Role = Type.Union(ROLES.map((r) => Type.Literal(r)), {
  description: '`owner`: everything, including owners and the account; `admin`: certificates, developer accounts, API keys, links, members; `developer`: upload, tasks, links; `viewer`: read only.',
});
export const Scope = Type.Union(SCOPES.map((s) => Type.Literal(s)));
const NullableTimestamp = (description: string) => Type.Union([Timestamp, Type.Null()], { description });

export const AccountRef = Type.Object({ id: Type.String({ description: '`acc_…`' }), name: Type.String(), role: Role }, { additionalProperties: false });

export const Session = Type.Object(
  {
    user: Type.Object({ id: Type.String({ description: '`usr_…`' }), email: Type.String(), name: NullableString() }, { additionalProperties: false }),
    account: Type.Union([AccountRef, Type.Null()], { description: 'The account the console acts on; null when the user belongs to none.' }),
    accounts: Type.Array(AccountRef, { description: 'Every account the user is a member of.' }),
    scopes: Type.Array(Scope, { description: "What the user's role allows in `account`." }),
    csrf_token: Type.String({ description: 'Send it as `X-CSRF-Token` on every request that changes something.' }),
    expires_at: Timestamp,
    idle_timeout_seconds: Type.Integer({ description: 'The session ends after this long without a request.' }),
  },
  { additionalProperties: false },
);

export const Credentials = Type.Object(
  { email: Type.String({ minLength: 1, maxLength: 254 }), password: Type.String({ minLength: 1, maxLength: 200 }) },
  { additionalProperties: false },
);

const NewPassword = Type.String({ minLength: 1, maxLength: 200, description: 'At least 10 characters.' });

export const SetupStatus = Type.Object(
  {
    needed: Type.Boolean({ description: 'No user exists yet.' }),
    token_valid: Type.Boolean(),
    existing_accounts: Type.Array(Type.String(), { description: 'Accounts (made before users existed) the first owner will own.' }),
  },
  { additionalProperties: false },
);

export const SetupBody = Type.Object(
  {
    token: Type.String({ minLength: 1, maxLength: 100 }),
    email: Type.String({ minLength: 1, maxLength: 254 }),
    password: NewPassword,
    name: Type.Optional(Type.String({ maxLength: 200 })),
    account_name: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'The team to create on a fresh install (default `default`).' })),
  },
  { additionalProperties: false },
);

export const PasswordChange = Type.Object({ current_password: Type.String({ minLength: 1, maxLength: 200 }), new_password: NewPassword }, { additionalProperties: false });
export const PasswordReset = Type.Object({ token: Type.String({ minLength: 1, maxLength: 100 }), password: NewPassword }, { additionalProperties: false });

export const Member = Type.Object(
  { user_id: Type.String({ description: '`usr_…`' }), email: Type.String(), name: NullableString(), role: Role, joined_at: Timestamp },
  { additionalProperties: false },
);

export const Invitation = Type.Object(
  { id: Type.String({ description: '`inv_…`' }), email: Type.String(), role: Role, created_at: Timestamp, expires_at: Timestamp },
  { additionalProperties: false },
);

export const CreatedInvitation = Type.Object(
  { ...Invitation.properties, url: Type.String({ description: 'The invitation link, shown only now: hand it to the invitee.' }) },
  { additionalProperties: false },
);

export const InvitationLookup = Type.Object(
  {
    account_name: Type.String(),
    email: Type.String(),
    role: Role,
    user_exists: Type.Boolean({ description: 'Accepting asks for the existing password instead of a new one.' }),
    expires_at: Timestamp,
  },
  { additionalProperties: false },
);

export const ApiKey = Type.Object(
  {
    id: Type.String({ description: '`key_…`' }),
    label: NullableString(),
    prefix: Type.String({ description: 'The first characters of the key, to recognise it.' }),
    scopes: Type.Array(Scope),
    created_at: Timestamp,
    expires_at: NullableTimestamp('After this time the key is refused; null: never.'),
    last_used_at: NullableTimestamp('Last request with this key (refreshed at most once a minute).'),
    revoked_at: NullableTimestamp('Set once revoked.'),
  },
  { additionalProperties: false },
);

export const CreatedApiKey = Type.Object(
  { ...ApiKey.properties, key: Type.String({ description: 'The key itself (`sk_…`), shown only in this response.' }) },
  { additionalProperties: false },
);

export const CreateApiKeyBody = Type.Object(
  {
    label: Type.Optional(Type.String({ maxLength: 100 })),
    scopes: Type.Array(Scope, { minItems: 1, maxItems: SCOPES.length, uniqueItems: true }),
    expires_at: Type.Optional(Type.Unsafe<string | null>({ type: ['string', 'null'], format: 'date-time', description: 'Null or absent: never expires.' })),
  },
  { additionalProperties: false },
);

export const Account = Type.Object(
  {
    id: Type.String({ description: '`acc_…`' }),
    name: Type.String(),
    created_at: Timestamp,
    credential: Type.Union([Type.Literal('api_key'), Type.Literal('session')], { description: 'How this request authenticated.' }),
    role: Type.Union([Role, Type.Null()], { description: "The signed-in user's role; null for API keys." }),
    scopes: Type.Array(Scope, { description: 'What this request may do.' }),
  },
  { additionalProperties: false },
);

export const WebhookSecret = Type.Object({ secret: Type.String({ description: '`whsec_…`: verifies Signet-Signature.' }) }, { additionalProperties: false });

export const WebhookTest = Type.Object(
  {
    delivered: Type.Boolean(),
    status_code: Type.Union([Type.Integer(), Type.Null()]),
    error: NullableString(),
    duration_ms: Type.Integer(),
  },
  { additionalProperties: false },
);
