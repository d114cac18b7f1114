// Sends a stored file with Range support (RFC 9110 §14): the authenticated artifact download and
// the public install-link download share it.
import { Readable } from 'node:stream';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../errors.ts';
import { parseRange, type ByteRange } from './range.ts';

export interface SendableFile {
  size: number;
  sha256: string;
  fileName: string;
  contentType: string;
  open(range: ByteRange | null): Promise<Readable>;
}

export async function sendFile(request: FastifyRequest, reply: FastifyReply, file: SendableFile): Promise<FastifyReply> {
  const range = parseRange(request.headers.range, file.size);
  if (range === 'unsatisfiable') {
    reply.header('content-range', `bytes */${file.size}`);
    throw new AppError('range_not_satisfiable');
  }
  reply
    .header('accept-ranges', 'bytes')
    .header('etag', `"${file.sha256}"`)
    .header('content-disposition', `attachment; filename="${file.fileName.replace(/["\\\r\n]/g, '_')}"`)
    .type(file.contentType);
  // RFC 9110 §13.1.5: a stale If-Range gets the whole representation.
  const ifRange = request.headers['if-range'];
  if (range && (ifRange === undefined || ifRange === `"${file.sha256}"`)) {
    reply.code(206).header('content-range', `bytes ${range.start}-${range.end}/${file.size}`).header('content-length', String(range.end - range.start + 1));
    return reply.send(await body(request, () => file.open(range)));
  }
  reply.header('content-length', String(file.size));
  return reply.send(await body(request, () => file.open(null)));
}

/**
 * The bytes to send; none for HEAD. fastify answers HEAD by draining the GET handler's stream,
 * which would read a whole package from storage to send nothing.
 */
async function body(request: FastifyRequest, open: () => Promise<Readable>): Promise<Readable> {
  return request.method === 'HEAD' ? Readable.from([]) : open();
}
