// A minimal HTTP client for service tests: JSON calls through fetch, and multipart uploads
// streamed with node:http (a generated body of any size, Content-Length set, never buffered).
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import type { TestPki } from './pki.ts';

export interface ApiResponse<T = any> {
  status: number;
  headers: Headers;
  body: T;
}

export class Api {
  readonly url: string;
  readonly key: string | null;

  constructor(url: string, key: string | null) {
    this.url = url;
    this.key = key;
  }

  as(key: string | null): Api {
    return new Api(this.url, key);
  }

  async request<T = any>(method: string, path: string, init: { json?: unknown; body?: BodyInit; headers?: Record<string, string> } = {}): Promise<ApiResponse<T>> {
    const headers: Record<string, string> = { ...init.headers };
    if (this.key !== null) headers.authorization = `Bearer ${this.key}`;
    let body = init.body;
    if (init.json !== undefined) {
      body = JSON.stringify(init.json);
      headers['content-type'] ??= 'application/json';
    }
    const response = await fetch(`${this.url}${path}`, { method, headers, ...(body === undefined ? {} : { body }) });
    const text = await response.text();
    const type = response.headers.get('content-type') ?? '';
    return { status: response.status, headers: response.headers, body: type.includes('json') && text ? JSON.parse(text) : text };
  }

  get<T = any>(path: string, headers?: Record<string, string>) {
    return this.request<T>('GET', path, headers ? { headers } : {});
  }

  post<T = any>(path: string, json?: unknown, headers?: Record<string, string>) {
    return this.request<T>('POST', path, { ...(json === undefined ? {} : { json }), ...(headers ? { headers } : {}) });
  }

  /** Multipart form with small parts (FormData, fine for kilobytes). */
  form<T = any>(path: string, fields: Record<string, string | { name: string; data: Buffer }>) {
    const form = new FormData();
    for (const [name, value] of Object.entries(fields)) {
      if (typeof value === 'string') form.append(name, value);
      else form.append(name, new Blob([new Uint8Array(value.data)]), value.name);
    }
    return this.request<T>('POST', path, { body: form });
  }

  upload<T = any>(fileName: string, data: Buffer) {
    return this.form<T>('/v1/apps/upload', { file: { name: fileName, data } });
  }
}

/**
 * Registers the test PKI's leaf (.p12, password "pw") as an iOS enterprise certificate with an
 * in-house profile for every bundle id; returns the certificate's API answer (`data`).
 */
export async function addEnterpriseIosCertificate(api: Api, pki: TestPki): Promise<any> {
  const response = await api.form('/v1/certificates', {
    kind: 'ios_enterprise',
    password: 'pw',
    file: { name: 'leaf.p12', data: pki.p12(pki.leaf, { password: 'pw' }) },
    profile: { name: 'inhouse.mobileprovision', data: pki.mobileprovision({ bundleId: '*' }) },
  });
  assert.equal(response.status, 200, JSON.stringify(response.body));
  return response.body.data;
}

/** The task once it has succeeded or failed (GET /v1/tasks/:id every 50 ms); fails after `timeoutMs`. */
export async function waitForTaskEnd(api: Api, taskId: string, timeoutMs = 60_000): Promise<any> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const task = (await api.get(`/v1/tasks/${taskId}`)).body.data;
    if (task.status === 'succeeded' || task.status === 'failed') return task;
    if (Date.now() > deadline) assert.fail(`task ${taskId} still ${task.status} after ${timeoutMs} ms`);
    await sleep(50);
  }
}

/**
 * Streams `size` bytes from `source` as the multipart field `file` to POST /v1/apps/upload.
 * Resolves with the response even when the server answers before the body is fully sent.
 */
export function streamUpload(url: string, key: string, fileName: string, size: number, source: Readable): Promise<ApiResponse> {
  const boundary = `----signet${randomBytes(12).toString('hex')}`;
  const head = Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${fileName}"\r\nContent-Type: application/octet-stream\r\n\r\n`);
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  const target = new URL('/v1/apps/upload', url);
  return new Promise((resolve, reject) => {
    const request = http.request(target, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${key}`,
        'content-type': `multipart/form-data; boundary=${boundary}`,
        'content-length': String(head.length + size + tail.length),
      },
    });
    let answered = false;
    request.on('response', (response) => {
      answered = true;
      const chunks: Buffer[] = [];
      response.on('data', (c: Buffer) => chunks.push(c));
      response.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        const headers = new Headers();
        for (const [k, v] of Object.entries(response.headers)) if (typeof v === 'string') headers.set(k, v);
        resolve({ status: response.statusCode ?? 0, headers, body: text.startsWith('{') ? JSON.parse(text) : text });
      });
      response.on('error', reject);
    });
    // A server that answers early (413, 503) closes the connection while the body is still being
    // written: the write fails (EPIPE/ECONNRESET) although the answer may already be on its way.
    request.on('error', (error) => {
      if (!answered) setTimeout(() => answered || reject(error), 1000);
    });
    const body = Readable.from(
      (async function* () {
        yield head;
        for await (const chunk of source) yield chunk as Buffer;
        yield tail;
      })(),
    );
    body.pipe(request);
    body.on('error', reject);
  });
}
