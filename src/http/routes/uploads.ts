// POST /v1/apps/upload: one multipart file streamed straight into the blob store. The file is
// never buffered: the part stream goes to UploadService.receive, which hashes while writing and
// refuses anything past the size limit (deleting the partial blob). @fastify/multipart silently
// truncates a file at `limits.fileSize` instead of failing, so the limit handed to busboy is one
// byte above ours: the blob store's maxBytes trips first, and a truncated part is still checked.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { AppError } from '../../errors.ts';
import type { UploadService } from '../../services/uploads.ts';
import { principalOf } from '../plugins/auth.ts';
import { envelope, responses } from '../schemas/common.ts';
import { Upload } from '../schemas/resources.ts';
import type { InFlight } from '../in-flight.ts';

export interface UploadRouteDeps {
  uploads: UploadService;
  maxUploadBytes: number;
  inFlight: InFlight;
}

/** Reads what is left of the request body so the error response reaches a client still sending. */
async function discardRest(request: FastifyRequest, limitBytes: number): Promise<void> {
  const raw = request.raw;
  if (raw.readableEnded || raw.destroyed) return;
  raw.unpipe();
  await new Promise<void>((resolve) => {
    let seen = 0;
    const done = () => {
      raw.off('data', onData);
      resolve();
    };
    const onData = (chunk: Buffer) => {
      seen += chunk.length;
      // A client that keeps streaming far past the limit is cut off instead of drained forever.
      if (seen > limitBytes) {
        raw.socket?.destroy();
        done();
      }
    };
    raw.on('data', onData);
    raw.once('end', done);
    raw.once('close', done);
    raw.once('error', done);
    raw.resume();
  });
}

export function uploadRoutes(app: FastifyInstance, deps: UploadRouteDeps): void {
  app.post(
    '/v1/apps/upload',
    {
      config: { scope: 'upload' },
      schema: {
        tags: ['Apps'],
        summary: 'Upload an .ipa or .apk',
        description:
          'Multipart form with one file field `file`. The file is streamed to storage while its SHA-256 is computed; ' +
          `at most ${deps.maxUploadBytes} bytes. Returns a \`file_key\` for POST /tasks/create, valid until \`expires_at\`.`,
        consumes: ['multipart/form-data'],
        response: responses(envelope(Upload), ['file_too_large', 'unsupported_file_type', 'unsupported_media_type', 'invalid_package', 'service_unavailable']),
      },
    },
    async (request, reply) => {
      const principal = principalOf(request);
      if (!request.isMultipart()) throw new AppError('unsupported_media_type', 'Send the file as multipart/form-data with the field "file".');
      const controller = deps.inFlight.begin();
      const onClose = () => {
        if (!request.raw.readableEnded) controller.abort(new AppError('invalid_request', 'The client closed the connection during the upload.'));
      };
      request.raw.once('close', onClose);
      try {
        const part = await request.file({ limits: { fileSize: deps.maxUploadBytes + 1, files: 1, fields: 20, parts: 30, fieldSize: 64 * 1024 } });
        if (!part) throw new AppError('invalid_request', 'The multipart field "file" is required.');
        if (part.fieldname !== 'file') throw new AppError('invalid_request', `The file must be sent in the field "file", not "${part.fieldname}".`);
        const upload = await deps.uploads.receive(principal, {
          fileName: part.filename,
          stream: part.file,
          signal: controller.signal,
          truncated: () => part.file.truncated,
        });
        return reply.send({ code: 200, data: upload });
      } catch (error) {
        reply.header('connection', 'close');
        // Aborted by a shutdown or a vanished client: answer (if anyone listens) without draining.
        if (controller.signal.aborted && controller.signal.reason instanceof AppError) throw controller.signal.reason;
        await discardRest(request, 64 * 1024 * 1024);
        throw error;
      } finally {
        request.raw.off('close', onClose);
        deps.inFlight.end(controller);
      }
    },
  );
}
