// Issue 12, "what must be shown": hundreds of hostile requests over every route — broken
// multipart, bad JSON, bad ranges, odd ids and paths, bad packages, keystores, profiles, Mach-O,
// zip bombs and traversal, malformed HTTP. Every answer is below 500 and names a catalogue code
// (JSON `error`, or the Signet-Error header of a page), every case is answered within 2 s, and
// the server is alive at the end. Cases are generated from the route table, so a new route is
// covered without editing this file.
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { ERROR_CATALOGUE } from '../../src/errors.ts';
import { Api } from '../support/api-client.ts';
import { tinyApk, tinyIpa } from '../support/app-packages.ts';
import { distributionFixture, type DistributionFixture } from '../support/distribution.ts';
import { testPki } from '../support/pki.ts';
import { buildZip } from '../support/zip-builder.ts';
import { rawRequest } from '../support/raw-http.ts';

interface Case {
  name: string;
  method: string;
  path: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
  /** Sent without an API key. */
  anonymous?: boolean;
}

let fixture: DistributionFixture;
let api: Api;
let slug: string;
let taskId: string;
let distributionId: string;
let appSlug: string;

before(async () => {
  fixture = await distributionFixture('hostile', { SIGNET_RATE_LIMIT: '100000/s,100000', SIGNET_PUBLIC_RATE_LIMIT: '100000/min', SIGNET_PASSWORD_ATTEMPTS: '100000/min' });
  api = fixture.api;
  const { task, distribution } = await fixture.release('hostile.apk', tinyApk({ packageName: 'com.example.hostile' }));
  taskId = task.task_id;
  distributionId = distribution.id;
  slug = distribution.url.split('/d/')[1];
  appSlug = (distribution.app_url as string).split('/a/')[1]!;
});
after(() => fixture.close());

// ---- generators -----------------------------------------------------------------------------

const ODD_IDS = ['%ff', '%00', 'a'.repeat(300), '..%2f..%2fetc%2fpasswd', '%2e%2e', 'tsk_%F0%9F%92%A9', '%3Cscript%3E', 'null', '0', '-1', 'tsk_' + 'z'.repeat(60), '%20', '%C0%AE%C0%AE'];

function multipart(boundary: string, parts: Array<{ name: string; filename?: string; type?: string; data: string | Buffer }>, close = true): Buffer {
  const chunks: Buffer[] = [];
  for (const part of parts) {
    chunks.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${part.name}"${part.filename === undefined ? '' : `; filename="${part.filename}"`}\r\n${part.type ? `Content-Type: ${part.type}\r\n` : ''}\r\n`));
    chunks.push(Buffer.isBuffer(part.data) ? part.data : Buffer.from(part.data));
    chunks.push(Buffer.from('\r\n'));
  }
  if (close) chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return Buffer.concat(chunks);
}

function badPackages(): Array<[string, Buffer]> {
  const pkZip = tinyApk();
  const plist = '<?xml version="1.0"?><plist version="1.0"><dict><key>CFBundleIdentifier</key><string>com.x</string><key>CFBundleExecutable</key><string>X</string></dict></plist>';
  return [
    ['empty.apk', Buffer.alloc(0)],
    ['garbage.apk', Buffer.from('this is not a zip file at all')],
    ['garbage.ipa', Buffer.alloc(4096, 0xab)],
    ['truncated.apk', pkZip.subarray(0, pkZip.length >> 1)],
    ['truncated-tail.apk', pkZip.subarray(0, pkZip.length - 10)],
    ['eocd-only.apk', Buffer.from('504b0506000000000000000000000000000000000000', 'hex')],
    ['no-manifest.apk', buildZip([{ name: 'classes.dex', data: 'dex' }]).bytes],
    ['bad-manifest.apk', buildZip([{ name: 'AndroidManifest.xml', data: Buffer.alloc(64, 0x03) }]).bytes],
    ['traversal.apk', buildZip([{ name: '../../evil.sh', data: 'x' }, { name: 'AndroidManifest.xml', data: 'x' }]).bytes],
    ['absolute.ipa', buildZip([{ name: '/etc/passwd', data: 'x' }]).bytes],
    ['duplicate.apk', buildZip([{ name: 'AndroidManifest.xml', data: 'a' }, { name: 'AndroidManifest.xml', data: 'b' }]).bytes],
    ['bomb.apk', buildZip([{ name: 'AndroidManifest.xml', data: Buffer.alloc(64 * 1024 * 1024), method: 8 }]).bytes],
    ['lying-sizes.apk', buildZip([{ name: 'AndroidManifest.xml', data: 'abc', uncompressedSize: 0xfffffff0 }]).bytes],
    ['bad-crc.apk', buildZip([{ name: 'AndroidManifest.xml', data: 'abc', crc32: 1 }]).bytes],
    ['bad-offsets.apk', buildZip([{ name: 'AndroidManifest.xml', data: 'abc', localHeaderOffset: 999999 }]).bytes],
    ['eocd-lies.apk', buildZip([{ name: 'a', data: 'b' }], { eocd: { entryCount: 65535, cdSize: 999999 } }).bytes],
    ['no-payload.ipa', buildZip([{ name: 'Info.plist', data: plist }]).bytes],
    ['no-executable.ipa', buildZip([{ name: 'Payload/X.app/Info.plist', data: plist }]).bytes],
    ['tiny-macho.ipa', buildZip([{ name: 'Payload/X.app/Info.plist', data: plist }, { name: 'Payload/X.app/X', data: Buffer.from('cffaedfe07000001', 'hex') }]).bytes],
    ['bad-plist.ipa', buildZip([{ name: 'Payload/X.app/Info.plist', data: '<plist><dict><key>a</key>' }, { name: 'Payload/X.app/X', data: 'x' }]).bytes],
    ['deep-plist.ipa', buildZip([{ name: 'Payload/X.app/Info.plist', data: `<plist>${'<array>'.repeat(5000)}${'</array>'.repeat(5000)}</plist>` }]).bytes],
    ['ipa-as-apk.apk', tinyIpa()],
    ['apk-as-ipa.ipa', tinyApk()],
    ['wrong-extension.exe', tinyApk()],
  ];
}

function badKeystores(): Array<[string, Record<string, string | { name: string; data: Buffer }>]> {
  const pki = testPki();
  const p12 = pki.p12(pki.androidRsa, { password: 'pw' });
  const hostile = Buffer.from(p12);
  hostile[hostile.length - 3] = 0x7f; // MAC iterations mangled
  const deep = Buffer.concat([...Array.from({ length: 3000 }, () => Buffer.from([0x30, 0x80])), Buffer.alloc(6000)]);
  const profile = pki.mobileprovision({ bundleId: '*' });
  const files: Array<[string, Buffer]> = [
    ['garbage.p12', Buffer.from('not a keystore')],
    ['empty.p12', Buffer.alloc(0)],
    ['truncated.p12', p12.subarray(0, 200)],
    ['flipped.p12', Buffer.from(p12.map((b, i) => (i === 100 ? b ^ 0xff : b)))],
    ['hostile-mac.p12', hostile],
    ['deep.der', deep],
    ['jks-garbage.jks', Buffer.concat([Buffer.from('feedfeed00000002ffffffff', 'hex'), Buffer.alloc(40)])],
    ['jceks.jks', Buffer.from('cececece0000000200000000', 'hex')],
    ['pem-garbage.pem', Buffer.from('-----BEGIN PRIVATE KEY-----\nnot base64!!\n-----END PRIVATE KEY-----\n')],
    ['cert-only.pem', Buffer.from(`-----BEGIN CERTIFICATE-----\n${pki.androidRsa.certificatePem.split('\n').slice(1, -2).join('\n')}\n-----END CERTIFICATE-----\n`)],
  ];
  const forms: Array<[string, Record<string, string | { name: string; data: Buffer }>]> = [];
  for (const [name, data] of files) {
    forms.push([`android ${name}`, { kind: 'android', password: 'pw', file: { name, data } }]);
    forms.push([`ios ${name}`, { kind: 'ios_enterprise', password: 'pw', file: { name, data }, profile: { name: 'p.mobileprovision', data: profile } }]);
  }
  for (const [name, data] of [
    ['garbage', Buffer.from('garbage')],
    ['truncated', profile.subarray(0, profile.length >> 1)],
    ['flipped', Buffer.from(profile.map((b, i) => (i === profile.length - 40 ? b ^ 0x55 : b)))],
    ['deep', deep],
    ['empty', Buffer.alloc(0)],
  ] as Array<[string, Buffer]>) {
    forms.push([`profile ${name}`, { kind: 'ios_enterprise', password: 'pw', file: { name: 'k.p12', data: pki.p12(pki.leaf, { password: 'pw' }) }, profile: { name: 'p.mobileprovision', data } }]);
  }
  forms.push(['wrong password', { kind: 'android', password: 'nope', file: { name: 'k.p12', data: p12 } }]);
  forms.push(['unknown kind', { kind: 'windows', file: { name: 'k.p12', data: p12 } }]);
  forms.push(['unknown field', { kind: 'android', passwort: 'pw', file: { name: 'k.p12', data: p12 } }]);
  forms.push(['developer account without p8', { issuer_id: 'x', key_id: 'y', p12: { name: 'd.p12', data: p12 } } as never]);
  return forms;
}

function cases(routes: Array<{ method: string; path: string }>): Case[] {
  const out: Case[] = [];
  const fill = (path: string, id: string) =>
    path.replace(/\{(\w+)\}|:(\w+)/g, (_m, a: string | undefined, b: string | undefined) => {
      const name = a ?? b ?? '';
      if (id !== 'valid') return id;
      if (name === 'slug') return slug;
      if (name === 'task_id') return taskId;
      if (name === 'distribution_id') return distributionId;
      return `${name}_missing`;
    });
  for (const route of routes) {
    const withIds = /[{:]/.test(route.path) ? ODD_IDS : ['valid'];
    for (const id of withIds) {
      for (const anonymous of [false, true]) out.push({ name: `${route.method} ${route.path} id=${id.slice(0, 20)}${anonymous ? ' anonymous' : ''}`, method: route.method, path: fill(route.path, id), anonymous });
    }
    // Every route with methods it does not take and bodies it does not expect.
    const path = fill(route.path, 'valid');
    for (const method of ['PUT', 'DELETE', 'PATCH', 'OPTIONS', 'HEAD', 'PROPFIND']) out.push({ name: `${method} ${route.path}`, method, path });
    out.push({ name: `${route.method} ${route.path} with a JSON body`, method: route.method, path, headers: { 'content-type': 'application/json' }, body: '{"x":' });
    out.push({ name: `${route.method} ${route.path} with query junk`, method: route.method, path: `${path}?limit[]=1&limit=-5&cursor=%ff&t=%00&enrollment=${'x'.repeat(500)}&__proto__[x]=1` });
  }
  // Bad JSON to every JSON route.
  const jsonRoutes: Array<[string, string]> = [['POST', '/v1/tasks/create'], ['PATCH', `/v1/distributions/${distributionId}`]];
  const deep = '['.repeat(20_000) + ']'.repeat(20_000);
  const jsonBodies = ['', '{', '[]', 'null', '"x"', '1e999', deep, '{"file_key":1,"cert_type":2}', '{"__proto__":{"admin":true}}', '{"constructor":{"prototype":{"x":1}}}', '{"file_key":"x","cert_type":"enterprise","callback_url":"http://"}', '{"file_key":"x","cert_type":"enterprise","callback_url":"http://[::1]/"}', '{"file_key":"' + 'x'.repeat(100_000) + '","cert_type":"enterprise"}', '{"password":12345}', '{"max_downloads":true}', '{"expires_at":"not a date"}', '{"enabled":"yes"}', '\u0000\u0001', '{"a":1,"a":2}', '\ufeff{}'];
  for (const [method, path] of jsonRoutes) {
    for (const body of jsonBodies) out.push({ name: `${method} ${path} body=${JSON.stringify(body.slice(0, 30))}`, method, path, headers: { 'content-type': 'application/json' }, body });
    for (const type of ['text/plain', 'application/xml', 'application/json; charset=utf-16', 'multipart/form-data', 'application/x-www-form-urlencoded', 'application/json\u0000']) {
      out.push({ name: `${method} ${path} type=${JSON.stringify(type)}`, method, path, headers: { 'content-type': type.replace('\u0000', '') }, body: '{}' });
    }
  }
  // Broken multipart to every multipart route.
  for (const path of ['/v1/apps/upload', '/v1/certificates', '/v1/developer-accounts']) {
    const bodies: Array<[string, string, Buffer]> = [
      ['no boundary', 'multipart/form-data', Buffer.from('raw')],
      ['empty boundary', 'multipart/form-data; boundary=', Buffer.from('--\r\n')],
      ['wrong boundary', 'multipart/form-data; boundary=A', multipart('B', [{ name: 'file', filename: 'a.apk', data: 'x' }])],
      ['unclosed', 'multipart/form-data; boundary=A', multipart('A', [{ name: 'file', filename: 'a.apk', data: 'PK' }], false)],
      ['truncated header', 'multipart/form-data; boundary=A', Buffer.from('--A\r\nContent-Disposition: form-da')],
      ['no disposition', 'multipart/form-data; boundary=A', Buffer.from('--A\r\nContent-Type: x\r\n\r\ndata\r\n--A--\r\n')],
      ['no filename', 'multipart/form-data; boundary=A', multipart('A', [{ name: 'file', data: 'PK' }])],
      ['no parts', 'multipart/form-data; boundary=A', Buffer.from('--A--\r\n')],
      ['many parts', 'multipart/form-data; boundary=A', multipart('A', Array.from({ length: 50 }, (_, i) => ({ name: `f${i}`, data: 'x' })))],
      ['two files', 'multipart/form-data; boundary=A', multipart('A', [{ name: 'file', filename: 'a.apk', data: 'x' }, { name: 'file', filename: 'b.apk', data: 'y' }])],
      ['huge field', 'multipart/form-data; boundary=A', multipart('A', [{ name: 'password', data: 'x'.repeat(200_000) }])],
      ['header bomb', 'multipart/form-data; boundary=A', Buffer.from(`--A\r\n${'X-A: b\r\n'.repeat(5000)}\r\nx\r\n--A--\r\n`)],
      ['filename traversal', 'multipart/form-data; boundary=A', multipart('A', [{ name: 'file', filename: '../../../etc/passwd.apk', data: tinyApk() }])],
      ['filename nul', 'multipart/form-data; boundary=A', multipart('A', [{ name: 'file', filename: 'a\u0000.apk', data: 'x' }])],
      ['binary junk', 'multipart/form-data; boundary=A', Buffer.from(Array.from({ length: 2048 }, (_, i) => (i * 7919) & 0xff))],
    ];
    for (const [what, type, body] of bodies) out.push({ name: `POST ${path} multipart ${what}`, method: 'POST', path, headers: { 'content-type': type }, body });
  }
  // Bad packages through the upload route.
  for (const [name, data] of badPackages()) {
    out.push({ name: `upload ${name}`, method: 'POST', path: '/v1/apps/upload', headers: { 'content-type': 'multipart/form-data; boundary=PKG' }, body: multipart('PKG', [{ name: 'file', filename: name, data }]) });
  }
  // Bad ranges on both downloads.
  for (const range of ['bytes=5-1', 'bytes=-0', 'bytes=999999999-', 'bytes=0-0,1-1', 'items=0-1', 'bytes=abc', 'bytes=--1', 'bytes=1-2-3', `bytes=0-${'9'.repeat(40)}`, 'bytes=18446744073709551616-']) {
    out.push({ name: `artifact range ${range}`, method: 'GET', path: `/v1/tasks/${taskId}/artifact`, headers: { range } });
    out.push({ name: `download range ${range}`, method: 'GET', path: `/d/${slug}/download`, headers: { range, 'if-range': '"nope"' }, anonymous: true });
  }
  // Odd paths and headers.
  for (const path of ['/..', '//', '/v1/../v1/tasks', '/%2e%2e/%2e%2e/etc/passwd', `/${'a'.repeat(8000)}`, '/d/', '/a/', `/d/${slug}/../../v1/tasks`, `/a/${appSlug}/history/..`, '/v1/tasks/' + '%'.repeat(10), '/\\\\', '/v1/tasks?' + 'a=1&'.repeat(2000)]) {
    out.push({ name: `path ${path.slice(0, 40)}`, method: 'GET', path });
  }
  for (const authorization of ['Bearer', 'Bearer ', 'Basic abc', `Bearer ${'x'.repeat(5000)}`, 'Bearer sk_\u00e9', 'bearer  sk_x  y']) {
    out.push({ name: `authorization ${authorization.slice(0, 20)}`, method: 'GET', path: '/v1/tasks', headers: { authorization }, anonymous: true });
  }
  out.push({ name: 'idempotency key too long', method: 'POST', path: '/v1/tasks/create', headers: { 'content-type': 'application/json', 'idempotency-key': 'k'.repeat(1000) }, body: '{}' });
  // The public form and the device answer.
  for (const body of ['', 'password', 'password=&password=', `password=${'%'.repeat(100)}`, 'x=1', 'password=' + 'a'.repeat(3000)]) {
    out.push({ name: `unlock form ${JSON.stringify(body.slice(0, 20))}`, method: 'POST', path: `/d/${slug}`, headers: { 'content-type': 'application/x-www-form-urlencoded' }, body, anonymous: true });
  }
  for (const body of ['', 'garbage', Buffer.alloc(300_000, 1)]) {
    out.push({ name: `device answer ${body.length} bytes`, method: 'POST', path: `/d/${slug}/udid?challenge=x`, headers: { 'content-type': 'application/pkcs7-signature' }, body, anonymous: true });
  }
  return out;
}

const KNOWN = new Set(Object.keys(ERROR_CATALOGUE));

async function send(c: Case): Promise<{ status: number; code: string | null }> {
  const headers: Record<string, string> = { ...c.headers };
  if (!c.anonymous && !('authorization' in headers)) headers.authorization = `Bearer ${fixture.server.key}`;
  const response = await fetch(`${fixture.server.url}${c.path}`, {
    method: c.method,
    headers,
    ...(c.body === undefined || c.method === 'GET' ? {} : { body: typeof c.body === 'string' ? c.body : new Uint8Array(c.body) }),
    redirect: 'manual',
    signal: AbortSignal.timeout(5000),
  });
  const text = await response.text();
  const header = response.headers.get('signet-error');
  let code: string | null = header;
  if ((response.headers.get('content-type') ?? '').includes('json') && text) {
    try {
      code = (JSON.parse(text) as { error?: string }).error ?? code;
    } catch {
      code = null;
    }
  }
  return { status: response.status, code };
}

it('answers 300+ hostile requests over every route below 500, with a catalogue code, each within 2 s', { timeout: 600_000 }, async () => {
  const document = (await api.get('/v1/openapi.json')).body;
  const routes: Array<{ method: string; path: string }> = [];
  for (const [path, item] of Object.entries(document.paths as Record<string, Record<string, unknown>>)) {
    const full = path.startsWith('/') && (item as { servers?: unknown }).servers ? path : `/v1${path}`;
    for (const method of Object.keys(item)) if (method !== 'servers') routes.push({ method: method.toUpperCase(), path: full });
  }
  assert.ok(routes.length >= 25, `${routes.length} routes`);
  const all = cases(routes);
  assert.ok(all.length >= 300, `${all.length} cases`);
  const failures: string[] = [];
  let slowest = 0;
  for (const c of all) {
    const started = performance.now();
    let outcome: { status: number; code: string | null };
    try {
      outcome = await send(c);
    } catch (error) {
      failures.push(`${c.name}: ${(error as Error).message}`);
      continue;
    }
    const elapsed = performance.now() - started;
    slowest = Math.max(slowest, elapsed);
    if (outcome.status >= 500) failures.push(`${c.name}: ${outcome.status} ${outcome.code}`);
    else if (outcome.status >= 400 && (outcome.code === null || !KNOWN.has(outcome.code))) failures.push(`${c.name}: ${outcome.status} without a catalogue code (${outcome.code})`);
    if (elapsed > 2000) failures.push(`${c.name}: ${elapsed.toFixed(0)} ms`);
  }
  assert.deepEqual(failures, [], `${failures.length} of ${all.length} cases failed`);
  // Malformed HTTP never reaches a route: Node's parser refuses it, still with a catalogue body.
  const host = new URL(fixture.server.url).host;
  for (const head of ['GET / HTTP/9.9', 'GARBAGE', `GET /healthz HTTP/1.1\nHost: ${host}\nContent-Length: -1`, `GET /healthz HTTP/1.1\nHost: ${host}\nTransfer-Encoding: chunked\nContent-Length: 5`, `GET /${'a'.repeat(70_000)} HTTP/1.1\nHost: ${host}`]) {
    const answer = await rawRequest(fixture.server.url, head);
    assert.ok(answer.status >= 400 && answer.status < 500, `${head.slice(0, 40)} → ${answer.status}`);
    assert.ok(KNOWN.has(JSON.parse(answer.body).error), answer.body);
  }
  assert.equal((await api.get('/healthz')).status, 200, 'still alive');
  assert.ok(slowest < 2000);
});
