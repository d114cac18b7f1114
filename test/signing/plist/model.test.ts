// The typed model's constructors, equality and the plain-JS conversions.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { SigningError } from '../../../src/signing/errors.ts';
import {
  dateToJs,
  expectType,
  parsePlist,
  plistArray,
  plistBoolean,
  plistClone,
  plistData,
  plistDate,
  plistDict,
  plistEqual,
  plistFromJs,
  plistInteger,
  plistReal,
  plistString,
  plistToJs,
  plistUid,
  writePlist,
} from '../../../src/signing/plist/index.ts';

const isPlistInvalid = (e: unknown) => e instanceof SigningError && e.code === 'plist_invalid';

describe('model', () => {
  test('integer range is CoreFoundation\'s: -2^63 … 2^64-1; numbers must be safe', () => {
    assert.equal(plistInteger((1n << 64n) - 1n).value, (1n << 64n) - 1n);
    assert.throws(() => plistInteger(1n << 64n), isPlistInvalid);
    assert.throws(() => plistInteger(-(1n << 63n) - 1n), isPlistInvalid);
    assert.throws(() => plistInteger(2 ** 60), isPlistInvalid);
    assert.throws(() => plistUid(-1), isPlistInvalid);
  });

  test('dates are CFAbsoluteTime seconds and convert to JS Dates', () => {
    const date = plistDate(new Date('2001-01-01T00:00:10.500Z'));
    assert.equal(date.value, 10.5);
    assert.equal(dateToJs(date).toISOString(), '2001-01-01T00:00:10.500Z');
    assert.throws(() => plistDate(new Date(Number.NaN)), isPlistInvalid);
  });

  test('equality: typed, dictionaries unordered, reals by bit pattern', () => {
    assert.ok(!plistEqual(plistInteger(1), plistReal(1)));
    assert.ok(!plistEqual(plistReal(0), plistReal(-0)));
    assert.ok(plistEqual(plistReal(Number.NaN), plistReal(Number.NaN)));
    assert.ok(plistEqual(plistDict({ a: plistBoolean(true), b: plistString('x') }), plistDict({ b: plistString('x'), a: plistBoolean(true) })));
    assert.ok(!plistEqual(plistDict({ a: plistBoolean(true) }), plistDict({ a: plistBoolean(false) })));
    assert.ok(!plistEqual(plistArray([plistInteger(1)]), plistArray([plistInteger(1), plistInteger(1)])));
    assert.ok(plistEqual(plistData(Buffer.of(1, 2)), plistData(Uint8Array.of(1, 2))));
  });

  test('clone never aliases', () => {
    const original = plistDict({ list: plistArray([plistData(Buffer.of(1))]) });
    const copy = plistClone(original);
    assert.ok(plistEqual(copy, original));
    const list = expectType(copy.value.get('list'), 'array', 'list');
    list.value.push(plistInteger(1));
    assert.equal(expectType(original.value.get('list'), 'array', 'list').value.length, 1);
  });

  test('expectType names what is missing or mistyped, with the caller\'s code', () => {
    assert.throws(() => expectType(undefined, 'string', 'TeamName', 'profile_invalid'), (e: unknown) => e instanceof SigningError && e.code === 'profile_invalid' && /TeamName is missing/.test(e.message));
    assert.throws(() => expectType(plistInteger(1), 'string', 'Name'), (e: unknown) => isPlistInvalid(e) && /is an integer, expected a string/.test((e as Error).message));
  });

  test('a parsed Info.plist edited and written back in its own format', () => {
    const xml = writePlist(plistDict({ CFBundleIdentifier: plistString('a.b'), CFBundleVersion: plistString('1') }), 'xml');
    const parsed = parsePlist(xml);
    assert.equal(parsed.format, 'xml');
    expectType(parsed.value, 'dict', 'Info.plist').value.set('CFBundleIdentifier', plistString('c.d'));
    assert.match(writePlist(parsed.value, parsed.format).toString(), /<string>c\.d<\/string>/);
    assert.throws(() => parsePlist(Buffer.from('bplist15xxxxxxxx')), isPlistInvalid);
  });
});

describe('plain JS conversion', () => {
  test('to JS: safe integers as numbers, big ones as bigint, dates, buffers, UIDs', () => {
    const js = plistToJs(plistDict([
      ['small', plistInteger(5)],
      ['big', plistInteger((1n << 64n) - 1n)],
      ['real', plistReal(1.5)],
      ['when', plistDate(0)],
      ['bytes', plistData(Uint8Array.of(1))],
      ['uid', plistUid(3)],
      ['__proto__', plistString('own property')],
      ['list', plistArray([plistBoolean(false)])],
    ]));
    assert.deepEqual(Object.keys(js as object), ['small', 'big', 'real', 'when', 'bytes', 'uid', '__proto__', 'list']);
    const obj = js as Record<string, unknown>;
    assert.equal(obj.small, 5);
    assert.equal(obj.big, (1n << 64n) - 1n);
    assert.equal(obj.real, 1.5);
    assert.deepEqual(obj.when, new Date('2001-01-01T00:00:00Z'));
    assert.deepEqual(obj.bytes, Buffer.of(1));
    assert.deepEqual(obj.uid, { CF$UID: 3 });
    assert.equal(Object.getOwnPropertyDescriptor(obj, '__proto__')?.value, 'own property');
    assert.deepEqual(obj.list, [false]);
  });

  test('from JS: only lossless conversions', () => {
    const value = plistFromJs({ n: 1, r: 1.5, b: 2n ** 60n, s: 'x', d: new Date(978307200000), x: Buffer.of(1), a: [true], m: new Map([['k', 'v']]) });
    assert.ok(plistEqual(value, plistDict({
      n: plistInteger(1), r: plistReal(1.5), b: plistInteger(2n ** 60n), s: plistString('x'), d: plistDate(0),
      x: plistData(Buffer.of(1)), a: plistArray([plistBoolean(true)]), m: plistDict({ k: plistString('v') }),
    })));
    assert.throws(() => plistFromJs({ a: null }), (e: unknown) => isPlistInvalid(e) && /\$\.a: null/.test((e as Error).message));
    assert.throws(() => plistFromJs([2 ** 60]), (e: unknown) => isPlistInvalid(e) && /beyond 2\^53/.test((e as Error).message));
    assert.throws(() => plistFromJs(undefined), isPlistInvalid);
    assert.throws(() => plistFromJs(new (class Foo {})()), isPlistInvalid);
  });
});
