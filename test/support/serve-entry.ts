// A TEST-ONLY `signet serve`: the production wiring (startService) with test signers chosen by
// SIGNET_TEST_SIGNER, run as a child process by test/support/server.ts so tests can SIGKILL it.
// Prints `SIGNET_URL <url>` once listening, `SIGNET_SETUP_URL <url>` while no console user exists,
// and on the first start of a data dir makes an API key for account `default` (as
// `signet keys create --account default` would) and prints `SIGNET_BOOTSTRAP_KEY <key>`.
// Like bin/signet, it enables Node's compile cache before loading the service, so the child's
// memory profile matches production (test/support/server.ts also passes bin/signet's V8 flags).
import module from 'node:module';
import type { Signer } from '../../src/services/signer.ts';

module.enableCompileCache?.();
const { loadConfig } = await import('../../src/config.ts');
const { startService } = await import('../../src/main/service.ts');
const { failingSigner, killingSigner, slowCopySigner, writingSigner } = await import('./slow-signer.ts');

const delay = Number(process.env.SIGNET_TEST_SIGN_MS ?? '1000');
const choice = process.env.SIGNET_TEST_SIGNER ?? 'production';
const signers: readonly Signer[] | undefined =
  choice === 'slow' ? [slowCopySigner('android', delay), slowCopySigner('ios', delay)]
  : choice === 'writing' ? [writingSigner('android', delay), writingSigner('ios', delay)]
  : choice === 'failing' ? [failingSigner('android')]
  : choice === 'killing' ? [killingSigner('android')]
  : choice === 'none' ? []
  : undefined;

const service = await startService(loadConfig(process.env), {
  ...(signers ? { signers } : {}),
  queueTuning: {
    ...(process.env.SIGNET_TEST_LEASE_MS ? { leaseMs: Number(process.env.SIGNET_TEST_LEASE_MS) } : {}),
    ...(process.env.SIGNET_TEST_POLL_MS ? { pollIntervalMs: Number(process.env.SIGNET_TEST_POLL_MS) } : {}),
  },
  onSetupLink: (url) => process.stdout.write(`SIGNET_SETUP_URL ${url}\n`),
  // SIGNET_TEST_NO_CONSOLE=1: the API without the console (bench/console.ts compares the two).
  ...(process.env.SIGNET_TEST_NO_CONSOLE ? { consoleDir: null } : {}),
});
if ((await service.db.repos.accounts.list()).length === 0) {
  const { ApiKeyService } = await import('../../src/services/api-keys.ts');
  process.stdout.write(`SIGNET_BOOTSTRAP_KEY ${(await new ApiKeyService(service.db.repos).create('default', 'test')).key}\n`);
}
const stop = () => {
  service.close().then(
    () => process.exit(0),
    (error: unknown) => {
      console.error(error);
      process.exit(1);
    },
  );
};
// Handlers first, then the URL: a parent that signals as soon as it reads the URL must find them.
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
process.stdout.write(`SIGNET_URL ${service.url}\n`);
