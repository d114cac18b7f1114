// Issue 12 §3: slow clients are cut off. Headers must arrive in time, bodies must keep moving
// (idle and minimum-rate limits), with or without authentication; an upload cut off this way
// leaves no partial file behind, and the server stays responsive throughout.
import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { startTestServer, type TestServer } from '../support/server.ts';
import { tempBytes, tempFiles } from '../support/temp-files.ts';

let server: TestServer;
let host: string;
before(async () => {
  server = await startTestServer({
    name: 'slow-clients',
    env: { SIGNET_HEADERS_TIMEOUT: '2', SIGNET_BODY_IDLE_TIMEOUT: '2', SIGNET_MIN_BODY_RATE: '2048' },
    overrides: { signers: [] },
  });
  host = new URL(server.url).host;
});
after(() => server.close());

interface Slow {
  socket: net.Socket;
  received: () => string;
  closed: Promise<number>;
}

/** Opens a socket, writes `head`, then one byte of `drip` every `everyMs` until the server closes it. */
function slowClient(head: string, drip: string | null, everyMs: number): Slow {
  const { hostname, port } = new URL(server.url);
  const socket = net.connect(Number(port), hostname);
  let text = '';
  const started = performance.now();
  socket.on('data', (chunk: Buffer) => (text += chunk.toString('latin1')));
  socket.on('error', () => {});
  const closed = new Promise<number>((resolve) => socket.once('close', () => resolve(performance.now() - started)));
  socket.write(head);
  let at = 0;
  const timer = drip === null ? null : setInterval(() => {
    if (socket.destroyed) return;
    socket.write(drip[at % drip.length]!);
    at += 1;
  }, everyMs);
  void closed.then(() => timer && clearInterval(timer));
  return { socket, received: () => text, closed };
}

it('closes connections whose headers, or bodies, crawl — authenticated uploads and public forms alike', { timeout: 60_000 }, async () => {
  const boundary = 'SLOW';
  const uploadHead = (length: number) =>
    `POST /v1/apps/upload HTTP/1.1\r\nHost: ${host}\r\nAuthorization: Bearer ${server.key}\r\nContent-Type: multipart/form-data; boundary=${boundary}\r\nContent-Length: ${length}\r\n\r\n` +
    `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="slow.apk"\r\n\r\nPK\x03\x04`;
  const clients: Array<[string, Slow]> = [];
  for (let i = 0; i < 5; i += 1) {
    // 1 byte every 500 ms: never idle for long, but far below the minimum rate.
    clients.push(['trickling upload', slowClient(uploadHead(10_000_000), 'x', 500)]);
    // Part of a body, then nothing.
    clients.push(['stalled upload', slowClient(uploadHead(10_000_000) + 'x'.repeat(100_000), null, 0)]);
    clients.push(['trickling public form', slowClient(`POST /d/some-link HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 4000\r\n\r\npassword=`, 'x', 500)]);
    clients.push(['trickling headers', slowClient(`GET /healthz HTTP/1.1\r\nHost: ${host}\r\n`, 'X', 500)]);
  }
  // The server keeps answering others meanwhile.
  await sleep(1000);
  const health = await fetch(`${server.url}/healthz`);
  assert.equal(health.status, 200);
  await sleep(1000);
  assert.ok(tempFiles(server.dataDir).some((f) => f.path.endsWith('.part')), 'uploads in progress write partial files');

  for (const [what, client] of clients) {
    const lasted = await client.closed;
    assert.ok(lasted < 20_000, `${what} stayed open ${lasted.toFixed(0)} ms`);
    const answer = client.received();
    if (what === 'stalled upload' || what === 'trickling headers' || what.startsWith('trickling')) {
      assert.match(answer, /^HTTP\/1\.1 408 /, `${what}: ${answer.slice(0, 200)}`);
      assert.match(answer, /"error":"request_timeout"/);
    }
  }
  // Aborted uploads removed their partial files.
  for (let i = 0; i < 50 && tempBytes(server.dataDir) > 0; i += 1) await sleep(100);
  assert.deepEqual(tempFiles(server.dataDir).filter((f) => !f.path.endsWith('owner.json')), []);
});
