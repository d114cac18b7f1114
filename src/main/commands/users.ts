// `signet users create|reset-password`: console users on the server's own database, for headless
// installs and for the operator (run it where `signet serve` runs, with the same SIGNET_*
// environment). Passwords come from standard input (--password-stdin) or are generated and
// printed once; they never go on the command line, where `ps` and shell history would keep them.
import { randomBytes } from 'node:crypto';
import type { Command } from 'commander';
import { loadConfig, publicBaseUrl } from '../../config.ts';
import { openDatabase, type Db } from '../../db/database.ts';
import { AppError } from '../../errors.ts';
import { isRole, ROLES } from '../../services/scopes.ts';
import { UserService } from '../../services/users.ts';

async function withUsers<T>(fn: (users: UserService, db: Db) => Promise<T>): Promise<T> {
  const config = loadConfig(process.env);
  const db = await openDatabase(config);
  try {
    return await fn(new UserService({ db, baseUrl: () => publicBaseUrl(config) }), db);
  } finally {
    await db.close();
  }
}

async function readPassword(fromStdin: boolean | undefined): Promise<{ password: string; generated: boolean }> {
  if (!fromStdin) return { password: randomBytes(18).toString('base64url'), generated: true };
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  // One line: the trailing newline of `echo` or a heredoc is not part of the password.
  const password = Buffer.concat(chunks).toString('utf8').replace(/\r?\n$/, '');
  if (password === '') throw new AppError('invalid_request', 'standard input held no password');
  return { password, generated: false };
}

export function register(program: Command): void {
  const users = program.command('users').description('Manage console users');

  users
    .command('create')
    .description('Create a console user in an account (created if missing), or add an existing user to it')
    .requiredOption('--email <email>', "the user's email (their sign-in name)")
    .requiredOption('--account <name>', 'account (team) name')
    .option('--role <role>', `${ROLES.join(', ')}`, 'owner')
    .option('--password-stdin', 'read the password from standard input (else one is generated and printed)')
    .action(async (options: { email: string; account: string; role: string; passwordStdin?: boolean }) => {
      if (!isRole(options.role)) throw new AppError('invalid_request', `--role must be one of ${ROLES.join(', ')}`);
      const role = options.role;
      const { password, generated } = await readPassword(options.passwordStdin);
      const result = await withUsers((service) => service.createInAccount({ email: options.email, password, accountName: options.account, role }));
      if (!result.created) {
        process.stdout.write(`${result.user.email} already exists; added to "${result.account.name}" as ${role} (password unchanged).\n`);
        return;
      }
      process.stdout.write(`Created ${result.user.email} (${role} of "${result.account.name}").\n`);
      if (generated) process.stdout.write(`Password, shown only this once:\n${password}\n`);
    });

  users
    .command('reset-password')
    .description("Set a user's password and end all their sessions")
    .requiredOption('--email <email>', "the user's email")
    .option('--password-stdin', 'read the new password from standard input (else one is generated and printed)')
    .action(async (options: { email: string; passwordStdin?: boolean }) => {
      const { password, generated } = await readPassword(options.passwordStdin);
      const user = await withUsers((service) => service.setPassword({ email: options.email }, password));
      process.stdout.write(`Password of ${user.email} reset; their sessions have ended.\n`);
      if (generated) process.stdout.write(`New password, shown only this once:\n${password}\n`);
    });

  users
    .command('list')
    .description('List console users and their accounts')
    .option('--json', 'print JSON')
    .action(async (options: { json?: boolean }) => {
      const list = await withUsers(async (_service, db) => {
        const rows = await db.kysely
          .selectFrom('users')
          .leftJoin('memberships', 'memberships.user_id', 'users.id')
          .leftJoin('accounts', 'accounts.id', 'memberships.account_id')
          .select(['users.id', 'users.email', 'users.created_at', 'accounts.name as account', 'memberships.role'])
          .orderBy('users.created_at')
          .execute();
        return rows;
      });
      if (options.json) {
        process.stdout.write(`${JSON.stringify(list, null, 2)}\n`);
        return;
      }
      const rows = [['ID', 'EMAIL', 'ACCOUNT', 'ROLE', 'CREATED'], ...list.map((u) => [u.id, u.email, u.account ?? '', u.role ?? '', u.created_at])];
      const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
      for (const row of rows) process.stdout.write(`${row.map((cell, i) => cell.padEnd(widths[i]!)).join('  ').trimEnd()}\n`);
    });
}
