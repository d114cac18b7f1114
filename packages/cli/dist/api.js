// The HTTP side: JSON calls with retries and backoff, the streamed multipart upload (hashing
// the file as it goes), and the task's server-sent events. Network failures, 5xx, 408 and 429
// are retried with exponential backoff (Retry-After honoured); a 4xx is an answer and is not.
// The API key only ever goes into the Authorization header: it is never printed or logged.
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import http from 'node:http';
import https from 'node:https';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { ApiError, CliError, UnavailableError } from './errors.js';
import { fingerprint, hashPrefix, remember, remembered, send } from './resumable.js';
const RETRY_STATUSES = new Set([408, 429, 500, 502, 503, 504]);
/** A failure worth another attempt: the network, or the server saying it cannot answer now. */
class Retryable extends Error {
    retryAfterMs;
    constructor(message, retryAfterMs = null, options) {
        super(message, options);
        this.retryAfterMs = retryAfterMs;
    }
}
export function apiBase(url) {
    let parsed;
    try {
        parsed = new URL(url);
    }
    catch {
        throw new CliError(2, 'usage', `SIGNET_URL / --url is not a URL: "${url}".`);
    }
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')
        throw new CliError(2, 'usage', `SIGNET_URL / --url must be http(s): "${url}".`);
    const base = parsed.href.replace(/\/+$/, '');
    return base.endsWith('/v1') ? base : `${base}/v1`;
}
function retryAfter(header) {
    if (!header)
        return null;
    const seconds = Number(header);
    if (Number.isFinite(seconds))
        return Math.min(120_000, Math.max(0, seconds * 1000));
    const at = Date.parse(header);
    return Number.isFinite(at) ? Math.min(120_000, Math.max(0, at - Date.now())) : null;
}
/** Turns an API answer into data, a CliError, or Retryable. */
function interpret(status, text, headers) {
    let body = null;
    try {
        body = text === '' ? null : JSON.parse(text);
    }
    catch {
        body = null;
    }
    if (status >= 200 && status < 300)
        return body?.data ?? body;
    if (RETRY_STATUSES.has(status))
        throw new Retryable(`the server answered HTTP ${status}${body?.error ? ` (${body.error})` : ''}`, retryAfter(headers.get('retry-after')));
    if (body && typeof body.error === 'string')
        throw new ApiError(status, body.error, String(body.message ?? body.error));
    throw new ApiError(status, `http_${status}`, `the server answered HTTP ${status}${text ? `: ${text.slice(0, 200)}` : ''}`);
}
/** The system error behind a failed fetch ("fetch failed" says nothing): ECONNREFUSED, ENOTFOUND… */
function describe(error) {
    for (let e = error, depth = 0; e && depth < 5; e = e.cause ?? e.errors?.[0], depth += 1) {
        if (typeof e.code === 'string' && /^E[A-Z]+$|^UND_ERR/.test(e.code))
            return `${e.code}${e.message && !e.message.includes(e.code) ? ` (${e.message})` : ''}`;
    }
    const cause = error.cause;
    if (cause instanceof Error)
        return `${error instanceof Error ? error.message : String(error)}: ${cause.message}`;
    return error instanceof Error ? error.message : String(error);
}
export class Client {
    base;
    #options;
    constructor(options) {
        this.#options = options;
        this.base = apiBase(options.url);
    }
    /** Runs `attempt` until it answers, retrying Retryable failures with exponential backoff. */
    async retrying(what, attempt) {
        for (let n = 0;; n += 1) {
            try {
                return await attempt();
            }
            catch (error) {
                if (!(error instanceof Retryable))
                    throw error;
                if (n >= this.#options.retries)
                    throw new UnavailableError(`${what} failed after ${n + 1} attempts: ${error.message}`, { cause: error });
                // 1 s, 2 s, 4 s … capped at 30 s, with jitter so parallel jobs do not retry in step.
                const backoff = Math.min(30_000, 1000 * 2 ** n) * (0.75 + Math.random() * 0.5);
                const wait = Math.max(backoff, error.retryAfterMs ?? 0);
                this.#options.log(`${what}: ${error.message}; retrying in ${(wait / 1000).toFixed(1)}s (${n + 1}/${this.#options.retries})`);
                await sleep(wait);
            }
        }
    }
    #headers(extra = {}) {
        return { authorization: `Bearer ${this.#options.key}`, 'user-agent': this.#options.userAgent, accept: 'application/json', ...extra };
    }
    async request(method, route, options = {}) {
        return this.retrying(`${method} ${route}`, async () => {
            let response;
            try {
                response = await fetch(`${this.base}${route}`, {
                    method,
                    headers: this.#headers({ ...(options.json === undefined ? {} : { 'content-type': 'application/json' }), ...options.headers }),
                    ...(options.json === undefined ? {} : { body: JSON.stringify(options.json) }),
                    signal: AbortSignal.timeout(60_000),
                });
            }
            catch (error) {
                throw new Retryable(`cannot reach ${new URL(this.base).origin}: ${describe(error)}`, null, { cause: error });
            }
            const text = await response.text().catch((error) => {
                throw new Retryable(`the answer was cut off: ${describe(error)}`, null, { cause: error });
            });
            return interpret(response.status, text, response.headers);
        });
    }
    /**
     * Uploads `file` as multipart to POST /apps/upload, computing its SHA-256 on the way; the
     * server's own hash must agree. A failed attempt starts over (retried like any request).
     */
    async upload(file, onProgress) {
        const size = (await stat(file)).size;
        const name = path.basename(file).replace(/["\r\n\\]/g, '_');
        return this.retrying('upload', async () => {
            const boundary = `----signet-cli-${randomBytes(12).toString('hex')}`;
            const head = Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${name}"\r\nContent-Type: application/octet-stream\r\n\r\n`, 'utf8');
            const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
            const target = new URL(`${this.base}/apps/upload`);
            const hash = createHash('sha256');
            const answer = await new Promise((resolve, reject) => {
                const request = (target.protocol === 'https:' ? https : http).request(target, {
                    method: 'POST',
                    headers: this.#headers({ 'content-type': `multipart/form-data; boundary=${boundary}`, 'content-length': String(head.length + size + tail.length) }),
                });
                request.on('response', (response) => {
                    const chunks = [];
                    response.on('data', (c) => chunks.push(c));
                    response.on('end', () => resolve({ status: response.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8'), headers: response.headers }));
                    response.on('error', (error) => reject(new Retryable(`the answer was cut off: ${describe(error)}`, null, { cause: error })));
                });
                request.on('error', (error) => reject(new Retryable(`cannot upload to ${target.origin}: ${error.code ?? error.message}`, null, { cause: error })));
                request.write(head);
                let sent = 0;
                const source = createReadStream(file, { highWaterMark: 1024 * 1024 });
                source.on('data', (chunk) => {
                    const bytes = chunk;
                    hash.update(bytes);
                    sent += bytes.length;
                    onProgress(sent, size);
                    if (!request.write(bytes))
                        source.pause();
                });
                request.on('drain', () => source.resume());
                source.on('end', () => request.end(tail));
                source.on('error', (error) => {
                    request.destroy();
                    reject(new CliError(2, 'usage', `cannot read ${file}: ${error.message}`));
                });
            });
            const upload = interpret(answer.status, answer.text, { get: (h) => answer.headers[h] });
            const sha256 = hash.digest('hex');
            if (upload.sha256 !== undefined && upload.sha256 !== sha256)
                throw new Retryable(`the server stored a different file (SHA-256 ${upload.sha256}, sent ${sha256})`);
            return { upload, sha256 };
        });
    }
    /**
     * Uploads `file` resumably (tus 1.0 at /uploads): continues an upload this machine started
     * before (same server, path, size and mtime) from the server's offset, else creates one. Any
     * failure along the way is retried from the offset the server reports. Returns null when the
     * server has no /uploads (an older Signet): the caller falls back to multipart.
     */
    async uploadResumable(file, options) {
        const { key, size } = await fingerprint(this.base, file);
        const tusHeaders = (extra = {}) => this.#headers({ 'tus-resumable': '1.0.0', ...extra });
        const failed = (error, what) => new Retryable(`${what}: ${describe(error)}`, null, { cause: error });
        return this.retrying('upload', async () => {
            let location = await remembered(options.stateDir, key);
            let offset = 0;
            if (location !== null) {
                const head = await send(new URL(location), 'HEAD', tusHeaders(), null).catch((error) => {
                    throw failed(error, `cannot reach ${new URL(this.base).origin}`);
                });
                if (head.status === 200 && Number(head.headers['upload-length']) === size) {
                    offset = Number(head.headers['upload-offset'] ?? 0);
                    if (offset > 0)
                        options.onResume(offset, size);
                }
                else if (head.status === 404 || head.status === 410 || head.status === 200) {
                    location = null; // expired, finished or another file: start over
                    await remember(options.stateDir, key, null);
                }
                else {
                    interpret(head.status, head.text, { get: (h) => head.headers[h] });
                }
            }
            if (location === null) {
                const name = Buffer.from(path.basename(file), 'utf8').toString('base64');
                const created = await send(new URL(`${this.base}/uploads`), 'POST', tusHeaders({ 'upload-length': String(size), 'upload-metadata': `filename ${name}` }), null).catch((error) => {
                    throw failed(error, `cannot reach ${new URL(this.base).origin}`);
                });
                // POST /uploads names no upload: a 404 means the server has no resumable uploads.
                if (created.status === 404)
                    return null;
                if (created.status !== 201)
                    interpret(created.status, created.text, { get: (h) => created.headers[h] });
                location = new URL(String(created.headers.location), this.base).href;
                await remember(options.stateDir, key, location);
            }
            const hash = await hashPrefix(file, offset);
            const answer = await send(new URL(location), 'PATCH', tusHeaders({ 'upload-offset': String(offset), 'content-type': 'application/offset+octet-stream' }), {
                file,
                offset,
                size,
                hash,
                onProgress: (sent) => options.onProgress(sent, size),
            }).catch((error) => {
                throw failed(error, 'the upload was interrupted');
            });
            if (answer.status === 409)
                throw new Retryable('the server is at another offset');
            const upload = interpret(answer.status, answer.text, { get: (h) => answer.headers[h] });
            if (!upload?.file_key)
                throw new Retryable(`the server did not finish the upload (HTTP ${answer.status})`);
            await remember(options.stateDir, key, null);
            const sha256 = hash.digest('hex');
            if (upload.sha256 !== sha256)
                throw new CliError(1, 'checksum_mismatch', `the server stored a different file (SHA-256 ${upload.sha256}, local ${sha256}); upload again`);
            return { upload, sha256 };
        });
    }
    /**
     * Follows GET /tasks/{id}/events until the final `task` event, reconnecting (with backoff)
     * when the stream breaks; calls `onStatus` for each status event. A server without the events
     * route is polled instead.
     */
    async follow(taskId, onStatus, signal) {
        let lastStatus = '';
        const seen = (status) => {
            const key = `${status.status}/${status.attempts}`;
            if (key !== lastStatus)
                onStatus(status);
            lastStatus = key;
        };
        for (;;) {
            const final = await this.retrying(`following task ${taskId}`, async () => {
                let response;
                try {
                    response = await fetch(`${this.base}/tasks/${encodeURIComponent(taskId)}/events`, { headers: this.#headers({ accept: 'text/event-stream' }), signal });
                }
                catch (error) {
                    if (signal.aborted)
                        throw signal.reason;
                    throw new Retryable(`cannot reach ${new URL(this.base).origin}: ${describe(error)}`, null, { cause: error });
                }
                if (!response.ok || !(response.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
                    const text = await response.text().catch(() => '');
                    try {
                        interpret(response.status === 200 ? 502 : response.status, text, response.headers);
                    }
                    catch (error) {
                        // An older server without the events route: poll the task instead.
                        if (error instanceof ApiError && error.code === 'not_found')
                            return { poll: true };
                        throw error;
                    }
                }
                try {
                    return { task: await readEvents(response, seen) };
                }
                catch (error) {
                    if (signal.aborted)
                        throw signal.reason;
                    throw new Retryable(`the event stream broke: ${describe(error)}`, null, { cause: error });
                }
            });
            if ('task' in final && final.task !== null)
                return final.task;
            if ('poll' in final) {
                for (;;) {
                    const task = await this.request('GET', `/tasks/${encodeURIComponent(taskId)}`);
                    seen(task);
                    if (['succeeded', 'failed', 'canceled'].includes(task.status))
                        return task;
                    await sleep(2000, undefined, { signal });
                }
            }
            // The stream ended without the final event (a server restart): reconnect.
            await sleep(1000, undefined, { signal });
        }
    }
}
/** Parses an SSE stream; returns the `task` event's data, or null if the stream ended before it. */
async function readEvents(response, onStatus) {
    if (!response.body)
        return null;
    const decoder = new TextDecoder();
    let buffer = '';
    for await (const chunk of response.body) {
        buffer += decoder.decode(chunk, { stream: true }).replace(/\r\n?/g, '\n');
        let end;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
            const block = buffer.slice(0, end);
            buffer = buffer.slice(end + 2);
            let event = 'message';
            const data = [];
            for (const line of block.split('\n')) {
                if (line.startsWith(':'))
                    continue;
                const colon = line.indexOf(':');
                const field = colon < 0 ? line : line.slice(0, colon);
                const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
                if (field === 'event')
                    event = value;
                if (field === 'data')
                    data.push(value);
            }
            if (data.length === 0)
                continue;
            const payload = JSON.parse(data.join('\n'));
            if (event === 'status')
                onStatus(payload);
            if (event === 'task')
                return payload;
        }
    }
    return null;
}
