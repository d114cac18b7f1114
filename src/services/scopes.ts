// API-key scopes and account roles. A route declares the one scope it needs; an API key carries
// the scopes it was made with, and a console user carries those of their role in the account.
import { AppError } from '../errors.ts';
import { ROLES, SCOPES, type Role, type Scope } from '../db/user-tables.ts';

export { ROLES, SCOPES, type Role, type Scope };

export const SCOPE_DESCRIPTIONS: Record<Scope, string> = {
  upload: 'Upload packages (POST /apps/upload).',
  'tasks:read': 'Read apps, tasks, artifacts, install links, certificates and developer accounts.',
  'tasks:write': 'Create and cancel signing tasks.',
  'links:write': 'Change install links (password, expiry, quota, enabled).',
  'certificates:write': 'Upload and delete certificates and Apple developer accounts.',
  admin: 'Manage API keys, members, invitations and the webhook secret.',
};

/**
 * owner: everything, including other owners and the account itself; admin: certificates,
 * developer accounts, API keys, links and members; developer: upload, tasks and links;
 * viewer: read only.
 */
export const ROLE_SCOPES: Record<Role, readonly Scope[]> = {
  owner: SCOPES,
  admin: SCOPES,
  developer: ['upload', 'tasks:read', 'tasks:write', 'links:write'],
  viewer: ['tasks:read'],
};

export function parseScopes(text: string): Set<Scope> {
  return new Set(text.split(/\s+/).filter((s): s is Scope => (SCOPES as readonly string[]).includes(s)));
}

export function isRole(value: string): value is Role {
  return (ROLES as readonly string[]).includes(value);
}

/** Ranks for "may this member grant that role": a role can only hand out roles at or below its own. */
const RANK: Record<Role, number> = { viewer: 0, developer: 1, admin: 2, owner: 3 };

export function outranks(granter: Role, granted: Role): boolean {
  return RANK[granter] >= RANK[granted];
}

export function requireScope(scopes: ReadonlySet<Scope>, needed: Scope): void {
  if (!scopes.has(needed)) throw new AppError('insufficient_scope', `This request needs the "${needed}" scope.`, { details: { scope: needed } });
}
