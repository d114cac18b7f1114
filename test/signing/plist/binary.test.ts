// Binary plist reader and writer: fixture round trips, plistlib as oracle, hand-built edge cases
// and hostile inputs (cycles, out-of-range references, expansion bombs, random corruption).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { SigningError } from '../../../src/signing/errors.ts';
import {
  parseBinaryPlist,
  parsePlist,
  parseXmlPlist,
  plistArray,
  plistDict,
  plistEqual,
  plistInteger,
  plistReal,
  plistString,
  plistUid,
  writeBinaryPlist,
  writePlist,
  writeXmlPlist,
  type PlistValue,
} from '../../../src/signing/plist/index.ts';
import { needsSharedFixtures, sharedFixture } from '../../support/fixtures.ts';
import { randomValue, rng } from './generate.ts';
import { pythonAvailable, runOracle, type Tagged } from './python-oracle.ts';

const BINARY_FIXTURES = [
  'ios/isign/Test.app/Info.plist',
  'ios/isign/Test_unsigned_thin.app/Info.plist',
  'ios/isign/Test.app/Base.lproj/Main.storyboardc/Info.plist',
  'ios/fastlane/very-capable-app.xcarchive/Products/Applications/very-capable-app.app/Info.plist',
];

/** Builds a bplist00 from raw object bytes (object i at index i) and a trailer. */
function bplist(objects: Buffer[], options: { top?: number; refSize?: number; offsetSize?: number; numObjects?: bigint; tableOffset?: bigint } = {}): Buffer {
  const offsetSize = options.offsetSize ?? 1;
  const tableEntrySize = Math.min(Math.max(offsetSize, 1), 6); // the trailer may lie; the table stays writable
  const parts: Buffer[] = [Buffer.from('bplist00')];
  const offsets: number[] = [];
  let at = 8;
  for (const object of objects) {
    offsets.push(at);
    parts.push(object);
    at += object.length;
  }
  const table = Buffer.alloc(offsets.length * tableEntrySize);
  offsets.forEach((offset, i) => table.writeUIntBE(offset, i * tableEntrySize, tableEntrySize));
  const trailer = Buffer.alloc(32);
  trailer[6] = offsetSize;
  trailer[7] = options.refSize ?? 1;
  trailer.writeBigUInt64BE(options.numObjects ?? BigInt(objects.length), 8);
  trailer.writeBigUInt64BE(BigInt(options.top ?? 0), 16);
  trailer.writeBigUInt64BE(options.tableOffset ?? BigInt(at), 24);
  return Buffer.concat([...parts, table, trailer]);
}

const str = (s: string) => Buffer.concat([Buffer.of(0x50 | s.length), Buffer.from(s, 'latin1')]);

function rejects(input: Buffer, pattern: RegExp, maxNodes?: number): void {
  assert.throws(
    () => parseBinaryPlist(input, maxNodes === undefined ? {} : { maxNodes }),
    (error: unknown) => error instanceof SigningError && error.code === 'plist_invalid' && pattern.test(error.message),
  );
}

function fromTagged(t: Tagged): PlistValue {
  switch (t.t) {
    case 'str': return { type: 'string', value: t.v };
    case 'int': return { type: 'integer', value: BigInt(t.v) };
    case 'real': return { type: 'real', value: Buffer.from(t.v, 'hex').readDoubleBE(0) };
    case 'bool': return { type: 'boolean', value: t.v };
    case 'date': return { type: 'date', value: t.v };
    case 'data': return { type: 'data', value: Buffer.from(t.v, 'base64') };
    case 'arr': return plistArray(t.v.map(fromTagged));
    case 'dict': return plistDict(t.v.map(([k, v]) => [k, fromTagged(v)] as const));
  }
}

describe('fixtures: binary → model → binary → model', needsSharedFixtures(), () => {
  for (const rel of BINARY_FIXTURES) {
    test(rel.split('/').slice(-2).join('/'), () => {
      const { value, format } = parsePlist(readFileSync(sharedFixture(rel)!));
      assert.equal(format, 'binary');
      const again = parsePlist(writePlist(value, format));
      assert.equal(again.format, 'binary');
      assert.ok(plistEqual(again.value, value));
      // Key order is preserved, so an edited Info.plist keeps its layout.
      assert.deepEqual(again.value.type === 'dict' && [...again.value.value.keys()], value.type === 'dict' && [...value.value.keys()]);
    });
  }

  test('Info.plist reads as plistlib reads it', { skip: pythonAvailable() ? false : 'python3 not installed' }, () => {
    for (const rel of BINARY_FIXTURES) {
      const value = parsePlist(readFileSync(sharedFixture(rel)!)).value;
      const [result] = runOracle([{ value, oursBinary: readFileSync(sharedFixture(rel)!) }]);
      assert.ok(plistEqual(fromTagged(result!.oursBinaryRead!), value), rel);
    }
  });
});

describe('python plistlib oracle', { skip: pythonAvailable() ? false : 'python3 not installed' }, () => {
  test('random values: same bytes as plistlib, and each side reads the other exactly', () => {
    const next = rng(2024);
    const values = Array.from({ length: 150 }, () => randomValue(next));
    // A wide array: over 255 objects (2-byte refs) and over 255 bytes of objects (2-byte offsets).
    values.push(plistArray(Array.from({ length: 300 }, (_, i) => plistString(`item ${i}`))));
    const results = runOracle(values.map((value) => ({ value, oursXml: writeXmlPlist(value), oursBinary: writeBinaryPlist(value) })));
    values.forEach((value, i) => {
      const r = results[i]!;
      assert.ok(writeBinaryPlist(value).equals(r.binary), `case ${i}: binary bytes differ from plistlib`);
      assert.ok(plistEqual(parseBinaryPlist(r.binary), value), `case ${i}: reading plistlib binary`);
      assert.ok(plistEqual(parseXmlPlist(r.xml), value), `case ${i}: reading plistlib XML`);
      assert.ok(plistEqual(fromTagged(r.oursXmlRead!), value), `case ${i}: plistlib reading our XML`);
      assert.ok(plistEqual(fromTagged(r.oursBinaryRead!), value), `case ${i}: plistlib reading our binary`);
    });
  });
});

describe('reading edge cases', () => {
  test('integers of 1, 2, 4, 8 and 16 bytes; 8 and 16 are signed', () => {
    const cases: [Buffer, bigint][] = [
      [Buffer.of(0x10, 0xff), 255n],
      [Buffer.of(0x11, 0xff, 0xff), 65535n],
      [Buffer.of(0x12, 0xff, 0xff, 0xff, 0xff), 4294967295n],
      [Buffer.of(0x13, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff), -1n],
      [Buffer.concat([Buffer.of(0x14), Buffer.alloc(8), Buffer.alloc(8, 0xff)]), (1n << 64n) - 1n],
      [Buffer.concat([Buffer.of(0x14), Buffer.alloc(8, 0xff), Buffer.of(0x80, 0, 0, 0, 0, 0, 0, 0)]), -(1n << 63n)],
    ];
    for (const [object, expected] of cases) assert.deepEqual(parseBinaryPlist(bplist([object])), plistInteger(expected));
    rejects(bplist([Buffer.concat([Buffer.of(0x14, 1), Buffer.alloc(15)])]), /outside/);
    rejects(bplist([Buffer.of(0x15, 0)]), /2\^5 bytes/);
  });

  test('float32 reals, UTF-16 strings, UIDs and extended counts', () => {
    const f32 = Buffer.alloc(5);
    f32[0] = 0x22;
    f32.writeFloatBE(1.5, 1);
    assert.deepEqual(parseBinaryPlist(bplist([f32])), plistReal(1.5));
    const utf16 = Buffer.concat([Buffer.of(0x62), Buffer.from('é😀'.slice(0, 2), 'utf16le').swap16()]);
    assert.deepEqual(parseBinaryPlist(bplist([utf16])), plistString('é\uD83D'));
    assert.deepEqual(parseBinaryPlist(bplist([Buffer.of(0x81, 0x01, 0x02)])), plistUid(258));
    const long = 'x'.repeat(20);
    assert.deepEqual(parseBinaryPlist(bplist([Buffer.concat([Buffer.of(0x5f, 0x10, 20), Buffer.from(long)])])), plistString(long));
    const uid = plistUid(70000);
    assert.deepEqual(parseBinaryPlist(writeBinaryPlist(plistArray([uid]))), plistArray([uid]));
  });

  test('a shared (not cyclic) sub-array is expanded into independent copies', () => {
    const input = bplist([Buffer.of(0xa2, 1, 1), Buffer.of(0xa1, 2), Buffer.of(0x09)]);
    const value = parseBinaryPlist(input);
    assert.ok(value.type === 'array' && value.value[0] !== value.value[1]);
    assert.equal(writeBinaryPlist(value).length > 0, true);
  });

  test('hostile structure is refused with plist_invalid', () => {
    rejects(Buffer.from('bplist00'), /too short/);
    rejects(Buffer.from('bplist01' + '\0'.repeat(40)), /header/);
    rejects(bplist([Buffer.of(0x09)], { top: 1 }), /top object/);
    rejects(bplist([Buffer.of(0x09)], { numObjects: 0n }), /top object/);
    rejects(bplist([Buffer.of(0x09)], { numObjects: 1n << 60n }), /offset table/);
    rejects(bplist([Buffer.of(0x09)], { tableOffset: 1n << 62n }), /offset table/);
    rejects(bplist([Buffer.of(0x09)], { offsetSize: 0 }), /offset size/);
    rejects(bplist([Buffer.of(0x09)], { refSize: 9 }), /reference size/);
    rejects(bplist([Buffer.of(0xa1, 5), Buffer.of(0x09)]), /beyond/);
    rejects(bplist([Buffer.of(0xa1, 0)]), /contains itself/);
    rejects(bplist([Buffer.of(0xa1, 1), Buffer.of(0xd1, 2, 0), str('k')]), /contains itself/);
    rejects(bplist([Buffer.of(0xd1, 1, 2), Buffer.of(0x10, 1), Buffer.of(0x09)]), /integer key/);
    rejects(bplist([Buffer.of(0xd2, 1, 1, 2, 2), str('k'), Buffer.of(0x09)]), /repeats the key/);
    rejects(bplist([Buffer.of(0x00)]), /null/);
    rejects(bplist([Buffer.of(0xc1, 0)]), /unsupported marker/);
    rejects(bplist([Buffer.of(0x51, 0xe9)]), /above 0x7F/);
    rejects(bplist([Buffer.of(0x4f, 0x13, 0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff)]), /exceeds the file/);
    rejects(bplist([Buffer.of(0x4f, 0x50)]), /not an integer/);
    rejects(bplist([Buffer.of(0x45, 1, 2)]), /runs past/);
    rejects(bplist([Buffer.of(0xa3, 1, 2)]), /runs past/);
    // Depth: a chain of 600 nested one-element arrays.
    const chain = Array.from({ length: 600 }, (_, i) => (i === 599 ? Buffer.of(0x09) : Buffer.of(0xa1, (i + 1) >> 8, (i + 1) & 0xff)));
    rejects(bplist(chain, { refSize: 2, offsetSize: 2 }), /deeper/);
  });

  test('an expansion bomb (each level references the next twice) hits the node limit', () => {
    const bomb = (levels: number) =>
      bplist(Array.from({ length: levels }, (_, i) => (i === levels - 1 ? Buffer.of(0x09) : Buffer.of(0xa2, i + 1, i + 1))));
    // 2^40 nodes if expanded: returning at all shows the limit stops the walk early.
    rejects(bomb(40), /node limit/);
    rejects(bomb(12), /node limit/, 1000);
    assert.equal(parseBinaryPlist(bomb(12)).type, 'array'); // 4095 nodes: fine
  });
});

describe('fuzz: corrupted binary plists fail cleanly', () => {
  test('random byte edits and truncations only ever yield a value or plist_invalid', () => {
    const next = rng(31337);
    const seeds = Array.from({ length: 12 }, () => writeBinaryPlist(plistDict({ a: randomValue(next), b: randomValue(next), c: plistArray([randomValue(next)]) })));
    let parsed = 0;
    for (let i = 0; i < 4000; i++) {
      const seed = seeds[i % seeds.length]!;
      let input = Buffer.from(seed);
      const edits = 1 + Math.floor(next() * 4);
      for (let e = 0; e < edits; e++) {
        const at = Math.floor(next() * input.length);
        const mode = next();
        if (mode < 0.6) input[at] = Math.floor(next() * 256);
        else if (mode < 0.8) input[input.length - 1 - Math.floor(next() * 32)] = Math.floor(next() * 256); // trailer
        else input = input.subarray(0, Math.max(8, at));
      }
      try {
        parseBinaryPlist(input);
        parsed += 1;
      } catch (error) {
        assert.ok(error instanceof SigningError && error.code === 'plist_invalid', `iteration ${i}: ${(error as Error).stack}`);
      }
    }
    assert.ok(parsed > 0 && parsed < 4000);
  });
});
