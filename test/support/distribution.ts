// Releases for the install-link tests: a server whose test-only signers copy the input, real
// certificates from the test PKI, and packages built here (an IPA with an Apple CgBI icon, an
// APK), taken through upload → task → succeeded, so every distribution comes from the worker.
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { Api } from './api-client.ts';
import { tinyApk } from './app-packages.ts';
import { encodeCgbi } from './cgbi.ts';
import { testPki } from './pki.ts';
import { startTestServer, type TestServer } from './server.ts';
import { slowCopySigner } from './slow-signer.ts';
import { buildZip } from './zip-builder.ts';

export const ICON_SIZE = 120;

/** An IPA whose AppIcon60x60@2x.png is a CgBI PNG, as Xcode writes it. */
export function iconIpa(options: { bundleId?: string; version?: string; build?: string; name?: string; minimumOs?: string; deviceFamily?: number[] } = {}): Buffer {
  const rgba = Buffer.alloc(ICON_SIZE * ICON_SIZE * 4);
  for (let i = 0; i < ICON_SIZE * ICON_SIZE; i++) rgba.set([0x10, 0x60 + (i % 100), 0xd0, 0xff], i * 4);
  const plist = `<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<plist version="1.0"><dict>
<key>CFBundleIdentifier</key><string>${options.bundleId ?? 'com.example.installer'}</string>
<key>CFBundleDisplayName</key><string>${options.name ?? 'Installer Demo'}</string>
<key>CFBundleExecutable</key><string>Demo</string>
<key>CFBundleShortVersionString</key><string>${options.version ?? '3.1'}</string>
<key>CFBundleVersion</key><string>${options.build ?? '310'}</string>
<key>CFBundleIcons</key><dict><key>CFBundlePrimaryIcon</key><dict><key>CFBundleIconFiles</key><array><string>AppIcon60x60</string></array></dict></dict>
<key>MinimumOSVersion</key><string>${options.minimumOs ?? '15.0'}</string>
<key>UIDeviceFamily</key><array>${(options.deviceFamily ?? [1, 2]).map((f) => `<integer>${f}</integer>`).join('')}</array>
</dict></plist>
`;
  return buildZip([
    { name: 'Payload/Demo.app/Info.plist', data: plist, method: 8 },
    { name: 'Payload/Demo.app/Demo', data: Buffer.alloc(4096, 0xcf), method: 8 },
    { name: 'Payload/Demo.app/AppIcon60x60@2x.png', data: encodeCgbi(ICON_SIZE, ICON_SIZE, rgba), method: 0 },
  ]).bytes;
}

export interface DistributionFixture {
  server: TestServer;
  api: Api;
  /** Uploads `bytes`, runs a task to success and returns the task and its distribution. */
  release(fileName: string, bytes: Buffer): Promise<{ task: any; distribution: any }>;
  /** Uploads `bytes` and returns its file_key. */
  upload(fileName: string, bytes: Buffer): Promise<string>;
  /** Runs a task from an uploaded file_key to success and returns the task and its distribution. */
  publish(fileKey: string): Promise<{ task: any; distribution: any }>;
  /** PATCHes the link's settings and returns the new distribution. */
  configure(distributionId: string, settings: Record<string, unknown>): Promise<any>;
  close(): Promise<void>;
}

export async function distributionFixture(name: string, env: Record<string, string> = {}): Promise<DistributionFixture> {
  const server = await startTestServer({
    name,
    env,
    overrides: { signers: [slowCopySigner('ios', 0), slowCopySigner('android', 0)] },
  });
  const api = new Api(server.url, server.key);
  try {
    await addCertificates(api);
  } catch (error) {
    await server.close();
    throw error;
  }

  const upload = async (fileName: string, bytes: Buffer): Promise<string> => {
    const uploaded = await api.upload(fileName, bytes);
    assert.equal(uploaded.status, 200, JSON.stringify(uploaded.body));
    return uploaded.body.data.file_key;
  };
  const publish = async (fileKey: string) => {
    const created = await api.post('/v1/tasks/create', { file_key: fileKey, cert_type: 'enterprise' });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    const taskId = created.body.data.task_id;
    const deadline = Date.now() + 60_000;
    for (;;) {
      const task = (await api.get(`/v1/tasks/${taskId}`)).body.data;
      if (task.status === 'succeeded') {
        const distribution = await api.get(`/v1/tasks/${taskId}/distribution`);
        assert.equal(distribution.status, 200, JSON.stringify(distribution.body));
        return { task, distribution: distribution.body.data };
      }
      assert.ok(['pending', 'processing'].includes(task.status), `task ended ${task.status}: ${JSON.stringify(task.error)}`);
      assert.ok(Date.now() < deadline, `task ${taskId} did not finish`);
      await sleep(50);
    }
  };
  const configure = async (distributionId: string, settings: Record<string, unknown>) => {
    const patched = await api.request('PATCH', `/v1/distributions/${distributionId}`, { json: settings });
    assert.equal(patched.status, 200, JSON.stringify(patched.body));
    return patched.body.data;
  };
  const release = async (fileName: string, bytes: Buffer) => publish(await upload(fileName, bytes));
  return { server, api, release, upload, publish, configure, close: () => server.close() };
}

export { tinyApk };

/** The account's signing material: an Android key and an iOS enterprise identity with a wildcard profile. */
async function addCertificates(api: Api): Promise<void> {
  const pki = testPki();
  const android = await api.form('/v1/certificates', {
    kind: 'android',
    password: 'secret',
    file: { name: 'upload.p12', data: pki.p12(pki.androidRsa, { password: 'secret', alias: 'upload' }) },
  });
  assert.equal(android.status, 200, JSON.stringify(android.body));
  const ios = await api.form('/v1/certificates', {
    kind: 'ios_enterprise',
    password: 'secret',
    file: { name: 'enterprise.p12', data: pki.p12(pki.leaf, { password: 'secret', includeChain: true }) },
    profile: { name: 'enterprise.mobileprovision', data: pki.mobileprovision({ bundleId: '*' }) },
  });
  assert.equal(ios.status, 200, JSON.stringify(ios.body));
}
