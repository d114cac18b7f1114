// POST /v1/apps/upload: one multipart file streamed straight into the blob store. The file is
// never buffered: the part stream goes to UploadService.receive, which hashes while writing and
// refuses anything past the size limit (deleting the partial blob). @fastify/multipart silently
// truncates a file at `limits.fileSize` instead of failing, so the limit handed to busboy is one
// byte above ours: the blob store's maxBytes trips first, and a truncated part is still checked.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { AppError, errorCodeOf } from '../../errors.ts';
import type { UploadService } from '../../services/uploads.ts';
import { principalOf } from '../plugins/auth.ts';
import { envelope, responses } from '../schemas/common.ts';
import { Upload } from '../schemas/resources.ts';
import { uploadView } from '../views.ts';
import type { InFlight } from '../in-flight.ts';

export interface UploadRouteDeps {
  uploads: UploadService;
  maxUploadBytes: number;
  inFlight: InFlight;
}

/**
 * The fewest bytes multipart framing can add around one file part (RFC 7578): the opening
 * delimiter "--B\r\n", the shortest Content-Disposition a part can carry
 * ('content-disposition:form-data;name=file;filename=x.apk', 51 bytes) and its "\r\n\r\n", then
 * the closing "\r\n--B--". A Content-Length above the limit plus this much cannot hold an
 * acceptable file, so it is refused before a byte of the body is read.
 */
function minimalFraming(contentType: string | undefined): number | null {
  const boundary = /boundary=(?:"([^"]+)"|([^;\s]+))/i.exec(contentType ?? '');
  const length = (boundary?.[1] ?? boundary?.[2])?.length;
  return length === undefined ? null : 4 + length + 51 + 4 + 6 + length;
}

/** Multipart parser failures (no boundary, truncated parts, bad headers) are the client's: 400. */
function asClientError(error: unknown): unknown {
  if (errorCodeOf(error) !== null || (error as { statusCode?: number }).statusCode !== undefined) return error;
  return new AppError('invalid_request', `Malformed multipart body: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
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
        response: responses(envelope(Upload), ['file_too_large', 'storage_quota_exceeded', 'unsupported_file_type', 'unsupported_media_type', 'invalid_package', 'service_unavailable']),
      },
    },
    async (request, reply) => {
      const principal = principalOf(request);
      if (!request.isMultipart()) throw new AppError('unsupported_media_type', 'Send the file as multipart/form-data with the field "file".');
      const framing = minimalFraming(request.headers['content-type']);
      if (framing === null) throw new AppError('invalid_request', 'The multipart Content-Type has no boundary.');
      const declared = request.headers['content-length'] === undefined ? null : Math.max(0, Number(request.headers['content-length']) - framing);
      // Refused before the body is read: too large for the limit, or for the account's quota.
      const maxBytes = await deps.uploads.admit(principal, declared !== null && Number.isFinite(declared) ? declared : null);
      const controller = deps.inFlight.begin();
      const onClose = () => {
        if (!request.raw.readableEnded) controller.abort(new AppError('invalid_request', 'The client closed the connection during the upload.'));
      };
      request.raw.once('close', onClose);
      try {
        // One part, the file: any other field is refused by name (strict input). A "file" part
        // without a filename is a text field to the parser, so it shows up in `fields`.
        const part = await request.file({ limits: { fileSize: maxBytes + 1, files: 1, fields: 1, parts: 2, fieldSize: 1024 } }).catch((error: unknown) => {
          throw asClientError(error);
        });
        if (!part) throw new AppError('invalid_request', 'The multipart field "file" is required: a file part with a filename such as "app.ipa".');
        const extra = Object.keys(part.fields).find((name) => name !== 'file');
        if (extra !== undefined) throw new AppError('invalid_request', `${extra.slice(0, 100)} is not a known field; send only the field "file".`, { details: { field: extra.slice(0, 100) } });
        if (part.type !== 'file' || part.fieldname !== 'file') throw new AppError('invalid_request', `${part.fieldname} is not a known field; send the package in the field "file".`, { details: { field: part.fieldname } });
        if (typeof part.filename !== 'string' || part.filename === '') throw new AppError('invalid_request', 'The "file" part has no filename; name it like "app.ipa" or "app.apk".');
        const upload = await deps.uploads
          .receive(principal, {
            fileName: part.filename,
            stream: part.file,
            signal: controller.signal,
            truncated: () => part.file.truncated,
            maxBytes,
          })
          .catch((error: unknown) => {
            throw asClientError(error);
          });
        return reply.send({ code: 200, data: uploadView(upload) });
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
