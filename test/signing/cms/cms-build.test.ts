import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { FileSource } from '../../../src/signing/data-source.ts';
import { ZipReader } from '../../../src/signing/zip/index.ts';
import {
  estimateCodeSignatureSize,
  estimateSignatureSize,
  loadIdentity,
  maxSignatureLength,
  parseSignedData,
  signAttached,
  signCodeDirectory,
  signDetached,
  signJarSignatureBlock,
  verifySignedData,
  type CodeDirectoryHash,
  type Identity,
} from '../../../src/signing/cms/index.ts';
import { SigningError } from '../../../src/signing/errors.ts';
import { needsSharedFixtures, sharedFixture } from '../../support/fixtures.ts';
import { openssl, opensslCmsVerify, scratchFile } from '../../support/openssl.ts';
import { testPki } from '../../support/pki.ts';

async function metaInf(apk: string): Promise<Map<string, Buffer>> {
  const source = await FileSource.open(apk);
  try {
    const zip = await ZipReader.open(source);
    const out = new Map<string, Buffer>();
    for (const entry of zip.entries) {
      if (/^META-INF\/[^/]+\.(SF|RSA|EC|DSA)$/.test(entry.name)) out.set(entry.name, await zip.readEntry(entry, 1 << 20));
    }
    return out;
  } finally {
    await source.close();
  }
}

async function aospIdentity(name: string): Promise<Identity> {
  const dir = 'android/keys/apksig/';
  return loadIdentity(readFileSync(sharedFixture(`${dir}${name}.pk8`) as string), { certificate: readFileSync(sharedFixture(`${dir}${name}.x509.pem`) as string) });
}

describe('Android v1 signature block (byte-identical to apksig)', needsSharedFixtures(), () => {
  const goldens = [
    'golden/golden-rsa-out.apk',
    'golden/golden-rsa-minSdkVersion-1-out.apk',
    'golden/golden-rsa-minSdkVersion-18-out.apk',
    'golden/golden-rsa-minSdkVersion-24-out.apk',
    'golden/golden-aligned-v1-out.apk',
    'golden/golden-unaligned-v1-out.apk',
    'golden/golden-aligned-v1v2v3-out.apk',
    'golden/golden-unaligned-v1v2v3-out.apk',
  ];
  for (const golden of goldens) {
    it(`${golden}: same bytes from the same .SF and key`, async () => {
      const files = await metaInf(sharedFixture(`android/apksig/${golden}`) as string);
      const sf = files.get('META-INF/RSA-2048.SF');
      const block = files.get('META-INF/RSA-2048.RSA');
      assert.ok(sf && block, 'golden has META-INF/RSA-2048.SF and .RSA');
      // apksig picks the v1 digest from the .SF's own digest lines; read it the same way.
      const digestAlgorithm = sf.toString('latin1').includes('SHA-256-Digest') ? 'sha256' : 'sha1';
      const ours = signJarSignatureBlock({ signatureFile: sf, digestAlgorithm, signer: await aospIdentity('rsa-2048') });
      assert.equal(ours.toString('hex'), block.toString('hex'));
      assert.equal(estimateSignatureSize({ digestAlgorithm, signer: await aospIdentity('rsa-2048'), withSignedAttributes: false }), block.length);
    });
  }

  it('EC v1 block matches apksig structure byte for byte apart from the (randomised) ECDSA value', async () => {
    const files = await metaInf(sharedFixture('android/apksig/signed/v1-only-with-ecdsa-sha256-1.2.840.10045.2.1-p256.apk') as string);
    const sf = files.get('META-INF/CERT.SF') as Buffer;
    const golden = files.get('META-INF/CERT.EC') as Buffer;
    const signer = await aospIdentity('ec-p256');
    const ours = signJarSignatureBlock({ signatureFile: sf, digestAlgorithm: 'sha256', signer });
    const a = parseSignedData(ours);
    const b = parseSignedData(golden);
    const strip = (p: typeof a) => ({ ...p, signerInfos: p.signerInfos.map((s) => ({ ...s, signature: Buffer.alloc(0) })) });
    assert.deepEqual(strip(a), strip(b));
    // Same prefix up to the signature OCTET STRING, modulo the enclosing length bytes.
    assert.equal(a.signerInfos[0]?.signatureAlgorithm, '1.2.840.10045.2.1');
    assert.ok(verifySignedData(golden, { detachedContent: sf }).signerCertificate.equals(signer.certificate));
    assert.ok(verifySignedData(ours, { detachedContent: sf }).signerCertificate.equals(signer.certificate));
    assert.ok(ours.length <= estimateSignatureSize({ digestAlgorithm: 'sha256', signer, withSignedAttributes: false, ecSignatureAlgorithm: 'ec-public-key' }));
  });

  it('refuses ECDSA with SHA-1 as apksig does', async () => {
    assert.throws(() => signJarSignatureBlock({ signatureFile: Buffer.from('x'), digestAlgorithm: 'sha1', signer: testPki().androidEc }), (e: unknown) => e instanceof SigningError && e.code === 'key_type_unsupported');
  });
});

describe('certificate SET OF ordering', () => {
  it('sorts DER by default (apksig) and keeps the given order on request (Apple)', () => {
    const pki = testPki();
    const certs = [pki.leaf.certificate, pki.intermediate.certificate, pki.root.certificate];
    const sorted = parseSignedData(signDetached({ content: Buffer.from('x'), digestAlgorithm: 'sha256', signer: pki.leaf, certificates: certs, withSignedAttributes: false }));
    assert.deepEqual(sorted.certificates, [...certs].sort(Buffer.compare));
    const given = parseSignedData(signDetached({ content: Buffer.from('x'), digestAlgorithm: 'sha256', signer: pki.leaf, certificates: certs, certificateOrder: 'given', withSignedAttributes: false }));
    assert.deepEqual(given.certificates, certs);
  });
});

describe('Apple code signature CMS', () => {
  const pki = testPki();
  const codeDirectory = Buffer.concat([Buffer.from('fade0c02', 'hex'), Buffer.alloc(200, 7)]);
  const hashes: CodeDirectoryHash[] = [
    { digestAlgorithm: 'sha1', hash: createHash('sha1').update(codeDirectory).digest() },
    { digestAlgorithm: 'sha256', hash: createHash('sha256').update(Buffer.from('alternate CD')).digest() },
  ];
  const signingTime = new Date('2026-03-04T05:06:07Z');
  const caPem = pki.root.certificatePem;

  for (const signer of [pki.leaf, pki.ecLeaf]) {
    it(`${signer.label}: attributes, order, certificates, and openssl verifies it with the chain`, () => {
      const cms = signCodeDirectory({ codeDirectory, codeDirectoryHashes: hashes, signer, chain: signer.chain, signingTime });
      const parsed = parseSignedData(cms);
      assert.equal(parsed.version, 1);
      assert.deepEqual(parsed.digestAlgorithms, ['2.16.840.1.101.3.4.2.1']);
      assert.equal(parsed.content, undefined, 'detached');
      // Apple's order: intermediate, root, leaf.
      assert.deepEqual(parsed.certificates, [pki.intermediate.certificate, pki.root.certificate, signer.certificate]);
      const info = parsed.signerInfos[0];
      assert.ok(info);
      assert.deepEqual(info.signedAttributes?.map((a) => a.type), ['1.2.840.113549.1.9.3', '1.2.840.113549.1.9.5', '1.2.840.113549.1.9.4', '1.2.840.113635.100.9.2', '1.2.840.113635.100.9.1']);
      assert.equal(info.signatureAlgorithm, signer.keyType === 'rsa' ? '1.2.840.113549.1.1.1' : '1.2.840.10045.4.3.2');

      const verified = verifySignedData(cms, { detachedContent: codeDirectory, trustedRoots: [pki.root.certificate] });
      assert.equal(verified.chain?.trusted, true);
      assert.deepEqual(verified.signedAttributes?.messageDigest, createHash('sha256').update(codeDirectory).digest());
      assert.deepEqual(verified.signedAttributes?.cdHashes, hashes.map((h) => h.hash.subarray(0, 20)));
      assert.deepEqual(verified.signedAttributes?.cdHashes2, hashes);
      assert.deepEqual(verified.signedAttributes?.signingTime, signingTime);

      const withChain = opensslCmsVerify(cms, { content: codeDirectory, caPem });
      assert.equal(withChain.status, 0, withChain.stderr);
      const tampered = opensslCmsVerify(cms, { content: Buffer.concat([codeDirectory, Buffer.from([0])]) , caPem: null });
      assert.notEqual(tampered.status, 0);
    });
  }

  it('the CDHashes attribute is Apple\'s exact plist text', () => {
    const cms = signCodeDirectory({ codeDirectory, codeDirectoryHashes: hashes, signer: pki.leaf, chain: pki.leaf.chain, signingTime });
    const attribute = parseSignedData(cms).signerInfos[0]?.signedAttributes?.find((a) => a.type === '1.2.840.113635.100.9.1');
    const plist = attribute?.values[0]?.subarray(2 + ((attribute.values[0][1] ?? 0) & 0x80 ? (attribute.values[0][1] ?? 0) & 0x7f : 0));
    const b64 = hashes.map((h) => `\t\t<data>\n\t\t${h.hash.subarray(0, 20).toString('base64')}\n\t\t</data>\n`).join('');
    const expected = `<?xml version="1.0" encoding="UTF-8"?>\n<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">\n<plist version="1.0">\n<dict>\n\t<key>cdhashes</key>\n\t<array>\n${b64}\t</array>\n</dict>\n</plist>\n`;
    assert.equal(plist?.toString(), expected);
  });

  it('is deterministic for a fixed signing time (RSA)', () => {
    const a = signCodeDirectory({ codeDirectory, codeDirectoryHashes: hashes, signer: pki.leaf, chain: pki.leaf.chain, signingTime });
    const b = signCodeDirectory({ codeDirectory, codeDirectoryHashes: hashes, signer: pki.leaf, chain: pki.leaf.chain, signingTime });
    assert.deepEqual(a, b);
  });

  it('estimateCodeSignatureSize is exact for RSA and an upper bound within 3 bytes for ECDSA', () => {
    const rsaSize = estimateCodeSignatureSize({ codeDirectoryHashes: hashes, signer: pki.leaf, chain: pki.leaf.chain, signingTime });
    for (let i = 0; i < 5; i++) {
      const cd = Buffer.from(`cd ${i}`);
      assert.equal(signCodeDirectory({ codeDirectory: cd, codeDirectoryHashes: hashes, signer: pki.leaf, chain: pki.leaf.chain, signingTime }).length, rsaSize);
    }
    const ecSize = estimateCodeSignatureSize({ codeDirectoryHashes: hashes, signer: pki.ecLeaf, chain: pki.ecLeaf.chain, signingTime });
    const sizes = new Set<number>();
    for (let i = 0; i < 40; i++) {
      const length = signCodeDirectory({ codeDirectory: Buffer.from(`cd ${i}`), codeDirectoryHashes: hashes, signer: pki.ecLeaf, chain: pki.ecLeaf.chain, signingTime }).length;
      sizes.add(length);
      assert.ok(length <= ecSize && length >= ecSize - 3, `${length} vs ${ecSize}`);
    }
    assert.equal(maxSignatureLength(pki.ecLeaf), 72);
    assert.equal(maxSignatureLength(pki.leaf), 256);
  });
});

describe('generic SignedData against the openssl oracle', () => {
  const pki = testPki();
  const content = Buffer.from('attached or detached content\n');

  it('attached (profile-style) signature: openssl verifies and extracts the content', () => {
    const cms = signAttached({ content, digestAlgorithm: 'sha256', signer: pki.intermediate, withSignedAttributes: true, signedAttributes: { signingTime: new Date('2026-01-01T00:00:00Z'), order: 'der' } });
    const result = openssl(['cms', '-verify', '-binary', '-inform', 'DER', '-in', scratchFile('att.der', cms), '-CAfile', scratchFile('root.pem', pki.root.certificatePem), '-purpose', 'any']);
    assert.equal(result.status, 0, result.stderr);
    assert.deepEqual(result.stdout, content);
    assert.deepEqual(verifySignedData(cms).content, content);
  });

  for (const digestAlgorithm of ['sha1', 'sha256', 'sha384', 'sha512'] as const) {
    it(`detached without attributes, ${digestAlgorithm}, RSA and EC`, () => {
      for (const signer of [pki.androidRsa, pki.androidEc]) {
        const cms = signDetached({ content, digestAlgorithm, signer, withSignedAttributes: false });
        const result = opensslCmsVerify(cms, { content, caPem: signer.certificatePem });
        assert.equal(result.status, 0, result.stderr);
        assert.equal(estimateSignatureSize({ digestAlgorithm, signer, withSignedAttributes: false }) >= cms.length, true);
      }
    });
  }

  it('missing content is a cms_invalid error, not a crash', () => {
    assert.throws(() => signDetached({ digestAlgorithm: 'sha256', signer: pki.leaf, withSignedAttributes: false }), (e: unknown) => e instanceof SigningError && e.code === 'cms_invalid');
    assert.throws(() => signDetached({ digestAlgorithm: 'sha256', signer: pki.leaf, withSignedAttributes: true }), (e: unknown) => e instanceof SigningError && e.code === 'cms_invalid');
  });

  it('a precomputed digest gives the same signature as the content', () => {
    const signingTime = new Date('2026-01-01T00:00:00Z');
    const fromContent = signDetached({ content, digestAlgorithm: 'sha256', signer: pki.leaf, withSignedAttributes: true, signedAttributes: { signingTime } });
    const fromDigest = signDetached({ contentDigest: createHash('sha256').update(content).digest(), digestAlgorithm: 'sha256', signer: pki.leaf, withSignedAttributes: true, signedAttributes: { signingTime } });
    assert.deepEqual(fromContent, fromDigest);
  });

  it('signing times from 2050 on are GeneralizedTime (RFC 5652 §11.3)', () => {
    const cms = signDetached({ content, digestAlgorithm: 'sha256', signer: pki.leaf, withSignedAttributes: true, signedAttributes: { signingTime: new Date('2051-06-01T00:00:00Z') } });
    assert.deepEqual(verifySignedData(cms, { detachedContent: content }).signedAttributes?.signingTime, new Date('2051-06-01T00:00:00Z'));
    const printed = openssl(['cms', '-cmsout', '-print', '-inform', 'DER', '-in', scratchFile('gt.der', cms)]);
    assert.match(printed.stdout.toString(), /GENERALIZEDTIME/);
  });
});
