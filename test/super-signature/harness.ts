// A Signet server wired to the stateful App Store Connect fake, with one developer account and a
// super release of a generated app (real Mach-O code, an app extension, a framework), plus the
// steps an iPhone takes: open the page, download the request profile, POST its signed answer.
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { DeviceBuildSigner } from '../../src/super-signature/device-signer.ts';
import { parsePlist, plistToJs } from '../../src/signing/plist/index.ts';
import { verifySignedData } from '../../src/signing/cms/index.ts';
import { Api } from '../support/api-client.ts';
import { startFakeAsc, type FakeAppStoreConnect, type FakeTeam } from '../support/asc-server.ts';
import { deviceResponse, type SimulatedDevice } from '../support/device.ts';
import { testOutputDir } from '../support/fixtures.ts';
import { generatedApp } from '../support/ios-app.ts';
import { certificateToPem, testPki } from '../support/pki.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

export const IPHONE_UA = 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1';

export interface SuperHarness {
  asc: FakeAppStoreConnect;
  team: FakeTeam;
  server: TestServer;
  api: Api;
  developerAccount: any;
  slug: string;
  task: any;
  close(): Promise<void>;
}

/** The team's developer account registration form (API key + distribution identity). */
export function accountForm(team: FakeTeam, overrides: Record<string, string | { name: string; data: Buffer }> = {}) {
  const pki = testPki();
  return {
    name: 'Test team',
    issuer_id: team.key.issuerId,
    key_id: team.key.keyId,
    p8: { name: `AuthKey_${team.key.keyId}.p8`, data: Buffer.from(team.key.privateKeyPem) },
    p12: { name: 'distribution.p12', data: pki.p12(pki.leaf, { password: 'secret' }) },
    password: 'secret',
    ...overrides,
  };
}

export async function startSuperHarness(name: string, options: { release?: boolean; deviceSigner?: DeviceBuildSigner } = {}): Promise<SuperHarness> {
  const { asc, team } = await startFakeAsc();
  // The request profile is signed like a TLS server would sign it: leaf + chain from the test PKI.
  const dir = testOutputDir('super', name);
  mkdirSync(dir, { recursive: true });
  const pki = testPki();
  writeFileSync(path.join(dir, 'chain.pem'), [pki.leaf.certificatePem, ...pki.leaf.chain.map((c) => certificateToPem(c))].join(''));
  writeFileSync(path.join(dir, 'key.pem'), pki.leaf.privateKeyPem);
  const server = await startTestServer({
    name,
    env: { SIGNET_APPLE_CA_DIR: pki.caDir, SIGNET_ASC_BASE_URL: asc.url, SIGNET_PROFILE_SIGNING_CERT: path.join(dir, 'chain.pem'), SIGNET_PROFILE_SIGNING_KEY: path.join(dir, 'key.pem') },
    overrides: { superSignature: { ascOptions: { baseDelayMs: 1, maxRetries: 2 }, ...(options.deviceSigner ? { deviceSigner: options.deviceSigner } : {}) } },
  });
  const api = new Api(server.url, server.key);
  const close = async () => {
    await server.close();
    await asc.close();
  };
  try {
    const created = await api.form('/v1/developer-accounts', accountForm(team));
    assert.equal(created.status, 200, JSON.stringify(created.body));
    const harness: SuperHarness = { asc, team, server, api, developerAccount: created.body.data, slug: '', task: null, close };
    if (options.release !== false) {
      const { task, distribution } = await superRelease(api, name);
      harness.task = task;
      harness.slug = new URL(distribution.url).pathname.split('/').pop()!;
    }
    return harness;
  } catch (error) {
    await close();
    throw error;
  }
}

/** Upload → super task → succeeded → its distribution. */
export async function superRelease(api: Api, name: string, ipa?: Buffer): Promise<{ task: any; distribution: any }> {
  const task = await superTask(api, name, ipa);
  assert.equal(task.status, 'succeeded', JSON.stringify(task.error));
  const distribution = await api.get(`/v1/tasks/${task.task_id}/distribution`);
  assert.equal(distribution.status, 200, JSON.stringify(distribution.body));
  return { task, distribution: distribution.body.data };
}

/** Upload → super task → its terminal state. `ipa`: the package (default: a generated app). */
export async function superTask(api: Api, name: string, ipa?: Buffer): Promise<any> {
  const bytes = ipa ?? generatedApp(`super-${name}`, { bundleId: 'com.signet.superapp' }).bytes;
  const upload = await api.upload('superapp.ipa', bytes);
  assert.equal(upload.status, 200, JSON.stringify(upload.body));
  const created = await api.post('/v1/tasks/create', { file_key: upload.body.data.file_key, cert_type: 'super' });
  assert.equal(created.status, 200, JSON.stringify(created.body));
  return waitTask(api, created.body.data.task_id);
}

export async function waitTask(api: Api, taskId: string): Promise<any> {
  const deadline = Date.now() + 120_000;
  for (;;) {
    const task = (await api.get(`/v1/tasks/${taskId}`)).body.data;
    if (!['pending', 'processing'].includes(task.status)) return task;
    assert.ok(Date.now() < deadline, `task ${taskId} did not finish`);
    await sleep(50);
  }
}

/** Safari downloads the request profile; returns the callback URL and challenge it carries. */
export async function downloadRequestProfile(h: SuperHarness): Promise<{ response: Response; bytes: Buffer; callback: URL; challenge: string }> {
  const response = await fetch(`${h.server.url}/d/${h.slug}/udid.mobileconfig`, { headers: { 'user-agent': IPHONE_UA } });
  const bytes = Buffer.from(await response.arrayBuffer());
  assert.equal(response.status, 200, bytes.toString());
  const payload = plistToJs(parsePlist(verifySignedData(bytes).content).value) as any;
  return { response, bytes, callback: new URL(payload.PayloadContent.URL), challenge: payload.PayloadContent.Challenge };
}

/** The iOS profile daemon POSTs the signed answer; returns the raw response (301 expected). */
export async function postDeviceAnswer(h: SuperHarness, callback: URL, body: Buffer): Promise<Response> {
  return fetch(`${h.server.url}${callback.pathname}${callback.search}`, {
    method: 'POST',
    body: new Uint8Array(body),
    headers: { 'content-type': 'application/pkcs7-signature' },
    redirect: 'manual',
  });
}

/** The whole device side: download, answer, follow to the enrollment; returns its id. */
export async function enrollDevice(h: SuperHarness, device: SimulatedDevice): Promise<string> {
  const { callback, challenge } = await downloadRequestProfile(h);
  const answer = await postDeviceAnswer(h, callback, deviceResponse(device, challenge));
  assert.equal(answer.status, 301, await answer.text());
  const location = new URL(answer.headers.get('location')!);
  assert.equal(location.pathname, `/d/${h.slug}`);
  return location.searchParams.get('enrollment')!;
}

/** Polls the enrollment until it is ready or failed. */
export async function waitEnrollment(h: SuperHarness, enrollmentId: string): Promise<any> {
  const deadline = Date.now() + 120_000;
  for (;;) {
    const response = await fetch(`${h.server.url}/d/${h.slug}/enrollments/${enrollmentId}`);
    const body = (await response.json()) as any;
    assert.equal(response.status, 200, JSON.stringify(body));
    if (body.data.state === 'ready' || body.data.state === 'failed') return body.data;
    assert.ok(Date.now() < deadline, `enrollment ${enrollmentId} stuck in ${body.data.state}`);
    await sleep(50);
  }
}

export async function page(h: SuperHarness, query = ''): Promise<string> {
  const response = await fetch(`${h.server.url}/d/${h.slug}${query}`, { headers: { 'user-agent': IPHONE_UA } });
  assert.equal(response.status, 200);
  return response.text();
}

/** Makes `ipa` the harness's release: a super task that succeeded, and its install page. */
export async function releaseApp(h: SuperHarness, name: string, ipa: Buffer): Promise<void> {
  const { task, distribution } = await superRelease(h.api, name, ipa);
  h.task = task;
  h.slug = new URL(distribution.url).pathname.split('/').pop()!;
}

/** The .ipa a ready enrollment's device installs, through the page's manifest like iOS. */
export async function deviceBuild(h: SuperHarness, enrollmentId: string): Promise<Buffer> {
  const ready = await page(h, `?enrollment=${enrollmentId}`);
  const link = /href="(itms-services:[^"]+)"/.exec(ready)?.[1]?.replace(/&amp;/g, '&');
  assert.ok(link, 'install button');
  const manifestUrl = new URL(decodeURIComponent(new URL(link.replace('itms-services://', 'https://x/')).searchParams.get('url')!));
  const manifest = plistToJs(parsePlist(Buffer.from(await (await fetch(`${h.server.url}${manifestUrl.pathname}${manifestUrl.search}`)).arrayBuffer())).value) as any;
  const asset = manifest.items[0].assets.find((a: any) => a.kind === 'software-package');
  const ipaUrl = new URL(asset.url);
  const response = await fetch(`${h.server.url}${ipaUrl.pathname}${ipaUrl.search}`);
  assert.equal(response.status, 200);
  return Buffer.from(await response.arrayBuffer());
}
