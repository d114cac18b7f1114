// Issue 12 §4: outbound requests to user-supplied URLs refuse destinations inside — in every
// spelling, checked at connect time on every attempt — unless SIGNET_OUTBOUND_ALLOW admits them.
// Names are resolved by a stub here; nothing in this file sends a packet anywhere but loopback.
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { OutboundAllowList, OutboundRefused, postOutbound, refusalReason, validateOutboundUrl, type Resolver } from '../../src/services/outbound.ts';
import { Api } from '../support/api-client.ts';
import { tinyApk } from '../support/app-packages.ts';
import { testPki } from '../support/pki.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { slowCopySigner } from '../support/slow-signer.ts';

const NONE = new OutboundAllowList('');

it('classifies every internal range, in every spelling', () => {
  const refused = [
    '127.0.0.1', '127.255.255.254', '0.0.0.0', '10.1.2.3', '172.16.0.1', '172.31.255.255', '192.168.1.1', '100.64.0.1', '100.100.100.200',
    '169.254.169.254', '192.0.0.192', '168.63.129.16', '224.0.0.1', '239.255.255.250', '255.255.255.255', '198.18.0.1', '192.0.2.1',
    '::1', '::', '::ffff:127.0.0.1', '::ffff:7f00:1', '::ffff:169.254.169.254', '64:ff9b::a9fe:a9fe', '2002:7f00:1::1', '::127.0.0.1',
    'fd00:ec2::254', 'fc00::1', 'fe80::1', 'ff02::1', '2001:db8::1', '[::1]',
  ];
  for (const address of refused) assert.ok(refusalReason(address), `${address} must be refused`);
  for (const address of ['93.184.216.34', '8.8.8.8', '2606:4700:4700::1111', '::ffff:8.8.8.8', '172.32.0.1', '100.128.0.1']) {
    assert.equal(refusalReason(address), null, `${address} is public`);
  }
});

it('refuses internal URLs at task creation in numeric spellings the URL parser normalises', () => {
  for (const url of ['http://0x7f000001/', 'http://2130706433/', 'http://0177.0.0.1/', 'http://127.1/', 'http://[::ffff:7f00:1]/', 'http://[fd00:ec2::254]/latest', 'http://169.254.169.254/latest/meta-data/', 'http://', 'https://', 'file:///etc/passwd', 'gopher://x/']) {
    assert.throws(() => validateOutboundUrl(url, 'callback_url', { allow: NONE }), (e: any) => e.code === 'invalid_request', url);
  }
  // Names are not resolved at creation (that would be a probe); they are checked at connect time.
  assert.equal(validateOutboundUrl('https://metadata.google.internal/x', 'callback_url', { allow: NONE }).hostname, 'metadata.google.internal');
  assert.equal(validateOutboundUrl('http://127.0.0.1:9000/x', 'callback_url', { allow: new OutboundAllowList('127.0.0.0/8') }).port, '9000');
});

let receiver: http.Server;
let port = 0;
let hits = 0;
before(async () => {
  receiver = http.createServer((request, response) => {
    hits += 1;
    request.resume();
    request.on('end', () => response.writeHead(204).end());
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  port = (receiver.address() as AddressInfo).port;
});
after(() => receiver.close());

const post = (url: string, allow: OutboundAllowList, resolve: Resolver) =>
  postOutbound(url, { headers: { 'content-type': 'application/json' }, body: '{}', signal: AbortSignal.timeout(5000) }, { allow, resolve });

it('checks names at connect time with the resolver the socket uses, refusing any internal answer', async () => {
  const table: Record<string, string[]> = {
    'metadata.google.internal': ['169.254.169.254'],
    'rebinding.example.test': ['93.184.216.34', '127.0.0.1'],
    'six.example.test': ['::1'],
    'mapped.example.test': ['::ffff:10.0.0.1'],
    'hooks.corp.example': ['127.0.0.1'],
  };
  let lookups = 0;
  const resolve: Resolver = async (name) => {
    lookups += 1;
    const answers = table[name];
    if (!answers) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${name}`), { code: 'ENOTFOUND' });
    return answers.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  };
  for (const name of ['metadata.google.internal', 'rebinding.example.test', 'six.example.test', 'mapped.example.test', 'hooks.corp.example']) {
    await assert.rejects(post(`http://${name}:${port}/hook`, NONE, resolve), OutboundRefused, name);
  }
  for (const literal of [`http://127.0.0.1:${port}/`, `http://[::ffff:127.0.0.1]:${port}/`, `http://2130706433:${port}/`]) {
    await assert.rejects(post(literal, NONE, resolve), OutboundRefused, literal);
  }
  assert.equal(hits, 0, 'nothing was sent to a refused destination');
  assert.ok(lookups >= 5, 'names went through the resolver');
  // Admitted by name, by address, or by CIDR.
  assert.equal((await post(`http://hooks.corp.example:${port}/hook`, new OutboundAllowList('hooks.corp.example'), resolve)).status, 204);
  assert.equal((await post(`http://hooks.corp.example:${port}/hook`, new OutboundAllowList('*.corp.example'), resolve)).status, 204);
  assert.equal((await post(`http://127.0.0.1:${port}/hook`, new OutboundAllowList('127.0.0.0/8'), resolve)).status, 204);
  assert.equal(hits, 3);
  assert.throws(() => new OutboundAllowList('not a cidr!'), /SIGNET_OUTBOUND_ALLOW/);
});

let server: TestServer;
it('records a refused webhook delivery once, as refused, without retrying or probing', { timeout: 60_000 }, async () => {
  server = await startTestServer({ name: 'ssrf', overrides: { signers: [slowCopySigner('android', 0)] } });
  try {
    const api = new Api(server.url, server.key);
    const pki = testPki();
    await api.form('/v1/certificates', { kind: 'android', password: 'pw', file: { name: 'k.p12', data: pki.p12(pki.androidRsa, { password: 'pw' }) } });
    const fileKey = (await api.upload('s.apk', tinyApk())).body.data.file_key;
    // `localhost` passes creation (a name) and is refused when the socket resolves it.
    const created = await api.post('/v1/tasks/create', { file_key: fileKey, cert_type: 'enterprise', callback_url: `http://localhost:${port}/hook` });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    let task: any;
    for (let i = 0; i < 200; i += 1) {
      task = (await api.get(`/v1/tasks/${created.body.data.task_id}`)).body.data;
      if (task.webhook_deliveries.length > 0) break;
      await sleep(50);
    }
    await sleep(1500);
    task = (await api.get(`/v1/tasks/${created.body.data.task_id}`)).body.data;
    assert.equal(task.webhook_deliveries.length, 1, 'one attempt, not eight');
    const [delivery] = task.webhook_deliveries;
    assert.equal(delivery.outcome, 'refused');
    assert.equal(delivery.status_code, null, 'no status code from the internal service leaks');
    assert.match(delivery.error, /^destination refused: localhost \((127\.0\.0\.1|::1)\) is a loopback address/);
    assert.equal(hits, 3, 'the receiver on loopback was never contacted');
  } finally {
    await server.close();
  }
});
