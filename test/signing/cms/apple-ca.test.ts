// Apple's CAs shipped with Signet (src/signing/cms/apple-ca): each file's SHA-256 is pinned (a
// changed byte fails here), each intermediate is signed by a bundled root, the shipped bytes are
// those of the shared corpus, and a real Apple-issued leaf gets its chain from the bundled set
// alone (no CA directory, no download).
import assert from 'node:assert/strict';
import { createHash, X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { BUNDLED_APPLE_CAS, bundledAppleCertificates, completeAppleChain, describeCertificate, isIssuedBy, isSelfSigned } from '../../../src/signing/cms/index.ts';
import { SigningError } from '../../../src/signing/errors.ts';
import { needsSharedFixtures, repoRoot, sharedFixture } from '../../support/fixtures.ts';
import { testPki } from '../../support/pki.ts';

const PINNED: Record<string, string> = {
  'AppleIncRootCertificate.cer': 'b0b1730ecbc7ff4505142c49f1295e6eda6bcaed7e2c68c5be91b5a11001f024',
  'AppleRootCA-G2.cer': 'c2b9b042dd57830e7d117dac55ac8ae19407d38e41d88f3215bc3a890444a050',
  'AppleRootCA-G3.cer': '63343abfb89a6a03ebb57e9b3f5fa7be7c4f5c756f3017b3a8c488c3653e9179',
  'AppleWWDRCA.cer': 'ce057691d730f89ca25e916f7335f4c8a15713dcd273a658c024023f8eb809c2',
  'AppleWWDRCAG2.cer': '9ed4b3b88c6a339cf1387895bda9ca6ea31a6b5ce9edf7511845923b0c8ac94c',
  'AppleWWDRCAG3.cer': 'dcf21878c77f4198e4b4614f03d696d89c66c66008d4244e1b99161aac91601f',
  'AppleWWDRCAG4.cer': 'ea4757885538dd8cb59ff4556f676087d83c85e70902c122e42c0808b5bce14c',
  'AppleWWDRCAG5.cer': '53fd008278e5a595fe1e908ae9c5e5675f26243264a5a6438c023e3ce2870760',
  'AppleWWDRCAG6.cer': 'bdd4ed6e74691f0c2bfd01be0296197af1379e0418e2d300efa9c3bef642ca30',
  'AppleWWDRCAG7.cer': '0f570d7502373a2102e2106faaa8fa4844944a07ee676198484f4d6ce15bea47',
  'AppleWWDRCAG8.cer': '29901badea37c9f300ce9869956beeb001d7e71bffb2e2d9533e132a4e87e6bd',
};

const bundledFile = (file: string): Buffer => readFileSync(path.join(repoRoot, 'src/signing/cms/apple-ca', file));

describe('Apple CAs shipped with Signet', () => {
  it('ships Apple Inc. Root, Root CA G2 and G3 and WWDR G1–G8, each pinned by SHA-256', () => {
    assert.deepEqual(BUNDLED_APPLE_CAS.map((ca) => ca.file).sort(), Object.keys(PINNED).sort());
    for (const ca of BUNDLED_APPLE_CAS) {
      assert.equal(createHash('sha256').update(bundledFile(ca.file)).digest('hex'), PINNED[ca.file], ca.file);
    }
    assert.equal(bundledAppleCertificates().length, BUNDLED_APPLE_CAS.length);
  });

  it('roots are self-signed Apple roots; every intermediate is a CA issued by a bundled root', () => {
    const roots = BUNDLED_APPLE_CAS.filter((ca) => ca.role === 'root').map((ca) => bundledFile(ca.file));
    for (const ca of BUNDLED_APPLE_CAS) {
      const der = bundledFile(ca.file);
      const info = describeCertificate(der);
      assert.match(info.subject, /O=Apple Inc\./, ca.file);
      assert.ok(new X509Certificate(der).ca, `${ca.file} is a CA`);
      if (ca.role === 'root') assert.equal(isSelfSigned(der), true, ca.file);
      else assert.ok(roots.some((root) => isIssuedBy(der, root)), `${ca.file} is issued by a bundled root`);
    }
  });

  it('the shipped bytes are those of the shared corpus (provenance in apple-ca/README.md)', needsSharedFixtures(), () => {
    for (const ca of BUNDLED_APPLE_CAS) assert.ok(bundledFile(ca.file).equals(readFileSync(sharedFixture(`ios/identities/apple-certs/${ca.file}`)!)), ca.file);
  });

  for (const kind of ['development', 'distribution']) {
    it(`completes the chain of the Apple-issued apple-signed-apple-${kind}.cer from the bundled set alone`, needsSharedFixtures(), async () => {
      const leaf = readFileSync(sharedFixture(`ios/identities/apple-codesign/apple-signed-apple-${kind}.cer`)!);
      // No keystore chain, no CA directory, no fetcher: only what ships with Signet.
      const completed = await completeAppleChain({ ...testPki().leaf, certificate: leaf, chain: [] });
      assert.deepEqual(completed.chain, [bundledFile('AppleWWDRCAG3.cer'), bundledFile('AppleIncRootCertificate.cer')]);
      assert.equal(isIssuedBy(leaf, completed.chain[0]!), true);
      // Left out, the same leaf's chain cannot be completed and the error names the missing issuer.
      await assert.rejects(completeAppleChain({ ...testPki().leaf, certificate: leaf, chain: [] }, { bundled: false }), (error: unknown) => {
        assert.ok(error instanceof SigningError && error.code === 'certificate_chain_incomplete');
        assert.match(error.message, /its issuer "Apple Worldwide Developer Relations Certification Authority" \(C=US,O=Apple Inc\.,OU=G3,/);
        return true;
      });
    });
  }
});
