// Task routes: create (with Idempotency-Key), read, list, cancel, and the signed artifact.
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { CreateTaskInput, TaskService } from '../../services/tasks.ts';
import { principalOf } from '../plugins/auth.ts';
import { envelope, responses } from '../schemas/common.ts';
import { sendFile } from '../send-file.ts';
import { CreatedTask, CreateTaskBody, IdParam, Task, TaskList, TaskStatus } from '../schemas/resources.ts';

const TaskId = IdParam('task_id', '`tsk_…`');

export function taskRoutes(app: FastifyInstance, tasks: TaskService): void {
  app.post(
    '/v1/tasks/create',
    {
      config: { scope: 'tasks:write' },
      schema: {
        tags: ['Tasks'],
        summary: 'Create a signing task',
        description:
          'Signs the uploaded package behind `file_key`. Send JSON (`application/json`, or no content type). ' +
          'With an `Idempotency-Key` header, repeating the same body returns the same task; a different body with the same key is refused.',
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
      const body = request.body as CreateTaskInput;
      const key = request.headers['idempotency-key'];
      const created = await tasks.create(principalOf(request), body, typeof key === 'string' ? key : null);
      return { code: 200, data: created };
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
      const query = request.query as { status?: string; limit?: number; cursor?: string };
      const page = await tasks.list(principalOf(request), { status: query.status ?? null, limit: query.limit ?? 20, cursor: query.cursor ?? null });
      return { code: 200, data: page };
    },
  );

  app.get(
    '/v1/tasks/:task_id',
    { schema: { tags: ['Tasks'], summary: 'Get a task', params: TaskId, response: responses(envelope(Task), ['task_not_found']) } },
    async (request) => {
      const { task_id } = request.params as { task_id: string };
      return { code: 200, data: await tasks.get(principalOf(request), task_id) };
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
      return { code: 200, data: await tasks.cancel(principalOf(request), task_id) };
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
