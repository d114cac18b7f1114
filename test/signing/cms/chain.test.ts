import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { completeAppleChain, describeCertificate, isIssuedBy, isSelfSigned, loadIdentity, parseCertificateBundle, type CertificateCache, type Identity } from '../../../src/signing/cms/index.ts';
import { SigningError } from '../../../src/signing/errors.ts';
import { needsSharedFixtures, sharedFixture } from '../../support/fixtures.ts';
import { testPki } from '../../support/pki.ts';

/** What the service does with SIGNET_APPLE_CA_DIR: every file, DER or PEM. */
function readCaDir(dir: string): Buffer[] {
  return readdirSync(dir).flatMap((name) => parseCertificateBundle(readFileSync(path.join(dir, name))));
}

async function rejectsIncomplete(promise: Promise<unknown>): Promise<SigningError> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof SigningError && error.code === 'certificate_chain_incomplete', String(error));
    return error;
  }
  assert.fail('expected certificate_chain_incomplete');
}

class MemoryCache implements CertificateCache {
  readonly map = new Map<string, Buffer>();
  async get(url: string): Promise<Buffer | undefined> {
    return this.map.get(url);
  }
  async set(url: string, der: Buffer): Promise<void> {
    this.map.set(url, der);
  }
}

describe('completeAppleChain with the test PKI', () => {
  const pki = testPki();
  const bare: Identity = { ...pki.leaf, chain: [] };

  it('takes the chain from the .p12 when present', async () => {
    const identity = await loadIdentity(pki.p12(pki.leaf, { password: 'pw', includeChain: true }), { password: 'pw' });
    const completed = await completeAppleChain(identity);
    assert.deepEqual(completed.chain, [pki.intermediate.certificate, pki.root.certificate]);
  });

  it('else from the CA directory (DER files)', async () => {
    const completed = await completeAppleChain(bare, { caCertificates: readCaDir(pki.caDir) });
    assert.deepEqual(completed.chain, [pki.intermediate.certificate, pki.root.certificate]);
  });

  it('else downloads from the AIA caIssuers URL through the injected fetcher, once, via the cache', async () => {
    const fetched: string[] = [];
    const fetchCertificate = async (url: string): Promise<Buffer> => {
      fetched.push(url);
      if (url === 'http://certs.signet.test/wwdrg3.cer') return pki.intermediate.certificate;
      throw new Error(`404 ${url}`);
    };
    const cache = new MemoryCache();
    // The root is in the CA directory, the intermediate is not.
    const first = await completeAppleChain(bare, { caCertificates: [pki.root.certificate], fetchCertificate, cache });
    assert.deepEqual(first.chain, [pki.intermediate.certificate, pki.root.certificate]);
    assert.deepEqual(fetched, ['http://certs.signet.test/wwdrg3.cer']);
    const second = await completeAppleChain(bare, { caCertificates: [pki.root.certificate], fetchCertificate, cache });
    assert.deepEqual(second.chain, first.chain);
    assert.equal(fetched.length, 1, 'served from the cache');
  });

  it('a fetched certificate that is not the issuer does not count', async () => {
    await rejectsIncomplete(completeAppleChain(bare, { fetchCertificate: async () => pki.androidRsa.certificate }));
  });

  it('fails loudly when the chain cannot be completed', async () => {
    const error = await rejectsIncomplete(completeAppleChain(bare));
    assert.match(error.message, /Signet Test WWDR/);
    assert.match(error.message, /SIGNET_APPLE_CA_DIR/);
    await rejectsIncomplete(completeAppleChain(bare, { caCertificates: [pki.intermediate.certificate] })); // root missing
    await rejectsIncomplete(completeAppleChain(bare, { fetchCertificate: async () => { throw new Error('offline'); } }));
  });

  it('a self-signed identity is its own root', async () => {
    assert.deepEqual((await completeAppleChain(pki.androidRsa)).chain, []);
    assert.equal(isSelfSigned(pki.androidEc.certificate), true);
    assert.equal(isSelfSigned(pki.leaf.certificate), false);
  });

  it('isIssuedBy checks the signature, not just the names', () => {
    assert.equal(isIssuedBy(pki.leaf.certificate, pki.intermediate.certificate), true);
    assert.equal(isIssuedBy(pki.leaf.certificate, pki.root.certificate), false);
    // Same names and key ids, broken signature: not issued.
    const tampered = Buffer.from(pki.leaf.certificate);
    tampered[tampered.length - 1] = (tampered[tampered.length - 1] as number) ^ 0xff;
    assert.equal(isIssuedBy(tampered, pki.intermediate.certificate), false);
    assert.equal(isIssuedBy(pki.expiredLeaf.certificate, pki.androidRsa.certificate), false);
  });
});

describe('completeAppleChain with real Apple certificates', needsSharedFixtures(), () => {
  const caDir = sharedFixture('ios/identities/apple-certs') as string;

  for (const kind of ['development', 'distribution']) {
    it(`apple-signed-apple-${kind}.cer chains to WWDR G3 and Apple Root CA`, async () => {
      const leaf = readFileSync(sharedFixture(`ios/identities/apple-codesign/apple-signed-apple-${kind}.cer`) as string);
      const identity = { ...testPki().leaf, certificate: leaf, chain: [] };
      const completed = await completeAppleChain(identity, { caCertificates: readCaDir(caDir) });
      assert.deepEqual(completed.chain.map((c) => describeCertificate(c).subject), [
        'C=US,O=Apple Inc.,OU=G3,CN=Apple Worldwide Developer Relations Certification Authority',
        'CN=Apple Root CA,OU=Apple Certification Authority,O=Apple Inc.,C=US',
      ]);
    });
  }

  it('asks for Apple\'s published root URL when only the intermediate is at hand (bundled CAs left out)', async () => {
    const leaf = readFileSync(sharedFixture('ios/identities/apple-codesign/apple-signed-apple-development.cer') as string);
    const g3 = readFileSync(path.join(caDir, 'AppleWWDRCAG3.cer'));
    const root = readFileSync(path.join(caDir, 'AppleIncRootCertificate.cer'));
    const urls: string[] = [];
    const completed = await completeAppleChain({ ...testPki().leaf, certificate: leaf, chain: [] }, {
      bundled: false,
      fetchCertificate: async (url) => {
        urls.push(url);
        if (url === 'http://certs.apple.com/wwdrg3.der') return g3;
        if (url === 'https://www.apple.com/appleca/AppleIncRootCertificate.cer') return root;
        throw new Error('404');
      },
    });
    assert.deepEqual(completed.chain, [g3, root]);
    assert.deepEqual(urls, ['http://certs.apple.com/wwdrg3.der', 'https://www.apple.com/appleca/AppleIncRootCertificate.cer']);
  });
});
