// The BER reader under parseSignedData: definite and indefinite lengths, constructed OCTET
// STRINGs, OIDs and INTEGERs decoded as asn1js decodes them, and malformed input refused as
// cms_invalid (never a RangeError or a hang).
import assert from 'node:assert/strict';
import { it } from 'node:test';
import * as asn1js from 'asn1js';
import { BerReader, isUniversal, TAG } from '../../../src/signing/cms/ber-reader.ts';
import { SigningError } from '../../../src/signing/errors.ts';

const hex = (s: string): Buffer => Buffer.from(s.replace(/\s+/g, ''), 'hex');
const reader = (bytes: Buffer): BerReader => new BerReader(bytes, 'cms_invalid', 'test');
const refused = (bytes: Buffer): void => assert.throws(() => reader(bytes).root(), (e: unknown) => e instanceof SigningError && e.code === 'cms_invalid');

it('reads indefinite lengths and constructed OCTET STRINGs (BER, as Apple writes profiles)', () => {
  // SEQUENCE (indefinite) { [0] (indefinite) { OCTET STRING constructed (indefinite) { "ab", "cd" } } }
  const bytes = hex('3080 a080 2480 04026162 04026364 0000 0000 0000');
  const ber = reader(bytes);
  const root = ber.root();
  assert.equal(root.end, bytes.length);
  const [wrapped] = ber.children(root);
  const [octets] = ber.children(wrapped!);
  assert.ok(isUniversal(octets, TAG.octetString));
  assert.equal(ber.octets(octets!).toString(), 'abcd');
  assert.deepEqual(ber.raw(wrapped!), bytes.subarray(2, bytes.length - 2));
});

it('decodes OIDs and small INTEGERs as asn1js does', () => {
  for (const oid of ['1.2.840.113549.1.7.2', '2.16.840.1.101.3.4.2.1', '1.2.840.113635.100.9.2', '2.999.1', '0.9.2342.19200300.100.1.1']) {
    const der = Buffer.from(new asn1js.ObjectIdentifier({ value: oid }).toBER());
    const ber = reader(der);
    assert.equal(ber.oid(ber.root()), oid);
  }
  for (const value of [0, 1, 127, 128, -1, -129, 65535, 2 ** 31 - 1, -(2 ** 31)]) {
    const der = Buffer.from(new asn1js.Integer({ value }).toBER());
    const ber = reader(der);
    assert.equal(ber.smallInteger(ber.root()), value);
  }
});

it('refuses truncation, trailing bytes, bad lengths, primitive indefinite and deep nesting as cms_invalid', () => {
  refused(hex('3003 020101 00'));
  refused(hex('3004 020101'));
  refused(hex('3080 020101'));
  refused(hex('0480 0000'));
  refused(hex('3085 0000000001 00'));
  refused(hex('30 03 3002 0201'));
  // 70 nested indefinite SEQUENCEs, properly closed: deeper than MAX_DER_DEPTH.
  const deep = (levels: number): Buffer => Buffer.concat([Buffer.from('3080'.repeat(levels), 'hex'), Buffer.alloc(2 * levels)]);
  assert.equal(reader(deep(10)).root().end, 40);
  refused(deep(70));
  refused(Buffer.alloc(0));
});
