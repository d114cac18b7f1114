// Issuer names are compared as X.500 names (RFC 5280 §7.1), not as bytes: apksig's original.apk
// names its signer's issuer with a PrintableString where the certificate uses UTF8String.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { BufferSource } from '../../../src/signing/data-source.ts';
import { certificateParts, parseSignedData, verifySignedData } from '../../../src/signing/cms/index.ts';
import { oid, sequence, setOf, tlv } from '../../../src/signing/cms/der-writer.ts';
import { namesMatch } from '../../../src/signing/cms/name-match.ts';
import { ZipReader } from '../../../src/signing/zip/index.ts';
import { needsSharedFixtures, sharedFixture } from '../../support/fixtures.ts';

const CN = '2.5.4.3';
const O = '2.5.4.10';
const C = '2.5.4.6';
const atv = (type: string, tag: number, value: Buffer | string): Buffer => sequence(oid(type), tlv(tag, typeof value === 'string' ? Buffer.from(value, 'utf8') : value));
const rdn = (...attributes: Buffer[]): Buffer => setOf(attributes, false);
const name = (...rdns: Buffer[]): Buffer => sequence(...rdns);
const UTF8 = 0x0c;
const PRINTABLE = 0x13;
const BMP = 0x1e;

describe('namesMatch (RFC 5280 §7.1)', () => {
  it('matches the same name encoded with different string types', () => {
    const utf8 = name(rdn(atv(C, PRINTABLE, 'US')), rdn(atv(CN, UTF8, 'rsa-2048')));
    const printable = name(rdn(atv(C, PRINTABLE, 'US')), rdn(atv(CN, PRINTABLE, 'rsa-2048')));
    const bmp = name(rdn(atv(C, PRINTABLE, 'US')), rdn(atv(CN, BMP, Buffer.from('rsa-2048', 'utf16le').swap16())));
    assert.notDeepEqual(utf8, printable);
    assert.ok(namesMatch(utf8, printable));
    assert.ok(namesMatch(bmp, utf8));
  });

  it('ignores case and insignificant spaces, and the order of attributes inside one RDN', () => {
    assert.ok(namesMatch(name(rdn(atv(CN, UTF8, '  Android   Debug '))), name(rdn(atv(CN, PRINTABLE, 'android debug')))));
    const multi = name(rdn(atv(CN, UTF8, 'a'), atv(O, UTF8, 'b')));
    const swapped = name(rdn(atv(O, UTF8, 'b'), atv(CN, UTF8, 'a')));
    assert.ok(namesMatch(multi, swapped));
  });

  it('tells different names apart', () => {
    const base = name(rdn(atv(C, PRINTABLE, 'US')), rdn(atv(CN, UTF8, 'rsa-2048')));
    assert.ok(!namesMatch(base, name(rdn(atv(C, PRINTABLE, 'US')), rdn(atv(CN, UTF8, 'rsa-4096')))), 'other value');
    assert.ok(!namesMatch(base, name(rdn(atv(CN, UTF8, 'rsa-2048')), rdn(atv(C, PRINTABLE, 'US')))), 'RDN order matters');
    assert.ok(!namesMatch(base, name(rdn(atv(C, PRINTABLE, 'US')), rdn(atv(O, UTF8, 'rsa-2048')))), 'other attribute type');
    assert.ok(!namesMatch(base, name(rdn(atv(CN, UTF8, 'rsa-2048')))), 'fewer RDNs');
    // Not strings: only identical encodings match.
    assert.ok(!namesMatch(name(rdn(atv(CN, 0x04, Buffer.from('x')))), name(rdn(atv(CN, UTF8, 'x')))));
  });

  it('rejects malformed names without throwing', () => {
    const good = name(rdn(atv(CN, UTF8, 'x')));
    assert.equal(namesMatch(good, Buffer.from([0x30, 0x05, 0x31])), false);
    assert.equal(namesMatch(good, Buffer.from([0x30, 0x02, 0x31, 0x00])), false);
    assert.equal(namesMatch(Buffer.alloc(0), good), false);
  });
});

describe('verifySignedData on apksig original.apk v1 block', needsSharedFixtures(), () => {
  it('finds the signer certificate although the issuer is encoded differently', async () => {
    const zip = await ZipReader.open(new BufferSource(readFileSync(sharedFixture('android/apksig/golden/original.apk')!)));
    const block = await zip.readEntry(zip.getEntry('META-INF/CERT.RSA')!);
    const sf = await zip.readEntry(zip.getEntry('META-INF/CERT.SF')!);
    const parsed = parseSignedData(block);
    const sid = parsed.signerInfos[0]!.sid;
    assert.ok('issuer' in sid);
    const issuer = certificateParts(parsed.certificates[0]!).issuer;
    // The premise: same name, different bytes (PrintableString vs UTF8String).
    assert.ok(!issuer.equals(sid.issuer));
    const verified = verifySignedData(block, { detachedContent: sf });
    assert.ok(verified.signerCertificate.equals(parsed.certificates[0]!));
    assert.equal(verified.digestAlgorithm, 'sha256');
    // A changed .SF must still fail: the match only concerns the names.
    assert.throws(() => verifySignedData(block, { detachedContent: Buffer.concat([sf, Buffer.from('\r\n')]) }), /does not verify|messageDigest/);
  });
});
