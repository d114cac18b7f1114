// `signet keys create|list|revoke`: API key management on the server's own database (run it
// where `signet serve` runs, with the same SIGNET_* environment).
import type { Command } from 'commander';
import { loadConfig } from '../../config.ts';
import { openDatabase, type Db } from '../../db/database.ts';
import { ApiKeyService } from '../../services/api-keys.ts';

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
    .action(async (options: { account: string; label?: string }) => {
      const created = await withKeys((service) => service.create(options.account, options.label ?? null));
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
      const rows = [['ID', 'PREFIX', 'LABEL', 'CREATED', 'LAST USED', 'REVOKED'], ...list.map((k) => [k.id, `${k.prefix}…`, k.label ?? '', k.created_at, k.last_used_at ?? '', k.revoked_at ?? ''])];
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
