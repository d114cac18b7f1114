// Super signature end to end: upload → super task → install page → signed request profile →
// simulated device answer → 301 → device registered at the App Store Connect fake → ad-hoc
// profile with the UDID → manifest → .ipa whose embedded profile lists the UDID and whose
// signature `signet verify` accepts.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { parseProvisioningProfile } from '../../src/signing/ios/profile/index.ts';
import { parsePlist, plistToJs } from '../../src/signing/plist/index.ts';
import { ZipReader } from '../../src/signing/zip/index.ts';
import { BufferSource } from '../../src/signing/data-source.ts';
import { readCaDirectory } from '../../src/signing/cms/ca-directory.ts';
import { IncrementalBuilds } from '../../src/super-signature/incremental-builds.ts';
import { resigningDeviceSigner } from '../../src/super-signature/resigning-device-signer.ts';
import { needsAscSpec } from '../support/asc-server.ts';
import { newDevice } from '../support/device.ts';
import { repoRoot, testOutputDir } from '../support/fixtures.ts';
import { opensslCmsVerify } from '../support/openssl.ts';
import { certificateToPem, testPki } from '../support/pki.ts';
import { strictIpaCheck } from '../support/strict-ipa.ts';
import { downloadRequestProfile, enrollDevice, page, startSuperHarness, waitEnrollment, type SuperHarness } from './harness.ts';

describe('super signature end to end', needsAscSpec(), () => {
  let h: SuperHarness;
  before(async () => {
    h = await startSuperHarness('e2e');
  });
  after(() => h?.close());

  it('registers the developer account with Apple’s devices and slots', async () => {
    assert.equal(h.developerAccount.health, 'ok');
    assert.equal(h.developerAccount.usable, true);
    assert.equal(h.developerAccount.team_id, testPki().teamId);
    assert.deepEqual(h.developerAccount.slots.iphone, { used: 0, limit: 100, free: 100 });
  });

  it('the super task prepared a build signed by the account (not installable: template profile)', async () => {
    assert.equal(h.task.cert_type, 'super');
    assert.match(h.task.verification.join(' '), /template profile/);
  });

  it('takes a device from the page to its own verified build', async () => {
    const first = await page(h);
    assert.match(first, /id="register"/, 'an iPhone visitor is offered device registration');
    assert.doesNotMatch(first, /itms-services/, 'no install link before the device is known');

    const profile = await downloadRequestProfile(h);
    assert.equal(profile.response.headers.get('content-type'), 'application/x-apple-aspen-config');
    const oracle = opensslCmsVerify(profile.bytes, { caPem: certificateToPem(testPki().root.certificate) });
    assert.equal(oracle.status, 0, `the request profile verifies like iOS "Verified": ${oracle.stderr}`);

    const device = newDevice();
    const enrollment = await enrollDevice(h, device);
    const status = await waitEnrollment(h, enrollment);
    assert.equal(status.state, 'ready', JSON.stringify(status.error));

    // Apple's side: the device is registered and the newest profile provisions it.
    assert.ok(h.team.devices.some((d) => d.udid === device.udid && d.status === 'ENABLED'));
    const appleProfile = h.team.profiles.at(-1)!;
    const appleDevice = h.team.devices.find((d) => d.udid === device.udid)!;
    assert.ok(appleProfile.deviceIds.includes(appleDevice.id));
    assert.deepEqual(h.asc.violations, [], 'every App Store Connect request matched the OpenAPI spec');

    // The page turns into an install button for this device's build.
    const ready = await page(h, `?enrollment=${enrollment}`);
    const link = /href="(itms-services:[^"]+)"/.exec(ready)?.[1]?.replace(/&amp;/g, '&');
    assert.ok(link, 'install button');
    assert.match(ready, /Developer Mode/);
    const manifestUrl = new URL(decodeURIComponent(new URL(link.replace('itms-services://', 'https://x/')).searchParams.get('url')!));
    const manifest = plistToJs(parsePlist(Buffer.from(await (await fetch(`${h.server.url}${manifestUrl.pathname}${manifestUrl.search}`)).arrayBuffer())).value) as any;
    const asset = manifest.items[0].assets.find((a: any) => a.kind === 'software-package');
    assert.equal(manifest.items[0].metadata['bundle-identifier'], 'com.signet.superapp');
    const ipaUrl = new URL(asset.url);
    const ipaResponse = await fetch(`${h.server.url}${ipaUrl.pathname}${ipaUrl.search}`);
    assert.equal(ipaResponse.status, 200);
    const ipa = Buffer.from(await ipaResponse.arrayBuffer());
    assert.equal(ipa.length, status.build.size);

    const zip = await ZipReader.open(new BufferSource(ipa));
    const embedded = parseProvisioningProfile(await zip.readEntry(zip.getEntry('Payload/Signet.app/embedded.mobileprovision')!));
    assert.deepEqual(embedded.devices, [device.udid]);
    assert.equal(embedded.type, 'ad-hoc');
    assert.equal(embedded.uuid, appleProfile.uuid);

    const file = path.join(testOutputDir('super'), `e2e-${enrollment}.ipa`);
    writeFileSync(file, ipa);
    const verify = spawnSync(process.execPath, [path.join(repoRoot, 'src/main/cli.ts'), 'verify', file], { encoding: 'utf8' });
    assert.equal(verify.status, 0, `signet verify: ${verify.stdout}${verify.stderr}`);
    // The account's .p12 holds the leaf alone (harness.ts: `openssl pkcs12 -export` without the
    // chain); the chain came from SIGNET_APPLE_CA_DIR. An independent verifier checks every code
    // signature's CMS up to the root with `openssl cms -verify`.
    const strict = strictIpaCheck(file, certificateToPem(testPki().root.certificate), `super-e2e-${enrollment}`);
    assert.deepEqual(strict.problems, []);
    const unzip = spawnSync('unzip', ['-tq', file], { encoding: 'utf8' });
    assert.equal(unzip.status, 0, `Info-ZIP: ${unzip.stdout}${unzip.stderr}`);

    // It was built incrementally: a shared part stored once per (task, account) plus this device's part.
    const build = await h.server.service.db.repos.superSignature.findBuild(status.build.id);
    assert.ok(build?.shared_blob_key && build.shared_size! > 0 && build.shared_size! < ipa.length, 'incremental build');
    // A range across the shared/device boundary reads the same bytes as the whole download.
    const from = build.shared_size! - 100;
    const ranged = await fetch(`${h.server.url}${ipaUrl.pathname}${ipaUrl.search}`, { headers: { range: `bytes=${from}-${from + 299}` } });
    assert.equal(ranged.status, 206);
    assert.ok(Buffer.from(await ranged.arrayBuffer()).equals(ipa.subarray(from, from + 300)));

    // Without the enrollment, a super link has nothing to install.
    const anonymous = await fetch(`${h.server.url}/d/${h.slug}/manifest.plist`);
    assert.equal(anonymous.status, 409);
  });

  it('after a restart, the in-memory template is rebuilt and matches the stored shared part', async () => {
    const { db, blobs } = h.server.service;
    const [template] = await db.kysely.selectFrom('super_templates').selectAll().execute();
    assert.ok(template, 'the first device stored a shared part');
    const task = (await db.repos.tasks.find(null, template.task_id))!;
    const account = (await db.repos.developerAccounts.findById(template.developer_account_id))!;
    const profile = (await db.kysely.selectFrom('super_profiles').selectAll().where('superseded_at', 'is', null).executeTakeFirst())!;
    const fresh = new IncrementalBuilds({
      db,
      blobs,
      engine: resigningDeviceSigner({ settings: { caCertificates: await readCaDirectory(testPki().caDir) } }),
      workDir: path.join(h.server.dataDir, 'tmp', 'restart'),
      logger: { info() {}, warn() {}, error() {}, debug() {} } as never,
    });
    const plan = JSON.parse((await db.repos.superSignature.findPlan(task.id))!);
    assert.equal(plan.mode, 'wildcard', 'an app that needs no capability keeps the wildcard App ID');
    const build = await fresh.build(task, account, plan, [Buffer.from(profile.content_b64, 'base64')], 'sbd_restartcheck0000000000');
    assert.ok(build);
    assert.equal(build.sharedKey, template.shared_blob_key);
    assert.equal(build.sharedSize, template.shared_size);
    const shared = await blobs.stat(template.shared_blob_key);
    assert.equal(shared?.size, template.shared_size);
  });
});
