// Task routes: create (with Idempotency-Key), read, list, cancel, and the signed artifact.
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { notesOfBody } from '../../services/release-notes.ts';
import type { TaskService } from '../../services/tasks.ts';
import { errorCodeOf } from '../../errors.ts';
import type { InFlight } from '../in-flight.ts';
import { principalOf } from '../plugins/auth.ts';
import { envelope, responses } from '../schemas/common.ts';
import { sendFile } from '../send-file.ts';
import type { CertType } from '../../services/signer.ts';
import type { TaskStatus as TaskStatusValue } from '../../db/schema.ts';
import { CreatedTask, CreateTaskBody, IdParam, Task, TaskList, TaskStatus } from '../schemas/resources.ts';
import { taskRecordView, taskStatusEvent } from '../views.ts';

const TaskId = IdParam('task_id', '`tsk_…`');

/** Comment lines keep proxies and the server's idle-connection timeout from closing a quiet stream. */
const HEARTBEAT_MS = 15_000;

/** `baseUrl`: the public base artifact links are built on. */
export function taskRoutes(app: FastifyInstance, tasks: TaskService, baseUrl: () => string, inFlight: InFlight): void {
  app.post(
    '/v1/tasks/create',
    {
      config: { scope: 'tasks:write' },
      schema: {
        tags: ['Tasks'],
        summary: 'Create a signing task',
        description:
          'Signs the uploaded package behind `file_key`. Send JSON (`application/json`, or no content type). ' +
          'With an `Idempotency-Key` header, repeating the same body returns the same task; a `file_key` of another upload of the same file (same SHA-256) counts as the same, ' +
          'so a retried pipeline step that uploads again gets its first task. A different body with the same key is refused (409).',
        headers: Type.Object({ 'idempotency-key': Type.Optional(Type.String({ minLength: 1, maxLength: 255 })) }),
        body: CreateTaskBody,
        response: responses(envelope(CreatedTask), [
          'file_key_not_found',
          'file_key_expired',
          'cert_type_unsupported',
          'certificate_required',
          'certificate_not_found',
          'profile_not_found',
          'bundle_id_mismatch',
          'idempotency_conflict',
          'task_quota_exceeded',
          'notes_too_large',
          'unsupported_media_type',
        ]),
      },
    },
    async (request) => {
      const body = request.body as { file_key: string; cert_type: CertType; certificate_id?: string; callback_url?: string; profiles?: Record<string, string>; notes?: string; release_notes?: string; changelog?: string };
      const key = request.headers['idempotency-key'];
      const notes = notesOfBody(body);
      const input = {
        fileKey: body.file_key,
        certType: body.cert_type,
        ...(body.certificate_id === undefined ? {} : { certificateId: body.certificate_id }),
        ...(body.callback_url === undefined ? {} : { callbackUrl: body.callback_url }),
        ...(body.profiles === undefined ? {} : { profiles: body.profiles }),
        ...(notes === undefined ? {} : { notes }),
      };
      const created = await tasks.create(principalOf(request), input, typeof key === 'string' ? key : null);
      return { code: 200, data: { task_id: created.id, status: created.status } };
    },
  );

  app.get(
    '/v1/tasks',
    {
      schema: {
        tags: ['Tasks'],
        summary: 'List tasks, newest first',
        querystring: Type.Object({
          status: Type.Optional(TaskStatus),
          limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20 })),
          cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: '`next_cursor` of the previous page.' })),
        }, { additionalProperties: false }),
        response: responses(envelope(TaskList), []),
      },
    },
    async (request) => {
      const query = request.query as { status?: TaskStatusValue; limit?: number; cursor?: string };
      const page = await tasks.list(principalOf(request), { status: query.status ?? null, limit: query.limit ?? 20, cursor: query.cursor ?? null });
      return { code: 200, data: { items: page.items.map((record) => taskRecordView(record, baseUrl())), next_cursor: page.nextCursor } };
    },
  );

  app.get(
    '/v1/tasks/:task_id',
    { schema: { tags: ['Tasks'], summary: 'Get a task', params: TaskId, response: responses(envelope(Task), ['task_not_found']) } },
    async (request) => {
      const { task_id } = request.params as { task_id: string };
      return { code: 200, data: taskRecordView(await tasks.get(principalOf(request), task_id), baseUrl()) };
    },
  );

  app.post(
    '/v1/tasks/:task_id/cancel',
    {
      config: { scope: 'tasks:write' },
      schema: {
        tags: ['Tasks'],
        summary: 'Cancel a task',
        description: 'A pending task is canceled at once; a processing one is aborted. Canceling a canceled task is a no-op.',
        params: TaskId,
        response: responses(envelope(Task), ['task_not_found', 'task_not_cancelable']),
      },
    },
    async (request) => {
      const { task_id } = request.params as { task_id: string };
      return { code: 200, data: taskRecordView(await tasks.cancel(principalOf(request), task_id), baseUrl()) };
    },
  );

  app.get(
    '/v1/tasks/:task_id/events',
    {
      schema: {
        tags: ['Tasks'],
        summary: 'Follow a task (server-sent events)',
        description:
          'A `text/event-stream` (EventSource): a `status` event now and at every change of status or attempt ' +
          '(`{task_id, status, attempts, max_attempts, at}`), then one `task` event holding the whole task (as GET /tasks/{task_id}, ' +
          'with `links` once it succeeded), after which the stream ends. Comment lines are sent every 15 s while nothing happens. ' +
          'An unknown task answers 404 before the stream starts.',
        params: TaskId,
        produces: ['text/event-stream'],
        response: responses(Type.Unsafe<unknown>({ type: 'string', description: 'Server-sent events: `event: status` …, then `event: task`.' }), ['task_not_found']),
      },
    },
    async (request, reply) => {
      const { task_id } = request.params as { task_id: string };
      const principal = principalOf(request);
      await tasks.get(principal, task_id); // 404 as JSON, before the stream starts
      const controller = inFlight.begin();
      const stop = () => controller.abort();
      request.raw.once('close', stop);
      reply.hijack();
      const out = reply.raw;
      out.writeHead(200, {
        ...(reply.getHeaders() as Record<string, string>),
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-store',
        'x-content-type-options': 'nosniff',
        // Tells nginx-style proxies not to buffer the stream.
        'x-accel-buffering': 'no',
      });
      out.write('retry: 3000\n\n');
      const heartbeat = setInterval(() => out.write(': keep-alive\n\n'), HEARTBEAT_MS);
      let id = 0;
      try {
        for await (const step of tasks.follow(principal, task_id, controller.signal)) {
          const { event, data } = step.event === 'status' ? { event: 'status', data: taskStatusEvent(step.task) } : { event: 'task', data: taskRecordView(step.record, baseUrl()) };
          id += 1;
          out.write(`id: ${id}\nevent: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
        }
      } catch (error) {
        request.log.warn({ err: error }, 'task events ended by an error');
        out.write(`event: error\ndata: ${JSON.stringify({ error: errorCodeOf(error) ?? 'service_unavailable' })}\n\n`);
      } finally {
        clearInterval(heartbeat);
        request.raw.off('close', stop);
        inFlight.end(controller);
        out.end();
      }
    },
  );

  app.get(
    '/v1/tasks/:task_id/artifact',
    {
      schema: {
        tags: ['Tasks'],
        summary: 'Download the signed package',
        description: 'Supports `Range: bytes=…` (one range) for resumed downloads; answers 206 with Content-Range.',
        params: TaskId,
        headers: Type.Object({ range: Type.Optional(Type.String()) }),
        produces: ['application/octet-stream'],
        response: responses(
          Type.Unsafe<unknown>({ type: 'string', format: 'binary', description: 'The signed .ipa/.apk (206 for a range).' }),
          ['task_not_found', 'artifact_not_ready', 'range_not_satisfiable'],
        ),
      },
    },
    async (request, reply) => {
      const { task_id } = request.params as { task_id: string };
      return sendFile(request, reply, await tasks.artifact(principalOf(request), task_id));
    },
  );
}
