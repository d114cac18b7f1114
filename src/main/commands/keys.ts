// `signet keys create|list|revoke`: API key management on the server's own database (run it
// where `signet serve` runs, with the same SIGNET_* environment).
import type { Command } from 'commander';
import { loadConfig } from '../../config.ts';
import { openDatabase, type Db } from '../../db/database.ts';
import { AppError } from '../../errors.ts';
import { ApiKeyService } from '../../services/api-keys.ts';
import { SCOPES } from '../../services/scopes.ts';

async function withKeys<T>(fn: (keys: ApiKeyService) => Promise<T>): Promise<T> {
  const db: Db = await openDatabase(loadConfig(process.env));
  try {
    return await fn(new ApiKeyService(db.repos));
  } finally {
    await db.close();
  }
}

export function register(program: Command): void {
  const keys = program.command('keys').description('Manage API keys');

  keys
    .command('create')
    .description('Create an API key (and the account, if missing); prints only the key, once')
    .requiredOption('--account <name>', 'account name')
    .option('--label <label>', 'a note to recognise the key by')
    .option('--scopes <list>', `comma-separated scopes (default: all of ${SCOPES.join(',')})`)
    .option('--expires <date>', 'ISO 8601 date-time after which the key is refused')
    .action(async (options: { account: string; label?: string; scopes?: string; expires?: string }) => {
      const expiresAt = options.expires === undefined ? null : new Date(options.expires);
      if (expiresAt !== null && Number.isNaN(expiresAt.getTime())) throw new AppError('invalid_request', '--expires must be an ISO 8601 date-time');
      const scopes = options.scopes?.split(',').map((s) => s.trim()).filter(Boolean);
      const created = await withKeys((service) => service.create(options.account, options.label ?? null, { ...(scopes ? { scopes } : {}), expiresAt }));
      process.stdout.write(`${created.key}\n`);
    });

  keys
    .command('list')
    .description("List an account's keys (never the keys themselves)")
    .requiredOption('--account <name>', 'account name')
    .option('--json', 'print JSON')
    .action(async (options: { account: string; json?: boolean }) => {
      const list = await withKeys((service) => service.list(options.account));
      if (options.json) {
        process.stdout.write(`${JSON.stringify(list, null, 2)}\n`);
        return;
      }
      const rows = [
        ['ID', 'PREFIX', 'LABEL', 'SCOPES', 'CREATED', 'EXPIRES', 'LAST USED', 'REVOKED'],
        ...list.map((k) => [k.id, `${k.prefix}…`, k.label ?? '', k.scopes.length === SCOPES.length ? 'all' : k.scopes.join(','), k.created_at, k.expires_at ?? '', k.last_used_at ?? '', k.revoked_at ?? '']),
      ];
      const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
      for (const row of rows) process.stdout.write(`${row.map((cell, i) => cell.padEnd(widths[i]!)).join('  ').trimEnd()}\n`);
    });

  keys
    .command('revoke')
    .description('Revoke a key by id (key_…); requests with it get 401 from then on')
    .argument('<key_id>', 'the key id shown by `keys list`')
    .action(async (keyId: string) => {
      const revoked = await withKeys((service) => service.revoke(keyId));
      if (!revoked) {
        process.stderr.write(`No active key ${keyId}.\n`);
        process.exitCode = 1;
        return;
      }
      process.stdout.write(`Revoked ${keyId}.\n`);
    });
}
