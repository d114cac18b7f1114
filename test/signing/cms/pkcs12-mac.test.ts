// The PKCS#12 integrity MAC checked with node:crypto (cms/pkcs12-mac.ts) against files OpenSSL
// wrote: SHA-256 (OpenSSL 3's default) and SHA-1 (-legacy) MACs, passwords empty, ASCII, accented
// and outside the Basic Multilingual Plane (a surrogate pair in the BMPString), right and wrong.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import * as asn1js from 'asn1js';
import * as pkijs from 'pkijs';
import { digestFromOid } from '../../../src/signing/cms/der.ts';
import { macMatches } from '../../../src/signing/cms/pkcs12-mac.ts';
import { testPki } from '../../support/pki.ts';

function macOf(bytes: Buffer): { digest: ReturnType<typeof digestFromOid>; salt: Uint8Array; iterations: number; content: Uint8Array; mac: Uint8Array } {
  const pfx = new pkijs.PFX({ schema: asn1js.fromBER(new Uint8Array(bytes)).result });
  const data = pfx.macData!;
  return {
    digest: digestFromOid(data.mac.digestAlgorithm.algorithmId),
    salt: data.macSalt.valueBlock.valueHexView,
    iterations: data.iterations ?? 1,
    content: new Uint8Array((pfx.authSafe.content as asn1js.OctetString).getValue()),
    mac: data.mac.digest.valueBlock.valueHexView,
  };
}

describe('PKCS#12 MAC (RFC 7292 Appendix B) with node:crypto', () => {
  const pki = testPki();
  for (const legacy of [false, true]) {
    for (const password of ['', 'password', 'sécret', '密码🔑']) {
      it(`${legacy ? 'SHA-1 (legacy)' : 'SHA-256'} MAC, password ${JSON.stringify(password)}`, () => {
        const mac = macOf(pki.p12(pki.leaf, { password, legacy }));
        assert.equal(mac.digest, legacy ? 'sha1' : 'sha256');
        assert.equal(macMatches(mac.digest!, password, mac.salt, mac.iterations, mac.content, mac.mac), true);
        assert.equal(macMatches(mac.digest!, `${password}x`, mac.salt, mac.iterations, mac.content, mac.mac), false);
        const altered = Uint8Array.from(mac.content);
        altered[altered.length - 1]! ^= 1;
        assert.equal(macMatches(mac.digest!, password, mac.salt, mac.iterations, altered, mac.mac), false);
      });
    }
  }
  it('names only the digests it derives keys for', () => {
    assert.equal(digestFromOid('2.16.840.1.101.3.4.2.3'), 'sha512');
    assert.equal(digestFromOid('1.2.643.7.1.1.2.2'), undefined); // GOST R 34.11-2012: left to pkijs
  });
});
