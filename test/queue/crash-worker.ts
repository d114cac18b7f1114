// Child process for the queue contract's crash tests: claims sign_task jobs, prints
// `claimed <jobId> <attempt>` and then hangs (ignoring its abort signal) until the parent kills it
// with SIGKILL, like a worker that dies mid-task.
import { openQueueAt, type QueueLocation } from './queue-backends.ts';

const { location, leaseMs } = JSON.parse(process.argv[2] ?? '{}') as { location: QueueLocation; leaseMs: number };
const { queue } = await openQueueAt(location, { leaseMs, pollIntervalMs: 50 });
queue.start({
  concurrency: 1,
  handlers: {
    sign_task: async (payload, context) => {
      process.stdout.write(`claimed ${payload.taskId} ${context.attempt}\n`);
      await new Promise(() => undefined);
    },
  },
});
process.stdout.write('ready\n');
