// Who is calling: the account every query is scoped to, the credential (an API key, or a console
// session) for rate limits and logs, what it may do, and the console user behind it if any.
import type { Role, Scope } from '../db/user-tables.ts';

export interface Principal {
  accountId: string;
  /** The credential's id: `key_…` for an API key, `ses_…` for a console session. */
  keyId: string;
  scopes: ReadonlySet<Scope>;
  /** The console user and their role in the account; null for API keys. */
  user: { id: string; role: Role } | null;
}
