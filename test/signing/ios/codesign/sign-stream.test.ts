// The streaming signer must produce exactly signMachO's bytes: built binaries of every shape the
// re-signer meets (no LC_CODE_SIGNATURE, linker-signed, identity-signed being re-signed, dylib,
// SHA-1 agility, 16 KiB pages), fed in chunk sizes that cut pages at every kind of boundary.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { identityCodeSigner } from '../../../../src/signing/ios/codesign/identity-signer.ts';
import { signMachO, type SignMachOOptions } from '../../../../src/signing/ios/codesign/sign.ts';
import { openMachOStream, streamingSigner, type MachOStreamInput } from '../../../../src/signing/ios/codesign/sign-stream.ts';
import { createHash } from 'node:crypto';
import { SigningError } from '../../../../src/signing/errors.ts';
import { plistDict, plistString } from '../../../../src/signing/plist/index.ts';
import { buildFatFile, buildThin, needsToolchain } from '../../../support/macho-build.ts';
import { testPki } from '../../../support/pki.ts';

function signer() {
  const pki = testPki();
  return identityCodeSigner({ ...pki.leaf, chain: [pki.intermediate.certificate, pki.root.certificate] }, { signingTime: new Date('2026-01-01T00:00:00Z') });
}

function input(bytes: Buffer, chunkSize: number): MachOStreamInput & { reads: number } {
  const source = {
    size: bytes.length,
    reads: 0,
    read: async (offset: number, length: number) => {
      source.reads++;
      assert.ok(offset >= 0 && offset + length <= bytes.length, 'read inside the file');
      return Buffer.from(bytes.subarray(offset, offset + length));
    },
    chunks: async function* () {
      for (let at = 0; at < bytes.length; at += chunkSize) yield Buffer.from(bytes.subarray(at, at + chunkSize));
    },
  };
  return source;
}

async function streamed(bytes: Buffer, options: SignMachOOptions, chunkSize: number): Promise<{ bytes: Buffer; cdhashes: Buffer[]; sha256: Buffer | undefined }> {
  const stream = await openMachOStream(input(bytes, chunkSize));
  assert.ok(stream !== undefined);
  const plan = streamingSigner(stream, options, { fileDigests: ['sha256'] });
  const chunks: Buffer[] = [];
  for await (const chunk of plan.chunks()) chunks.push(Buffer.from(chunk));
  const out = Buffer.concat(chunks);
  assert.equal(out.length, plan.size);
  return { bytes: out, cdhashes: plan.codeDirectories!.map((c) => c.digest), sha256: plan.digests?.get('sha256') };
}

async function assertSame(bytes: Buffer, options: SignMachOOptions, label: string): Promise<void> {
  const reference = signMachO(bytes, options);
  for (const chunkSize of [1 << 20, 4096, 4093, 16384 + 7, 777]) {
    const got = await streamed(bytes, options, chunkSize);
    assert.ok(got.bytes.equals(reference.bytes), `${label}, chunks of ${chunkSize}: streamed bytes differ from signMachO's`);
    assert.deepEqual(got.cdhashes, reference.slices[0]!.codeDirectories.map((c) => c.digest), label);
    assert.deepEqual(got.sha256, createHash('sha256').update(reference.bytes).digest(), label);
  }
}

const ENTITLEMENTS = plistDict({ 'application-identifier': plistString('SGNTEST123.com.example.built') });
const slots = { infoPlist: { sha1: Buffer.alloc(20, 1), sha256: Buffer.alloc(32, 2) }, codeResources: { sha1: Buffer.alloc(20, 3), sha256: Buffer.alloc(32, 4) } };

describe('streaming Mach-O signer', needsToolchain(), () => {
  it('matches signMachO byte for byte: executable without LC_CODE_SIGNATURE, with identity, entitlements and special slots', async () => {
    const bytes = buildThin({ arch: 'arm64', kind: 'executable' });
    await assertSame(bytes, { identifier: 'com.example.built' }, 'ad-hoc');
    await assertSame(bytes, { identifier: 'com.example.built', signer: signer(), entitlements: ENTITLEMENTS, isMainExecutable: true, specialSlotHashes: slots }, 'identity');
  });

  it('matches signMachO on a linker-signed executable, a re-signed one (identifier inherited) and a dylib', async () => {
    const linked = buildThin({ arch: 'arm64', kind: 'executable', linkerSigned: true });
    await assertSame(linked, { fileName: 'Built', signer: signer() }, 'linker-signed');
    const signed = signMachO(linked, { identifier: 'com.example.kept', signer: signer(), entitlements: ENTITLEMENTS }).bytes;
    await assertSame(signed, { signer: signer(), entitlements: ENTITLEMENTS }, 're-sign');
    await assertSame(buildThin({ arch: 'arm64', kind: 'dylib' }), { fileName: 'libBuilt.dylib', signer: signer() }, 'dylib');
  });

  it('matches signMachO with SHA-1 + SHA-256 directories (armv7, iOS 9) and 16 KiB pages', async () => {
    await assertSame(buildThin({ arch: 'armv7', kind: 'executable', minOS: '9.0' }), { identifier: 'com.example.old', signer: signer() }, 'armv7');
    await assertSame(buildThin({ arch: 'arm64', kind: 'executable' }), { identifier: 'com.example.pages', signer: signer(), pageSize: 16384 }, '16 KiB pages');
  });

  it('takes special-slot digests filled in while the code streams (beforeSignature)', async () => {
    const bytes = buildThin({ arch: 'arm64', kind: 'executable' });
    const options = { identifier: 'com.example.late', signer: signer(), isMainExecutable: true, specialSlotHashes: slots };
    const late = { sha1: new Uint8Array(20), sha256: new Uint8Array(32) };
    const stream = await openMachOStream(input(bytes, 4096));
    const plan = streamingSigner(stream!, { ...options, specialSlotHashes: { infoPlist: slots.infoPlist, codeResources: late } }, {
      beforeSignature: async () => {
        late.sha1 = slots.codeResources.sha1;
        late.sha256 = slots.codeResources.sha256;
      },
    });
    const chunks: Buffer[] = [];
    for await (const chunk of plan.chunks()) chunks.push(Buffer.from(chunk));
    assert.ok(Buffer.concat(chunks).equals(signMachO(bytes, options).bytes));
  });

  it('fixes the layout at the end from the old signature it streams past (layoutAtEnd): signMachO bytes, header last', async () => {
    const linked = buildThin({ arch: 'arm64', kind: 'executable', linkerSigned: true });
    const signed = signMachO(linked, { identifier: 'com.example.kept', signer: signer(), entitlements: ENTITLEMENTS }).bytes;
    for (const [label, pageSize] of [['4 KiB pages', undefined], ['16 KiB pages', 16384]] as const) {
      // The final options carry entitlements (the old signature's, say): a larger signature than the provisional layout's.
      const final: SignMachOOptions = { identifier: 'com.example.kept', signer: signer(), entitlements: ENTITLEMENTS, isMainExecutable: true, ...(pageSize ? { pageSize } : {}) };
      const reference = signMachO(signed, final);
      for (const chunkSize of [1 << 20, 4096, 4093, 777]) {
        const source = input(signed, chunkSize);
        const stream = await openMachOStream(source, { oldSignature: false });
        assert.equal(source.reads, 2, 'the old signature is not read ahead');
        let seen: Buffer | undefined;
        const plan = streamingSigner(stream!, { ...final, entitlements: undefined }, {
          layoutAtEnd: (standIn) => {
            seen = Buffer.from(standIn.subarray(standIn.length - 4096));
            return final;
          },
        });
        const chunks: Buffer[] = [];
        for await (const chunk of plan.chunks()) chunks.push(Buffer.from(chunk));
        const out = Buffer.concat(chunks);
        assert.ok(out.subarray(0, plan.headLength).equals(Buffer.alloc(plan.headLength)), `${label}: the header streams as zeros`);
        plan.head().copy(out);
        assert.ok(out.equals(reference.bytes), `${label}, chunks of ${chunkSize}: bytes differ from signMachO's`);
        assert.equal(plan.size, reference.size);
        assert.deepEqual(plan.codeDirectories!.map((c) => c.digest), reference.slices[0]!.codeDirectories.map((c) => c.digest), label);
        assert.ok(seen!.equals(signed.subarray(signed.length - 4096)), `${label}: the stand-in holds the old signature at the end`);
      }
    }
    const stream = await openMachOStream(input(signed, 4096), { oldSignature: false });
    assert.throws(() => streamingSigner(stream!, { identifier: 'x' }, { fileDigests: ['sha256'], layoutAtEnd: () => ({ identifier: 'x' }) }), /whole-file digests/);
  });

  it('reads only the header and the old signature up front, and leaves fat files to signMachO', async () => {
    const linked = buildThin({ arch: 'arm64', kind: 'executable', linkerSigned: true });
    const source = input(linked, 4096);
    const stream = await openMachOStream(source);
    assert.equal(source.reads, 3); // magic + sizeofcmds, load commands, old signature
    assert.equal(streamingSigner(stream!, { identifier: 'com.example.built' }).size, signMachO(linked, { identifier: 'com.example.built' }).size);
    const fat = buildFatFile([linked, buildThin({ arch: 'x86_64', kind: 'executable' })]);
    assert.equal(await openMachOStream(input(fat, 4096)), undefined);
  });

  it('fails with macho_invalid when the stream is shorter than the file, and refuses non-Mach-O input', async () => {
    const bytes = buildThin({ arch: 'arm64', kind: 'executable' });
    const source = input(bytes, 4096);
    const short = await openMachOStream({ ...source, chunks: async function* () { yield bytes.subarray(0, bytes.length - 100); } });
    const plan = streamingSigner(short!, { identifier: 'com.example.short' });
    await assert.rejects(async () => { for await (const _ of plan.chunks()) { /* drain */ } }, (e: unknown) => e instanceof SigningError && e.code === 'macho_invalid');
    await assert.rejects(openMachOStream(input(Buffer.from('not a mach-o file at all, just text'), 64)), (e: unknown) => e instanceof SigningError && e.code === 'macho_invalid');
  });
});
