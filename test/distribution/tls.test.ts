// iOS installs need HTTPS: Signet serves it itself with SIGNET_TLS_CERT/KEY, and warns at start-up
// when its install links would be plain HTTP.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';
import https from 'node:https';
import path from 'node:path';
import { it } from 'node:test';
import { testOutputDir } from '../support/fixtures.ts';
import { startTestServer } from '../support/server.ts';

function selfSignedCertificate(): { cert: string; key: string } {
  const dir = testOutputDir('distribution', 'tls');
  mkdirSync(dir, { recursive: true });
  const cert = path.join(dir, 'server.crt');
  const key = path.join(dir, 'server.key');
  execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-days', '1',
    '-subj', '/CN=localhost', '-addext', 'subjectAltName=IP:127.0.0.1,DNS:localhost', '-keyout', key, '-out', cert], { stdio: 'ignore' });
  return { cert, key };
}

function get(url: string, ca: Buffer): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    https.get(url, { ca }, (response) => {
      let body = '';
      response.setEncoding('utf8').on('data', (chunk: string) => (body += chunk)).on('end', () => resolve({ status: response.statusCode ?? 0, body }));
    }).on('error', reject);
  });
}

function captureLogs(): { lines: string[]; logger: { level: string; stream: { write(line: string): void } } } {
  const lines: string[] = [];
  return { lines, logger: { level: 'warn', stream: { write: (line) => lines.push(line) } } };
}

it('serves HTTPS with SIGNET_TLS_CERT and SIGNET_TLS_KEY, and then does not warn', async () => {
  const { cert, key } = selfSignedCertificate();
  const logs = captureLogs();
  const server = await startTestServer({ name: 'tls', env: { SIGNET_TLS_CERT: cert, SIGNET_TLS_KEY: key }, overrides: { logger: logs.logger } });
  try {
    assert.match(server.url, /^https:\/\//);
    const health = await get(`${server.url}/healthz`, readFileSync(cert));
    assert.equal(health.status, 200);
    assert.equal(logs.lines.some((line) => line.includes('need HTTPS')), false);
  } finally {
    await server.close();
  }
});

it('warns at start-up when install links would be plain HTTP', async () => {
  const logs = captureLogs();
  const server = await startTestServer({ name: 'plain', overrides: { logger: logs.logger } });
  await server.close();
  const warning = logs.lines.map((line) => JSON.parse(line) as { level: number; msg: string }).find((entry) => entry.msg.includes('need HTTPS'));
  assert.ok(warning, 'a warning names the problem');
  assert.equal(warning.level, 40);
  assert.match(warning.msg, /SIGNET_PUBLIC_URL/);
});
