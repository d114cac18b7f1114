// `signet webhooks secret --account NAME [--rotate]`: prints the secret that signs the account's
// webhook bodies (Signet-Signature), so receivers can verify them.
import type { Command } from 'commander';
import { loadConfig, publicBaseUrl } from '../../config.ts';
import { openDatabase } from '../../db/database.ts';
import { taskView } from '../../http/views.ts';
import { WebhookService } from '../../services/webhooks.ts';

export function register(program: Command): void {
  const webhooks = program.command('webhooks').description('Webhook settings');
  webhooks
    .command('secret')
    .description("Print the account's webhook signing secret (whsec_…); --rotate replaces it first")
    .requiredOption('--account <name>', 'account name')
    .option('--rotate', 'replace the secret; deliveries from then on are signed with the new one')
    .action(async (options: { account: string; rotate?: boolean }) => {
      const config = loadConfig(process.env);
      const db = await openDatabase(config);
      try {
        const secret = await new WebhookService({ db, taskBody: (task, deliveries) => taskView(task, publicBaseUrl(config), deliveries) }).secret(options.account, { rotate: options.rotate ?? false });
        process.stdout.write(`${secret}\n`);
      } finally {
        await db.close();
      }
    });
}
