// Incremental per-device re-signing against the full re-signer: a prepared build (template
// profile) plus signForProfile must give, file for file, what a whole re-sign with the device's
// profile gives (same signing time: RSA signatures are deterministic), verify with `signet verify`'s
// checks, and pass Info-ZIP's own archive test (data descriptor, split deflate stream).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { before, describe, it } from 'node:test';
import { loadIdentity, type Identity } from '../../../../src/signing/cms/index.ts';
import { MemorySink } from '../../../../src/signing/data-sink.ts';
import { BufferSource } from '../../../../src/signing/data-source.ts';
import { SigningError } from '../../../../src/signing/errors.ts';
import { parseProvisioningProfile, type ProvisioningProfile } from '../../../../src/signing/ios/profile/index.ts';
import { buildIncrementalTemplate, signForProfile, type IncrementalTemplate } from '../../../../src/signing/ios/resign-incremental/index.ts';
import { resignIpa } from '../../../../src/signing/ios/resign/index.ts';
import { allProblems, verifyIpa } from '../../../../src/signing/ios/verify-ipa/index.ts';
import { ZipReader } from '../../../../src/signing/zip/index.ts';
import { testOutputDir } from '../../../support/fixtures.ts';
import { generatedApp, pythonSealCheck } from '../../../support/ios-app.ts';
import { needsToolchain } from '../../../support/macho-build.ts';
import { testPki } from '../../../support/pki.ts';

const signingTime = new Date(Date.UTC(2026, 0, 2, 3, 4, 5));

async function resign(input: Buffer, identity: Identity, profile: ProvisioningProfile | ProvisioningProfile[]): Promise<Buffer> {
  const sink = new MemorySink();
  await resignIpa(new BufferSource(input), sink, { identity, profiles: Array.isArray(profile) ? profile : [profile], signingTime, workers: 0 });
  return sink.toBuffer();
}

async function files(ipa: Buffer): Promise<Map<string, Buffer>> {
  const zip = await ZipReader.open(new BufferSource(ipa));
  const out = new Map<string, Buffer>();
  for (const entry of zip.entries) if (!entry.isDirectory) out.set(entry.name, await zip.readEntry(entry, 1 << 30));
  return out;
}

describe('incremental per-device re-signing', needsToolchain(), () => {
  const pki = testPki();
  let identity: Identity;
  let app: ReturnType<typeof generatedApp>;
  let template: IncrementalTemplate;
  let shared: Buffer;
  const device = (udids: string[], extra: Parameters<typeof pki.mobileprovision>[0] = { bundleId: '*' }) => parseProvisioningProfile(pki.mobileprovision({ ...extra, devices: udids }));

  before(async () => {
    identity = await loadIdentity(pki.p12(pki.leaf, { password: 'x', includeChain: true }), { password: 'x' });
    app = generatedApp('incremental');
    const prepared = await resign(app.bytes, identity, device(['00000000-0000000000000000']));
    const sink = new MemorySink();
    template = await buildIncrementalTemplate(new BufferSource(prepared), sink);
    shared = sink.toBuffer();
  });

  it('gives, file for file, what a full re-sign with the device profile gives', async () => {
    // Several devices: from the second on, the seal is patched rather than rendered (seal-patch.ts).
    for (const udid of ['00008120-0011223344556677', '00008120-8899AABBCCDDEEFF', '00008030-0000111122223333']) {
      const profile = device([udid]);
      const part = signForProfile(template, { identity, profile, signingTime });
      const ipa = Buffer.concat([shared, ...part.chunks]);
      assert.equal(ipa.length, part.size);
      const full = await resign(app.bytes, identity, profile);
      const [mine, theirs] = await Promise.all([files(ipa), files(full)]);
      assert.deepEqual([...mine.keys()].sort(), [...theirs.keys()].sort());
      for (const [name, bytes] of theirs) assert.ok(mine.get(name)!.equals(bytes), `${name} differs from the full re-sign (device ${udid})`);
    }
  });

  it('verifies, and passes Info-ZIP’s archive test and an independent seal check', async () => {
    const profile = device(['00008120-8899AABBCCDDEEFF']);
    const part = signForProfile(template, { identity, profile });
    const ipa = Buffer.concat([shared, ...part.chunks]);
    const report = await verifyIpa(new BufferSource(ipa));
    assert.equal(report.verified, true, allProblems(report).join('\n'));
    const file = path.join(testOutputDir('ios-app'), 'incremental-device.ipa');
    writeFileSync(file, ipa);
    const unzip = spawnSync('unzip', ['-tq', file], { encoding: 'utf8' });
    assert.equal(unzip.status, 0, unzip.stdout + unzip.stderr);
    const seal = pythonSealCheck(file, 'incremental-device');
    assert.deepEqual(seal.problems, []);
    const zip = await ZipReader.open(new BufferSource(ipa));
    for (const dir of ['Payload/Signet.app/', 'Payload/Signet.app/PlugIns/Widget.appex/']) {
      const embedded = parseProvisioningProfile(await zip.readEntry(zip.getEntry(`${dir}embedded.mobileprovision`)!));
      assert.deepEqual(embedded.devices, ['00008120-8899AABBCCDDEEFF']);
    }
  });

  it('keeps the shared file the same for every device and rewrites only a small tail', () => {
    const a = signForProfile(template, { identity, profile: device(['00008120-0000000000000001']) });
    const b = signForProfile(template, { identity, profile: device(['00008120-0000000000000002', '00008120-0000000000000003']) });
    const tail = (part: typeof a) => part.chunks.reduce((n, c) => n + c.length, 0);
    assert.equal(tail(a), a.size - shared.length);
    assert.equal(tail(b), b.size - shared.length);
    // The main executable's bytes before its signature live in the shared file, not in the tail.
    const main = template.bundles.at(-1)!.executable;
    assert.equal(main.compressedPrefix, null);
    assert.ok(main.sharedHeaderOffset !== null && main.sharedHeaderOffset + main.compressedPrefixLength <= shared.length);
    assert.ok(tail(a) < main.size, `tail ${tail(a)} bytes, main executable ${main.size}`);
    assert.notDeepEqual(a.cdhashes, b.cdhashes);
  });

  it('refuses profiles a full re-sign would refuse, and ones that change entitlements', () => {
    const refuse = (profile: ProvisioningProfile, code: string) =>
      assert.throws(() => signForProfile(template, { identity, profile }), (error: unknown) => error instanceof SigningError && error.code === code);
    refuse(device(['00008120-0000000000000004'], { bundleId: '*', certificate: pki.ecLeaf.certificate }), 'profile_certificate_mismatch');
    refuse(device(['00008120-0000000000000005'], { bundleId: 'com.other.app' }), 'bundle_id_mismatch');
    refuse(device(['00008120-0000000000000006'], { bundleId: '*', teamId: 'OTHERTEAM1' }), 'incremental_template_mismatch');
    const other = { ...identity, certificate: pki.expiredLeaf.certificate };
    assert.throws(() => signForProfile(template, { identity: other, profile: device(['00008120-0000000000000007']) }), (error: unknown) => error instanceof SigningError && error.code === 'incremental_template_mismatch');
  });

  it('takes one profile per App ID (the app and its extension explicit), as a full re-sign does', async () => {
    const perBundle = (udids: string[]) => [device(udids, { bundleId: app.bundleId, apsEnvironment: 'production' }), device(udids, { bundleId: app.extensionId })];
    const prepared = await resign(app.bytes, identity, perBundle(['00000000-0000000000000000']));
    const sink = new MemorySink();
    const explicit = await buildIncrementalTemplate(new BufferSource(prepared), sink);
    const profiles = perBundle(['00008120-00112233445566AA']);
    const part = signForProfile(explicit, { identity, profile: profiles, signingTime });
    const ipa = Buffer.concat([sink.toBuffer(), ...part.chunks]);
    const full = await resign(app.bytes, identity, profiles);
    const [mine, theirs] = await Promise.all([files(ipa), files(full)]);
    for (const [name, bytes] of theirs) assert.ok(mine.get(name)!.equals(bytes), `${name} differs from the full re-sign`);
    assert.ok(mine.get('Payload/Signet.app/PlugIns/Widget.appex/embedded.mobileprovision')!.equals(profiles[1]!.bytes), 'the extension embeds its own profile');
    assert.throws(() => signForProfile(explicit, { identity, profile: [profiles[0]!] }), (error: unknown) => error instanceof SigningError && error.code === 'bundle_id_mismatch');
  });
});
