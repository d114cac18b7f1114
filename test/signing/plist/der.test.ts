// DER entitlements (code-signature slot 7): goldens checked independently with openssl asn1parse,
// Apple `codesign` goldens (via rcodesign's tests and ios-signing.md §8.2), strict decoding.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import { SigningError } from '../../../src/signing/errors.ts';
import {
  decodeEntitlementsDer,
  encodeDerInteger,
  encodeEntitlementsDer,
  parseXmlPlist,
  plistArray,
  plistBoolean,
  plistData,
  plistDate,
  plistDict,
  plistEqual,
  plistInteger,
  plistReal,
  plistString,
  writeXmlPlist,
  type PlistValue,
} from '../../../src/signing/plist/index.ts';
import { testOutputDir } from '../../support/fixtures.ts';
import { rng } from './generate.ts';

// Built independently (a 20-line Python DER writer), then checked with `openssl asn1parse` below.
const GOLDEN = plistDict({
  str: plistString('héllo'),
  'int-0': plistInteger(0),
  'int-5': plistInteger(5),
  'int-255': plistInteger(255),
  'int-256': plistInteger(256),
  'int-m1': plistInteger(-1),
  'int-2p40': plistInteger(2 ** 40),
  'a-bool-true': plistBoolean(true),
  'a-bool-false': plistBoolean(false),
  arr: plistArray([plistString('s'), plistInteger(5), plistArray([plistBoolean(true)])]),
  nested: plistDict({ z: plistDict({ k: plistString('v') }), a: plistInteger(1) }),
});
const GOLDEN_HEX =
  '7081c8020101b081c230110c0c612d626f6f6c2d66616c736501010030100c0b612d626f6f6c2d747275650101ff' +
  '30120c03617272300b0c017302010530030101ff300a0c05696e742d30020100300d0c07696e742d323535020200ff' +
  '300d0c07696e742d3235360202010030120c08696e742d327034300206010000000000300a0c05696e742d35020105' +
  '300b0c06696e742d6d310201ff30210c066e6573746564b01730060c0161020101300d0c017ab00830060c016b0c01' +
  '76300d0c037374720c0668c3a96c6c6f';

const rejectsDecode = (hex: string, pattern: RegExp) =>
  assert.throws(
    () => decodeEntitlementsDer(Buffer.from(hex.replace(/\s/g, ''), 'hex')),
    (error: unknown) => error instanceof SigningError && error.code === 'entitlements_invalid' && pattern.test(error.message),
  );

describe('DER entitlements encoding', () => {
  test('golden: booleans, integers 0/5/255/256/-1/2^40, strings, arrays, nested dictionaries', () => {
    assert.equal(encodeEntitlementsDer(GOLDEN).toString('hex'), GOLDEN_HEX);
  });

  test('the golden bytes parse with openssl asn1parse as the expected tree', { skip: spawnSync('openssl', ['version']).status === 0 ? false : 'openssl missing' }, () => {
    const dir = testOutputDir('plist-der');
    mkdirSync(dir, { recursive: true });
    const file = path.join(dir, 'golden.der');
    writeFileSync(file, encodeEntitlementsDer(GOLDEN));
    const run = spawnSync('openssl', ['asn1parse', '-inform', 'DER', '-in', file, '-i']);
    assert.equal(run.status, 0, run.stderr.toString());
    const lines = run.stdout.toString().split('\n').map((l) => l.replace(/^\s*\d+:d=\d+\s+hl=\d+\s+l=\s*\d+\s+/, '').replace(/\s+/g, ' ').trim()).filter(Boolean);
    const pairs = [
      ['UTF8STRING :a-bool-false', 'BOOLEAN :0'],
      ['UTF8STRING :a-bool-true', 'BOOLEAN :255'],
      ['UTF8STRING :int-0', 'INTEGER :00'],
      ['UTF8STRING :int-255', 'INTEGER :FF'],
      ['UTF8STRING :int-256', 'INTEGER :0100'],
      ['UTF8STRING :int-2p40', 'INTEGER :010000000000'],
      ['UTF8STRING :int-5', 'INTEGER :05'],
      ['UTF8STRING :int-m1', 'INTEGER :-01'],
      ['UTF8STRING :str', 'UTF8STRING :héllo'],
    ];
    assert.equal(lines[0], 'cons: appl [ 16 ]');
    assert.equal(lines[1], 'prim: INTEGER :01');
    assert.equal(lines[2], 'cons: cont [ 16 ]');
    for (const [key, value] of pairs) {
      const at = lines.indexOf(`prim: ${key}`);
      assert.ok(at > 0, key);
      assert.equal(lines[at + 1], `prim: ${value}`, key);
    }
    const nestedAt = lines.indexOf('prim: UTF8STRING :nested');
    assert.equal(lines[nestedAt + 1], 'cons: cont [ 16 ]');
  });

  test("Apple codesign goldens (rcodesign plist_der.rs tests; Apple's TestApp, ios-signing.md §8.2)", () => {
    const key = (value: PlistValue) => encodeEntitlementsDer(plistDict({ key: value })).toString('hex');
    assert.equal(encodeEntitlementsDer(plistDict()).toString('hex'), '7005020101b000');
    assert.equal(key(plistBoolean(false)), '700f020101b00a30080c036b6579010100');
    assert.equal(key(plistBoolean(true)), '700f020101b00a30080c036b65790101ff');
    assert.equal(key(plistInteger(0)), '700f020101b00a30080c036b6579020100');
    assert.equal(key(plistInteger(-1)), '700f020101b00a30080c036b65790201ff');
    assert.equal(key(plistInteger(42)), '700f020101b00a30080c036b657902012a');
    assert.equal(key(plistString('')), '700e020101b00930070c036b65790c00');
    assert.equal(key(plistArray()), '700e020101b00930070c036b65793000');
    assert.equal(key(plistArray([plistBoolean(true), plistString('foo')])), '7016020101b01130' + '0f0c036b657930080101ff0c03666f6f');
    assert.equal(key(plistDict({ inner: plistBoolean(false) })), '701a020101b01530130c036b6579b00c300a0c05696e6e6572010100');
    const multi = plistDict({ key3: plistInteger(42), key: plistBoolean(false), key2: plistBoolean(true) });
    assert.equal(encodeEntitlementsDer(multi).toString('hex'), '7025020101b02030080c036b657901010030090c046b6579320101ff30090c046b65793302012a');
    const testApp = plistDict({
      'get-task-allow': plistBoolean(true),
      'com.apple.developer.team-identifier': plistString('FYD86LA7RE'),
      'application-identifier': plistString('FYD86LA7RE.sh.calaba.TestApp'),
    });
    const hex = (s: string) => Buffer.from(s).toString('hex');
    assert.equal(
      encodeEntitlementsDer(testApp).toString('hex'),
      `708186020101b0818030360c16${hex('application-identifier')}0c1c${hex('FYD86LA7RE.sh.calaba.TestApp')}` +
        `30310c23${hex('com.apple.developer.team-identifier')}0c0a${hex('FYD86LA7RE')}30130c0e${hex('get-task-allow')}0101ff`,
    );
  });

  test('integers: minimal two\'s complement at every byte boundary', () => {
    const cases: [bigint, string][] = [
      [0n, '00'], [127n, '7f'], [128n, '0080'], [-128n, '80'], [-129n, 'ff7f'], [32767n, '7fff'], [32768n, '008000'],
      [(1n << 63n) - 1n, '7fffffffffffffff'], [-(1n << 63n), '8000000000000000'],
    ];
    for (const [value, content] of cases) {
      assert.equal(encodeDerInteger(value).toString('hex'), `02${(content.length / 2).toString(16).padStart(2, '0')}${content}`, String(value));
    }
  });

  test('long lengths use the minimal long form', () => {
    const der = encodeEntitlementsDer(plistDict({ k: plistString('x'.repeat(300)) }));
    assert.equal(der.subarray(0, 2).toString('hex'), '7082');
    assert.ok(der.includes(Buffer.from('0c82012c', 'hex')));
    assert.ok(plistEqual(decodeEntitlementsDer(der), plistDict({ k: plistString('x'.repeat(300)) })));
  });

  test('types without a DER form and out-of-range values are refused (entitlements_invalid)', () => {
    for (const bad of [plistReal(1), plistDate(0), plistData(Buffer.of(1)), plistInteger(1n << 63n), plistString('\uD800')]) {
      assert.throws(() => encodeEntitlementsDer(plistDict({ k: bad })), (e: unknown) => e instanceof SigningError && e.code === 'entitlements_invalid');
    }
    assert.throws(() => encodeEntitlementsDer(plistArray()), (e: unknown) => e instanceof SigningError && e.code === 'entitlements_invalid');
  });
});

describe('DER entitlements decoding', () => {
  test('decodes the golden to the same dictionary, and XML ↔ DER agree', () => {
    const decoded = decodeEntitlementsDer(Buffer.from(GOLDEN_HEX, 'hex'));
    assert.ok(plistEqual(decoded, GOLDEN));
    assert.ok(plistEqual(parseXmlPlist(writeXmlPlist(GOLDEN)), decoded));
  });

  test('random entitlement-shaped values round-trip', () => {
    const next = rng(5);
    const make = (depth: number): PlistValue => {
      const kind = Math.floor(next() * (depth > 3 ? 3 : 5));
      if (kind === 0) return plistBoolean(next() < 0.5);
      if (kind === 1) return plistInteger(BigInt(Math.floor((next() - 0.5) * 2 ** 52)) * (next() < 0.3 ? 1024n : 1n));
      if (kind === 2) return plistString(`v${Math.floor(next() * 1e6)}é`);
      if (kind === 3) return plistArray(Array.from({ length: Math.floor(next() * 4) }, () => make(depth + 1)));
      return plistDict(Array.from({ length: Math.floor(next() * 5) }, (_, i) => [`k${Math.floor(next() * 100)}-${i}`, make(depth + 1)] as const));
    };
    for (let i = 0; i < 200; i++) {
      const value = plistDict({ root: make(0), other: make(1) });
      const der = encodeEntitlementsDer(value);
      const decoded = decodeEntitlementsDer(der);
      assert.ok(plistEqual(decoded, value), `case ${i}`);
      assert.ok(encodeEntitlementsDer(decoded).equals(der));
    }
  });

  test('non-canonical or malformed DER is refused', () => {
    rejectsDecode('3005020101b000', /APPLICATION 16/);
    rejectsDecode('7005020102b000', /version/);
    rejectsDecode('70050201013000', /not a dictionary/);
    rejectsDecode('7005020101b00000', /bytes after|runs past/);
    rejectsDecode('7080020101b00000', /indefinite/);
    rejectsDecode('708105020101b000', /non-minimal length/);
    rejectsDecode('700f020101b00a30080c036b6579010101', /BOOLEAN/);
    rejectsDecode('7010020101b00b30090c036b657902020001', /non-minimal INTEGER/);
    rejectsDecode('7010020101b00b30090c036b65790202ffff', /non-minimal INTEGER/);
    rejectsDecode('700f020101b00a30080c036b6579040100', /unexpected tag/);
    rejectsDecode('700f020101b00a30080c036b6579' + '0c01ff', /UTF-8/);
    // Keys out of order, and a repeated key.
    rejectsDecode('7015020101b01030060c01620101ff30060c01610101ff', /ascending/);
    rejectsDecode('7015020101b01030060c01610101ff30060c01610101ff', /ascending/);
    rejectsDecode('700f020101b00a', /runs past/);
  });
});
