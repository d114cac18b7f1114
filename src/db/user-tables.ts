// Table types of migration 0006 (console users, sessions, invitations); part of `Database` in
// ./schema.ts. Tokens (sessions, setup, invitations, password resets) are stored only as their
// SHA-256, like API keys: a leaked database yields no usable link or cookie.
import type { Selectable } from 'kysely';

export const ROLES = ['owner', 'admin', 'developer', 'viewer'] as const;
export type Role = (typeof ROLES)[number];

/** What an API key (or a role) may do; stored space-separated in api_keys.scopes. */
export const SCOPES = ['upload', 'tasks:read', 'tasks:write', 'links:write', 'certificates:write', 'admin'] as const;
export type Scope = (typeof SCOPES)[number];

export interface UsersTable {
  id: string;
  /** Lowercased; unique. */
  email: string;
  name: string | null;
  /** scrypt hash (`scrypt$N$r$p$salt$hash`), the format of install-link passwords. */
  password_hash: string;
  created_at: string;
  password_changed_at: string;
}

export interface MembershipsTable {
  account_id: string;
  user_id: string;
  role: Role;
  created_at: string;
}

export interface SessionsTable {
  /** `ses_…`: the public handle (logs); the cookie carries a separate secret token. */
  id: string;
  user_id: string;
  /** The account the console acts on; null until one is chosen (or after it was deleted). */
  account_id: string | null;
  /** Lowercase hex SHA-256 of the cookie token. */
  token_hash: string;
  created_at: string;
  /** Refreshed at most once a minute; idle expiry counts from here. */
  last_seen_at: string;
  /** Absolute expiry. */
  expires_at: string;
  revoked_at: string | null;
  remote: string | null;
  user_agent: string | null;
}

export interface SetupTokensTable {
  token_hash: string;
  created_at: string;
  expires_at: string;
}

export interface InvitationsTable {
  id: string;
  account_id: string;
  email: string;
  role: Role;
  token_hash: string;
  invited_by: string | null;
  created_at: string;
  expires_at: string;
  accepted_at: string | null;
  revoked_at: string | null;
}

export interface PasswordResetsTable {
  token_hash: string;
  user_id: string;
  created_at: string;
  expires_at: string;
  used_at: string | null;
}

export interface UserTables {
  users: UsersTable;
  memberships: MembershipsTable;
  sessions: SessionsTable;
  setup_tokens: SetupTokensTable;
  invitations: InvitationsTable;
  password_resets: PasswordResetsTable;
}

export type UserRow = Selectable<UsersTable>;
export type MembershipRow = Selectable<MembershipsTable>;
export type SessionRow = Selectable<SessionsTable>;
export type InvitationRow = Selectable<InvitationsTable>;
