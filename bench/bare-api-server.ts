// The baseline for bench/api.ts: a bare fastify with the two routes the bench calls, answering
// from memory — no auth, no database, no validation, no hooks. What any fastify route costs on
// this machine. Prints `BARE_URL <url>` once listening.
import Fastify from 'fastify';

const task = {
  task_id: 'tsk_0123456789abcdefghijklmn',
  status: 'pending',
  platform: 'android',
  cert_type: 'enterprise',
  file_key: 'tmp_0123456789abcdefghijklmnopqrstuv',
  file_name: 'bench.apk',
  certificate_id: 'crt_0123456789abcdefghijklmn',
  callback_url: null,
  app_id: 'app_0123456789abcdefghijklmn',
  app: { bundle_id: 'com.example.bench', name: null, version: '1.0', build: '1' },
  attempts: 0,
  max_attempts: 3,
  error: null,
  artifact: null,
  verification: null,
  webhook_deliveries: [],
  created_at: '2026-01-01T00:00:00.000Z',
  updated_at: '2026-01-01T00:00:00.000Z',
  started_at: null,
  finished_at: null,
};

const app = Fastify({ logger: false });
app.get('/v1/tasks/:task_id', async () => ({ code: 200, data: task }));
let created = 0;
app.post('/v1/tasks/create', async (request) => {
  const body = request.body as { file_key?: string };
  created += 1;
  return { code: 200, data: { task_id: `tsk_${created}_${body.file_key ?? ''}`.slice(0, 30), status: 'pending' } };
});
await app.listen({ port: 0, host: '127.0.0.1' });
const address = app.server.address();
process.stdout.write(`BARE_URL http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}\n`);
