// Slow and greedy clients: the limits Node's HTTP server does not enforce by itself.
// - Bodies must keep moving: a body that stalls for `bodyIdleMs`, or that averages less than
//   `minBodyBytesPerSecond` after a grace period, is answered 408 request_timeout and its socket
//   closed. Node's own requestTimeout cannot express this (it bounds the whole request, and a
//   2 GiB upload over a slow link legitimately takes long); an upload aborted this way is
//   cleaned up by its route (the blob store deletes the partial file).
// - At most `maxConnectionsPerAddress` open sockets per client address; more are closed at once.
//   Behind a trusted proxy every connection comes from the proxy, so the cap is off then.
// Header timeouts are Node's (server.headersTimeout, set by the app factory).
import type { Socket } from 'node:net';
import type { ServerResponse } from 'node:http';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ERROR_CATALOGUE } from '../../errors.ts';
import { ERROR_STATUS } from '../error-status.ts';

export interface ConnectionLimits {
  /** A body that receives nothing for this long is cut off. */
  bodyIdleMs: number;
  /** After `bodyGraceMs`, a body must have averaged at least this rate since it started. */
  minBodyBytesPerSecond: number;
  bodyGraceMs: number;
  /** Open sockets per remote address; 0 = no cap. */
  maxConnectionsPerAddress: number;
}

interface Watched {
  request: FastifyRequest;
  response: ServerResponse;
  socket: Socket;
  startedMs: number;
  startBytes: number;
  lastBytes: number;
  lastProgressMs: number;
}

const CHECK_EVERY_MS = 1000;

export function installConnectionGuard(app: FastifyInstance, limits: ConnectionLimits, onRefused: (reason: 'slow_body' | 'connections') => void): void {
  // One timer for every body in flight (reading socket.bytesRead adds no listener to the stream,
  // so fastify's own body reading is untouched).
  const watched = new Set<Watched>();
  let timer: NodeJS.Timeout | null = null;
  const check = () => {
    const now = performance.now();
    for (const entry of watched) {
      const { request, socket } = entry;
      if (request.raw.complete || socket.destroyed) {
        watched.delete(entry);
        continue;
      }
      const bytes = socket.bytesRead;
      if (bytes > entry.lastBytes) {
        entry.lastBytes = bytes;
        entry.lastProgressMs = now;
      }
      const elapsedMs = now - entry.startedMs;
      const stalled = now - entry.lastProgressMs > limits.bodyIdleMs;
      const tooSlow = elapsedMs > limits.bodyGraceMs && bytes - entry.startBytes < (limits.minBodyBytesPerSecond * (elapsedMs - limits.bodyGraceMs)) / 1000;
      if (stalled || tooSlow) {
        watched.delete(entry);
        request.log.info({ received: bytes - entry.startBytes, elapsed_ms: Math.round(elapsedMs), stalled }, 'request body too slow; closing the connection');
        onRefused('slow_body');
        timeOut(request, entry.response, socket);
      }
    }
    if (watched.size === 0 && timer) {
      clearInterval(timer);
      timer = null;
    }
  };

  app.addHook('onRequest', async (request, reply) => {
    const length = request.headers['content-length'];
    const hasBody = (length !== undefined && length !== '0') || request.headers['transfer-encoding'] !== undefined;
    if (!hasBody || request.raw.complete) return;
    const socket = request.raw.socket;
    const now = performance.now();
    watched.add({ request, response: reply.raw, socket, startedMs: now, startBytes: socket.bytesRead, lastBytes: socket.bytesRead, lastProgressMs: now });
    timer ??= setInterval(check, CHECK_EVERY_MS).unref();
  });
  app.addHook('onClose', async () => {
    if (timer) clearInterval(timer);
    watched.clear();
  });

  if (limits.maxConnectionsPerAddress > 0) {
    const open = new Map<string, number>();
    app.server.on('connection', (socket: Socket) => {
      const address = socket.remoteAddress ?? '';
      const count = (open.get(address) ?? 0) + 1;
      if (count > limits.maxConnectionsPerAddress) {
        onRefused('connections');
        socket.destroy();
        return;
      }
      open.set(address, count);
      socket.once('close', () => {
        const left = (open.get(address) ?? 1) - 1;
        if (left <= 0) open.delete(address);
        else open.set(address, left);
      });
    });
  }
}

/** 408 with the catalogue body when nothing was answered yet, then the socket goes. */
function timeOut(request: FastifyRequest, response: ServerResponse, socket: Socket): void {
  if (!response.headersSent && socket.writable) {
    const body = JSON.stringify({ code: ERROR_STATUS.request_timeout, error: 'request_timeout', message: ERROR_CATALOGUE.request_timeout });
    socket.write(
      `HTTP/1.1 408 Request Timeout\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
        `Signet-Error: request_timeout\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  // Destroying the request stream fires its 'close': uploads abort and delete their partial file.
  request.raw.destroy();
  socket.destroy();
}
