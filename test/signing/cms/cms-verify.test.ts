import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { FileSource } from '../../../src/signing/data-source.ts';
import { ZipReader } from '../../../src/signing/zip/index.ts';
import { parseSignedData, signCodeDirectory, signDetached, verifySignedData } from '../../../src/signing/cms/index.ts';
import { SigningError } from '../../../src/signing/errors.ts';
import { needsSharedFixtures, sharedFixture } from '../../support/fixtures.ts';
import { opensslCmsSign } from '../../support/openssl.ts';
import { testPki } from '../../support/pki.ts';

const fixture = (rel: string): Buffer => readFileSync(sharedFixture(rel) as string);

function cmsError(fn: () => unknown, pattern?: RegExp): void {
  assert.throws(fn, (e: unknown) => e instanceof SigningError && e.code === 'cms_invalid' && (!pattern || pattern.test(e.message)));
}

/**
 * Reads the CMS blob (slot 0x10000) and the slot-0 CodeDirectory of a thin 64-bit Mach-O:
 * LC_CODE_SIGNATURE (0x1d) → SuperBlob 0xfade0cc0 → BlobIndex { type, offset } (cs_blobs.h).
 */
function codeSignatureOf(macho: Buffer): { cms: Buffer; codeDirectory: Buffer } {
  assert.equal(macho.readUInt32LE(0), 0xfeedfacf, 'thin 64-bit Mach-O');
  const ncmds = macho.readUInt32LE(16);
  let offset = 32;
  for (let i = 0; i < ncmds; i++) {
    const cmd = macho.readUInt32LE(offset);
    if (cmd === 0x1d) {
      const dataoff = macho.readUInt32LE(offset + 8);
      const blobs = new Map<number, Buffer>();
      const count = macho.readUInt32BE(dataoff + 8);
      for (let b = 0; b < count; b++) {
        const type = macho.readUInt32BE(dataoff + 12 + b * 8);
        const at = dataoff + macho.readUInt32BE(dataoff + 16 + b * 8);
        blobs.set(type, macho.subarray(at, at + macho.readUInt32BE(at + 4)));
      }
      const wrapper = blobs.get(0x10000) as Buffer;
      return { cms: wrapper.subarray(8), codeDirectory: blobs.get(0) as Buffer };
    }
    offset += macho.readUInt32LE(offset + 4);
  }
  throw new Error('no LC_CODE_SIGNATURE');
}

describe('verifySignedData: openssl-made signatures', () => {
  const pki = testPki();
  const content = Buffer.from('the signed content\n');

  for (const signer of [pki.leaf, pki.ecLeaf, pki.androidRsa, pki.androidEc]) {
    for (const mode of ['detached', 'detached-noattr', 'attached'] as const) {
      it(`${signer.label}, ${mode}`, () => {
        const cms = opensslCmsSign(content, signer, { attached: mode === 'attached', noattr: mode === 'detached-noattr' });
        const verified = verifySignedData(cms, mode === 'attached' ? {} : { detachedContent: content });
        assert.deepEqual(verified.signerCertificate, signer.certificate);
        assert.deepEqual(verified.content, content);
        assert.equal(verified.signerCount, 1);
        if (mode === 'detached-noattr') assert.equal(verified.signedAttributes, undefined);
        else assert.deepEqual(verified.signedAttributes?.messageDigest, createHash('sha256').update(content).digest());
        if (mode !== 'attached') cmsError(() => verifySignedData(cms, { detachedContent: Buffer.from('other content\n') }));
      });
    }
  }

  it('chain validation against the given roots, with and without the intermediate', () => {
    const cms = opensslCmsSign(content, pki.leaf, { certfilePem: pki.intermediate.certificatePem });
    const trusted = verifySignedData(cms, { detachedContent: content, trustedRoots: [pki.root.certificate] });
    assert.equal(trusted.chain?.trusted, true);
    assert.deepEqual(trusted.chain?.path, [pki.leaf.certificate, pki.intermediate.certificate, pki.root.certificate]);
    const leafOnly = opensslCmsSign(content, pki.leaf);
    const untrusted = verifySignedData(leafOnly, { detachedContent: content, trustedRoots: [pki.root.certificate] });
    assert.equal(untrusted.chain?.trusted, false);
    assert.match(untrusted.chain?.error ?? '', /no issuer found/);
    const supplied = verifySignedData(leafOnly, { detachedContent: content, trustedRoots: [pki.root.certificate], intermediates: [pki.intermediate.certificate] });
    assert.equal(supplied.chain?.trusted, true);
    const otherRoot = verifySignedData(cms, { detachedContent: content, trustedRoots: [pki.androidRsa.certificate] });
    assert.equal(otherRoot.chain?.trusted, false);
  });

  it('an expired leaf fails chain validation at the given time but its signature still verifies', () => {
    const cms = opensslCmsSign(content, pki.expiredLeaf, { certfilePem: pki.intermediate.certificatePem });
    const now = verifySignedData(cms, { detachedContent: content, trustedRoots: [pki.root.certificate], at: new Date('2026-01-01T00:00:00Z') });
    assert.equal(now.chain?.trusted, false);
    assert.match(now.chain?.error ?? '', /not valid at/);
    const then = verifySignedData(cms, { detachedContent: content, trustedRoots: [pki.root.certificate], at: new Date('2020-06-01T00:00:00Z') });
    assert.equal(then.chain?.trusted, true);
  });
});

describe('verifySignedData: tampering and malformed input', () => {
  const pki = testPki();
  const content = Buffer.from('content');
  const good = signDetached({ content, digestAlgorithm: 'sha256', signer: pki.leaf, withSignedAttributes: true, signedAttributes: { signingTime: new Date('2026-01-01T00:00:00Z') } });

  it('a flipped signature bit, signed attribute or certificate byte is rejected', () => {
    const signatureAt = good.length - 10;
    const flip = (at: number): Buffer => {
      const copy = Buffer.from(good);
      copy[at] = (copy[at] as number) ^ 0x01;
      return copy;
    };
    cmsError(() => verifySignedData(flip(signatureAt), { detachedContent: content }), /does not verify/);
    const attrs = good.indexOf(Buffer.from('06092a864886f70d010905', 'hex')); // signingTime OID
    cmsError(() => verifySignedData(flip(attrs + 16), { detachedContent: content }));
  });

  it('detached signature without content, garbage, truncation and non-SignedData are cms_invalid', () => {
    cmsError(() => verifySignedData(good), /detached/);
    cmsError(() => verifySignedData(Buffer.from('not der at all')));
    for (const cut of [1, 20, good.length / 2, good.length - 1]) cmsError(() => verifySignedData(good.subarray(0, Math.floor(cut)), { detachedContent: content }));
    cmsError(() => verifySignedData(Buffer.from('300d06092a864886f70d010701a000', 'hex')));
  });

  it('a signer whose certificate is missing is rejected', () => {
    const cms = signDetached({ content, digestAlgorithm: 'sha256', signer: pki.leaf, certificates: [pki.intermediate.certificate], withSignedAttributes: false });
    cmsError(() => verifySignedData(cms, { detachedContent: content }), /signer certificate is not among/);
  });

  it('parses what it builds (round trip of every field)', () => {
    const parsed = parseSignedData(good);
    assert.equal(parsed.contentType, '1.2.840.113549.1.7.1');
    assert.deepEqual(parsed.certificates.sort(Buffer.compare), [pki.leaf.certificate, ...pki.leaf.chain].sort(Buffer.compare));
    const info = parsed.signerInfos[0];
    assert.equal(info?.version, 1);
    assert.equal(info?.digestAlgorithm, '2.16.840.1.101.3.4.2.1');
    assert.ok(info && 'issuer' in info.sid);
  });
});

describe('verifySignedData: real Apple and third-party material', needsSharedFixtures(), () => {
  const appleRoots = [fixture('ios/identities/apple-certs/AppleComputerRootCertificate.cer'), fixture('ios/identities/apple-certs/AppleIncRootCertificate.cer')];

  for (const name of ['AppStore_tools.fastlane.app.mobileprovision', 'test.mobileprovision']) {
    it(`Apple-signed profile ${name}: signature, plist content and chain to Apple's root`, () => {
      const verified = verifySignedData(fixture(`ios/fastlane/profiles/${name}`), { trustedRoots: appleRoots, at: new Date('2016-01-01T00:00:00Z') });
      assert.equal(verified.chain?.trusted, true, verified.chain?.error);
      assert.match(verified.content.toString(), /<key>DeveloperCertificates<\/key>/);
      const later = verifySignedData(fixture(`ios/fastlane/profiles/${name}`), { trustedRoots: appleRoots, at: new Date('2026-01-01T00:00:00Z') });
      assert.equal(later.chain?.trusted, false);
    });
  }

  it('isign test.mobileprovision: valid signature by an untrusted self-signed cert', () => {
    const verified = verifySignedData(fixture('ios/isign/credentials/test.mobileprovision'), { trustedRoots: appleRoots });
    assert.equal(verified.chain?.trusted, false);
    // isign signed it as S/MIME text, so the signed content has CRLF line ends.
    assert.equal(verified.content.toString().replace(/\r\n/g, '\n'), fixture('ios/isign/credentials/test.mobileprovision.plist').toString());
  });

  it('very-capable-app (Apple codesign 2018, BER): messageDigest over the SHA-1 CodeDirectory and CDHashes', async () => {
    const source = await FileSource.open(sharedFixture('ios/fastlane/ipas/very-capable-app.ipa') as string);
    let macho: Buffer;
    try {
      const zip = await ZipReader.open(source);
      macho = await zip.readEntry(zip.getEntry('Payload/very-capable-app.app/very-capable-app')!, 16 << 20);
    } finally {
      await source.close();
    }
    const { cms, codeDirectory } = codeSignatureOf(macho);
    const verified = verifySignedData(cms, { detachedContent: codeDirectory });
    assert.equal(verified.signatureAlgorithm, '1.2.840.113549.1.1.1');
    assert.deepEqual(verified.signedAttributes?.cdHashes?.[0], createHash('sha1').update(codeDirectory).digest());
    assert.equal(verified.signedAttributes?.cdHashes?.length, 2);
  });

  it('v1-only APKs: RSA SHA-1 block and the signed-attributes variant verify', async () => {
    for (const [apk, base] of [
      ['v1-only-with-rsa-pkcs1-sha1-1.2.840.113549.1.1.1-2048.apk', 'CERT'],
      ['v1-only-with-signed-attrs.apk', 'RSA-2048'],
    ] as const) {
      const source = await FileSource.open(sharedFixture(`android/apksig/signed/${apk}`) as string);
      try {
        const zip = await ZipReader.open(source);
        const sf = await zip.readEntry(zip.getEntry(`META-INF/${base}.SF`)!, 1 << 20);
        const block = await zip.readEntry(zip.getEntry(`META-INF/${base}.RSA`)!, 1 << 20);
        const verified = verifySignedData(block, { detachedContent: sf });
        assert.equal(verified.signerCount, 1);
      } finally {
        await source.close();
      }
    }
  });

  it('our own code signature verifies with the same code that verifies Apple\'s', () => {
    const pki = testPki();
    const cd = Buffer.from('cd');
    const cms = signCodeDirectory({ codeDirectory: cd, codeDirectoryHashes: [{ digestAlgorithm: 'sha256', hash: createHash('sha256').update(cd).digest() }], signer: pki.leaf, chain: pki.leaf.chain });
    assert.equal(verifySignedData(cms, { detachedContent: cd, trustedRoots: [pki.root.certificate] }).chain?.trusted, true);
  });
});
