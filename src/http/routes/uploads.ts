// POST /v1/apps/upload: one multipart file streamed straight into the blob store. The file is
// never buffered: the part stream goes to UploadService.receive, which hashes while writing and
// refuses anything past the size limit (deleting the partial blob). @fastify/multipart silently
// truncates a file at `limits.fileSize` instead of failing, so the limit handed to busboy is one
// byte above ours: the blob store's maxBytes trips first, and a truncated part is still checked.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { AppError, errorCodeOf } from '../../errors.ts';
import { isNotesField, normalizeNotes, NOTES_MAX_BYTES } from '../../services/release-notes.ts';
import type { UploadService } from '../../services/uploads.ts';
import type { UploadRow } from '../../db/schema.ts';
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

/** Room for what a body may carry besides the minimal framing and the file (see the route). */
const OTHER_PARTS_ALLOWANCE = 64 * 1024;

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
          'Multipart form with one file field `file` and, optionally, release notes in the text field `notes` (plain text or Markdown, at most 10 KB; ' +
          '`release_notes` and `changelog` are accepted as other names), before or after the file. The file is streamed to storage while its SHA-256 is computed; ' +
          `at most ${deps.maxUploadBytes} bytes. Returns a \`file_key\` for POST /tasks/create, valid until \`expires_at\`.`,
        consumes: ['multipart/form-data'],
        response: responses(envelope(Upload), ['file_too_large', 'storage_quota_exceeded', 'unsupported_file_type', 'unsupported_media_type', 'invalid_package', 'notes_too_large', 'service_unavailable']),
      },
    },
    async (request, reply) => {
      const principal = principalOf(request);
      if (!request.isMultipart()) throw new AppError('unsupported_media_type', 'Send the file as multipart/form-data with the field "file".');
      const framing = minimalFraming(request.headers['content-type']);
      if (framing === null) throw new AppError('invalid_request', 'The multipart Content-Type has no boundary.');
      // What the rest of the body may hold besides the file (its part's other headers, such as a
      // Content-Type, and a release-notes field): a file of exactly the limit sent by an ordinary
      // client is not refused on its Content-Length. The stream's own limit stays exact.
      const declared = request.headers['content-length'] === undefined ? null : Math.max(0, Number(request.headers['content-length']) - framing - OTHER_PARTS_ALLOWANCE);
      // Refused before the body is read: too large for the limit, or for the account's quota.
      const maxBytes = await deps.uploads.admit(principal, declared !== null && Number.isFinite(declared) ? declared : null);
      const controller = deps.inFlight.begin();
      const onClose = () => {
        if (!request.raw.readableEnded) controller.abort(new AppError('invalid_request', 'The client closed the connection during the upload.'));
      };
      request.raw.once('close', onClose);
      try {
        // The file, and at most one release-notes field (before or after it); any other field is
        // refused by name (strict input). A "file" part without a filename is a text field to the
        // parser. Parts arrive in order and the file is consumed before the next part is read.
        let upload: UploadRow | null = null;
        let notesField: string | null = null;
        let notes: string | null = null;
        try {
          const parts = request.parts({ limits: { fileSize: maxBytes + 1, files: 1, fields: 2, parts: 3, fieldSize: NOTES_MAX_BYTES * 4 + 1 } });
          for await (const part of parts) {
            if (part.type === 'field') {
              if (part.fieldname === 'file') throw new AppError('invalid_request', 'The "file" part has no filename; name it like "app.ipa" or "app.apk".');
              if (!isNotesField(part.fieldname)) throw new AppError('invalid_request', `${part.fieldname.slice(0, 100)} is not a known field; send the field "file" and optionally "notes".`, { details: { field: part.fieldname.slice(0, 100) } });
              if (notesField !== null) throw new AppError('invalid_request', `Send release notes once: ${notesField} and ${part.fieldname} were both given.`, { details: { field: part.fieldname } });
              notesField = part.fieldname;
              if (part.valueTruncated) throw new AppError('notes_too_large', `${part.fieldname} is longer than ${NOTES_MAX_BYTES} bytes.`, { details: { field: part.fieldname, max_bytes: NOTES_MAX_BYTES } });
              notes = normalizeNotes(String(part.value), part.fieldname);
              if (upload !== null) upload = await deps.uploads.setNotes(principal, upload.id, notes);
              continue;
            }
            if (part.fieldname !== 'file') {
              part.file.resume();
              throw new AppError('invalid_request', `${part.fieldname.slice(0, 100)} is not a known field; send the package in the field "file".`, { details: { field: part.fieldname.slice(0, 100) } });
            }
            if (typeof part.filename !== 'string' || part.filename === '') throw new AppError('invalid_request', 'The "file" part has no filename; name it like "app.ipa" or "app.apk".');
            const file = part.file;
            upload = await deps.uploads.receive(principal, { fileName: part.filename, stream: file, signal: controller.signal, truncated: () => file.truncated, maxBytes, notes });
          }
        } catch (error) {
          // A field after the file was refused: the stored upload goes with the request.
          if (upload !== null) await deps.uploads.discard(principal, upload.id);
          throw asClientError(error);
        }
        if (!upload) throw new AppError('invalid_request', 'The multipart field "file" is required: a file part with a filename such as "app.ipa".');
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
