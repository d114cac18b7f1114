// Small multipart forms (certificate and developer-account uploads) read whole into memory: every
// file capped at `maxFileBytes`, every text field at `maxFieldBytes`, any unknown field refused.
// Packages are not read this way: they stream into the blob store (routes/uploads.ts).
import type { FastifyRequest } from 'fastify';
import { AppError, errorCodeOf } from '../errors.ts';

export interface MultipartFormSpec<F extends string, T extends string> {
  /** What the form sends, for the "not multipart" error ("the certificate"). */
  what: string;
  fileFields: readonly F[];
  textFields: readonly T[];
  maxFileBytes: number;
  maxFieldBytes: number;
}

export interface MultipartForm<F extends string, T extends string> {
  files: Partial<Record<F, { name: string; data: Buffer }>>;
  text: Partial<Record<T, string>>;
}

export async function readMultipartForm<F extends string, T extends string>(request: FastifyRequest, spec: MultipartFormSpec<F, T>): Promise<MultipartForm<F, T>> {
  if (!request.isMultipart()) throw new AppError('unsupported_media_type', `Send ${spec.what} as multipart/form-data.`);
  const form: MultipartForm<F, T> = { files: {}, text: {} };
  const limits = { fileSize: spec.maxFileBytes, files: spec.fileFields.length, fields: 10, fieldSize: spec.maxFieldBytes };
  try {
    await readParts(request, spec, form, limits);
  } catch (error) {
    // The parser's own failures (no boundary, truncated parts, bad part headers) are the client's.
    if (errorCodeOf(error) !== null || (error as { statusCode?: number }).statusCode !== undefined) throw error;
    throw new AppError('invalid_request', `Malformed multipart body: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  }
  return form;
}

async function readParts<F extends string, T extends string>(request: FastifyRequest, spec: MultipartFormSpec<F, T>, form: MultipartForm<F, T>, limits: Record<string, number>): Promise<void> {
  for await (const part of request.parts({ limits })) {
    if (part.type === 'file') {
      const field = spec.fileFields.find((f) => f === part.fieldname);
      // Drained before refusing, so the parser can move on to the next part.
      const data = await part.toBuffer();
      if (!field) throw new AppError('invalid_request', `Unknown file field "${part.fieldname}".`);
      if (part.file.truncated) throw new AppError('invalid_request', `The ${field} file is larger than ${spec.maxFileBytes} bytes.`);
      form.files[field] = { name: part.filename, data };
    } else {
      const field = spec.textFields.find((f) => f === part.fieldname);
      if (!field) throw new AppError('invalid_request', `Unknown field "${part.fieldname}".`);
      if (part.valueTruncated) throw new AppError('invalid_request', `The field ${field} is too long.`);
      form.text[field] = String(part.value);
    }
  }
}
