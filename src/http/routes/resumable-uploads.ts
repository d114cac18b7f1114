// Resumable uploads: the tus 1.0 protocol (core, creation, termination, expiration) at
// /v1/uploads, served by @tus/server. An interrupted upload continues from the offset the server
// has (HEAD, then PATCH the rest) instead of starting over. Uploads belong to the account that
// created them (the id starts with the account id; anyone else gets 404). A declared
// Upload-Length above the upload limit or the account's free quota is refused at creation (413).
// The PATCH that completes an upload answers like POST /apps/upload: the package is inspected and
// recorded, and the body is `{code: 200, data: {file_key, …}}` (or the same error envelope). On
// disk the finished file is adopted by the blob store (renamed, not copied); what is left of the
// tus copy is then removed; uploads left unfinished expire and are removed by the sweep.
// Metadata: `filename` (required, .ipa or .apk) and optionally `notes` (release notes).
import { randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Server, ServerOptions } from '@tus/server';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { AppError, ERROR_CATALOGUE, errorCodeOf, type ErrorCode } from '../../errors.ts';
import type { Principal } from '../../services/principal.ts';
import { normalizeNotes } from '../../services/release-notes.ts';
import type { UploadService } from '../../services/uploads.ts';
import { uploadView } from '../views.ts';
import type { ResumableStore } from '../../storage/resumable-store.ts';
import { ERROR_STATUS } from '../error-status.ts';
import type { InFlight } from '../in-flight.ts';
import { principalOf } from '../plugins/auth.ts';
import { envelope, responses } from '../schemas/common.ts';
import { Upload } from '../schemas/resources.ts';

export interface ResumableUploadDeps {
  uploads: UploadService;
  /** Opens the store on first use (with @tus/server, ~20 MB of code a multipart-only deployment never loads). */
  store: () => Promise<ResumableStore>;
  maxUploadBytes: number;
  inFlight: InFlight;
  /** How often unfinished, expired uploads are removed (default hourly). */
  sweepIntervalMs?: number;
  log: (error: unknown, message: string) => void;
}

type TusRequest = Parameters<NonNullable<ServerOptions['onUploadFinish']>>[0];

/** Our error envelope in the shape @tus/server sends errors. */
function tusError(code: ErrorCode, message?: string, status = ERROR_STATUS[code]): { status_code: number; body: string } {
  return { status_code: status, body: JSON.stringify({ code: status, error: code, message: message ?? ERROR_CATALOGUE[code] }) };
}

/** The catalogue code for one of @tus/server's own refusals, by its status. */
function codeForTusStatus(status: number): ErrorCode {
  if (status === 413) return 'file_too_large';
  if (status === 404 || status === 410) return 'not_found';
  if (status === 415) return 'unsupported_media_type';
  if (status === 503) return 'service_unavailable';
  return 'invalid_request';
}

export function resumableUploadRoutes(app: FastifyInstance, deps: ResumableUploadDeps): void {
  // The request each tus request came from, to find its principal (set before tus sees it).
  const principals = new WeakMap<IncomingMessage, Principal>();
  const principalOfTus = (req: TusRequest): Principal => {
    const node = (req as unknown as { runtime?: { node?: { req?: IncomingMessage } } }).runtime?.node?.req;
    const principal = node ? principals.get(node) : undefined;
    if (!principal) throw tusError('unauthorized');
    return principal;
  };
  const ownerPrefix = (principal: Principal) => `${principal.accountId}.`;

  const createServer = async (): Promise<Server> => {
    const store = await deps.store();
    const { Server } = await import('@tus/server');
    return new Server({
      path: '/v1/uploads',
      datastore: store.datastore,
      maxSize: deps.maxUploadBytes,
      // Location headers relative to the host the client used (behind a proxy too).
      respectForwardedHeaders: false,
      namingFunction: (req) => `${ownerPrefix(principalOfTus(req))}${randomBytes(18).toString('base64url')}`,
      onIncomingRequest: async (req, id) => {
        if (!id.startsWith(ownerPrefix(principalOfTus(req)))) throw tusError('not_found', 'No such upload.');
      },
      onUploadCreate: async (req, upload) => {
        const principal = principalOfTus(req);
        const filename = upload.metadata?.filename;
        if (!filename) throw tusError('invalid_request', 'Upload-Metadata must name the file: filename <base64 of "app.ipa">.');
        if (!/\.(ipa|apk)$/i.test(filename)) throw tusError('unsupported_file_type', `Only .ipa and .apk files are accepted, got "${filename.slice(0, 200)}".`);
        if (upload.size === undefined) throw tusError('invalid_request', 'Declare the size with Upload-Length (Upload-Defer-Length is not supported).');
        try {
          if (upload.metadata?.notes) normalizeNotes(upload.metadata.notes);
          await deps.uploads.admit(principal, upload.size);
        } catch (error) {
          const code = errorCodeOf(error);
          if (code) throw tusError(code, (error as Error).message);
          throw error;
        }
        return {};
      },
      onUploadFinish: async (req, upload) => {
        const principal = principalOfTus(req);
        const controller = deps.inFlight.begin();
        try {
          const fileName = upload.metadata?.filename ?? 'upload';
          const notes = upload.metadata?.notes ? normalizeNotes(upload.metadata.notes) : null;
          // On disk the finished file becomes the blob (a rename, no second copy); from S3 it is streamed.
          const file = store.finishedFile(upload.id, upload.size ?? upload.offset);
          const view = file
            ? await deps.uploads.receiveFile(principal, { fileName, path: file.path, sha256: file.sha256, signal: controller.signal, notes })
            : await deps.uploads.receive(principal, { fileName, stream: await store.read(upload.id), signal: controller.signal, notes });
          return { status_code: 200, headers: { 'content-type': 'application/json; charset=utf-8' }, body: JSON.stringify({ code: 200, data: uploadView(view) }) };
        } catch (error) {
          const code = errorCodeOf(error);
          if (!code) deps.log(error, 'a finished resumable upload could not be received');
          throw code ? tusError(code, (error as Error).message) : tusError('service_unavailable', 'The upload could not be stored; upload it again.', 503);
        } finally {
          deps.inFlight.end(controller);
          // Received (now a file_key) or refused: either way the tus copy has served its purpose.
          await store.forget(upload.id).catch((error: unknown) => deps.log(error, 'removing a finished resumable upload failed'));
        }
      },
      onResponseError: (_req, error) => {
        if ('status_code' in error) {
          // Ours already carry the envelope; @tus/server's own get one.
          if (error.body.startsWith('{')) return error;
          return tusError(codeForTusStatus(error.status_code), error.body.trim() || undefined, error.status_code);
        }
        deps.log(error, 'resumable upload failed');
        return tusError('service_unavailable', 'The upload could not be stored; try again.', 503);
      },
    });
  };
  let tus: Promise<Server> | null = null;
  const server = (): Promise<Server> =>
    (tus ??= createServer().catch((error: unknown) => {
      tus = null;
      throw error;
    }));

  // The first sweep opens the store too, so uploads a previous run abandoned are removed.
  const timer = setInterval(() => {
    server()
      .then((s) => s.cleanUpExpiredUploads())
      .catch((error: unknown) => deps.log(error, 'removing expired resumable uploads failed'));
  }, deps.sweepIntervalMs ?? 3_600_000);
  timer.unref();
  app.addHook('onClose', async () => clearInterval(timer));

  app.register(async (scope) => {
    // PATCH bodies go to @tus/server untouched: no fastify parsing, no body limit of its own.
    scope.addContentTypeParser('application/offset+octet-stream', (_request, _payload, done) => done(null));
    const handle = async (request: FastifyRequest, reply: FastifyReply) => {
      // tus 1.0 (Tus-Resumable): every request but OPTIONS names the version, else 412. Refused
      // here, before @tus/server, so the answer carries the catalogue envelope like every other.
      if (request.headers['tus-resumable'] !== '1.0.0') {
        reply.header('tus-version', '1.0.0');
        throw new AppError('tus_version_unsupported');
      }
      principals.set(request.raw, principalOf(request));
      const tusServer = await server();
      reply.hijack();
      await tusServer.handle(request.raw, reply.raw);
    };
    const headers = Type.Object({ 'tus-resumable': Type.Optional(Type.Literal('1.0.0')) });
    scope.post(
      '/v1/uploads',
      {
        config: { scope: 'upload' },
        schema: {
          tags: ['Apps'],
          summary: 'Start a resumable upload (tus 1.0)',
          description:
            'The tus 1.0 protocol (https://tus.io/protocols/resumable-upload): creation, termination and expiration. Send `Tus-Resumable: 1.0.0`, ' +
            '`Upload-Length` (at most the upload limit, else 413 `file_too_large`) and `Upload-Metadata` with `filename` (.ipa or .apk) and optionally `notes`. ' +
            'Answers 201 with `Location`; then PATCH the bytes (`Content-Type: application/offset+octet-stream`, `Upload-Offset`), resuming after a HEAD. ' +
            'The PATCH that completes the upload answers like POST /apps/upload: `{code: 200, data: {file_key, …}}`. Unfinished uploads expire (`Upload-Expires`).',
          headers,
          response: { 201: Type.Null({ description: 'Created; `Location` is the upload URL.' }), ...responses(envelope(Upload), ['file_too_large', 'storage_quota_exceeded', 'unsupported_file_type', 'notes_too_large', 'tus_version_unsupported']) },
        },
      },
      handle,
    );
    for (const method of ['HEAD', 'PATCH', 'DELETE'] as const) {
      scope.route({
        method,
        url: '/v1/uploads/:upload_id',
        config: { scope: 'upload' },
        schema: {
          tags: ['Apps'],
          summary: { HEAD: 'Offset of a resumable upload', PATCH: 'Send bytes of a resumable upload', DELETE: 'Cancel a resumable upload' }[method],
          params: Type.Object({ upload_id: Type.String({ minLength: 1, maxLength: 200 }) }),
          ...(method === 'PATCH' ? { response: responses(envelope(Upload), ['not_found', 'file_too_large', 'unsupported_file_type', 'invalid_package', 'storage_quota_exceeded', 'tus_version_unsupported']) } : {}),
        },
        handler: handle,
      });
    }
  });
}
