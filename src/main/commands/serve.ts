// `signet serve`: the HTTP API and the embedded signing workers in one process (`npm start`);
// SIGNET_WORKER_CONCURRENCY=0 runs the API alone (then run `signet worker` elsewhere).
import type { Command } from 'commander';
import { loadConfig, publicBaseUrl } from '../../config.ts';
import { reachabilityNotice, reachableUrls } from '../reachable-addresses.ts';
import { startService } from '../service.ts';

export function register(program: Command): void {
  program
    .command('serve')
    .description('Run the API server and signing workers (configuration from SIGNET_* environment variables)')
    .action(async () => {
      const config = loadConfig(process.env);
      const service = await startService(config);
      service.app.log.info({ url: service.url, data_dir: config.dataDir, storage: config.storage, database: config.databaseUrl ? 'postgres' : 'sqlite' }, 'signet listening');
      // For the person at the terminal (stderr): the JSON log on stdout is for machines.
      const listener = { host: config.host, port: Number(new URL(service.url).port || (config.tls ? 443 : 80)), tls: config.tls !== null };
      process.stderr.write(reachabilityNotice(listener, publicBaseUrl({ ...config, port: listener.port }), reachableUrls(listener)));
      let signals = 0;
      const stop = (signal: NodeJS.Signals) => {
        signals += 1;
        if (signals > 1) {
          service.app.log.warn({ signal }, 'second signal: exiting now');
          process.exit(1);
        }
        service.app.log.info({ signal }, 'shutting down: aborting uploads, handing running tasks back to the queue');
        service.close().then(
          () => process.exit(0),
          (error: unknown) => {
            service.app.log.error({ err: error }, 'shutdown failed');
            process.exit(1);
          },
        );
      };
      process.on('SIGINT', stop);
      process.on('SIGTERM', stop);
    });
}
