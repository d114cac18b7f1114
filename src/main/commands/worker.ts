// `signet worker`: only the job runner (signing tasks, webhook deliveries, upload sweeps,
// per-device builds), no HTTP listener. Run it beside an API-only `signet serve`
// (SIGNET_WORKER_CONCURRENCY=0) on the same PostgreSQL database and S3 store to scale signing out.
import type { Command } from 'commander';
import { loadConfig } from '../../config.ts';
import { startWorkerService } from '../service.ts';

export function register(program: Command): void {
  program
    .command('worker')
    .description('Run only the signing worker: takes jobs from the queue, serves no HTTP (configuration from SIGNET_* environment variables)')
    .action(async () => {
      const config = loadConfig(process.env);
      const service = await startWorkerService(config);
      let signals = 0;
      const stop = () => {
        signals += 1;
        if (signals > 1) process.exit(1);
        service.close().then(
          () => process.exit(0),
          (error: unknown) => {
            process.stderr.write(`shutdown failed: ${error instanceof Error ? error.message : String(error)}\n`);
            process.exit(1);
          },
        );
      };
      process.on('SIGINT', stop);
      process.on('SIGTERM', stop);
      // Announced only once the handlers are in place: a supervisor (or the test) that signals on
      // this line must not meet the default handler, which exits by the signal instead of with 0.
      process.stderr.write(`signet worker: running ${config.workerConcurrency} signing task(s) at once; stop with Ctrl-C\n`);
    });
}
