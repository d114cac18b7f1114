// XML plist reader and writer: Apple round trips byte for byte, CoreFoundation's formatting
// rules, and strict refusal of malformed documents.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { SigningError } from '../../../src/signing/errors.ts';
import {
  formatDate,
  formatReal,
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
  plistUid,
  writeXmlPlist,
  XML_HEADER,
  type PlistValue,
} from '../../../src/signing/plist/index.ts';
import { needsSharedFixtures, sharedFixture } from '../../support/fixtures.ts';
import { randomValue, rng } from './generate.ts';
import { pythonAvailable } from './python-oracle.ts';

const APPLE_XML_FIXTURES = [
  'ios/fastlane/very-capable-app.xcarchive/Info.plist',
  'ios/fastlane/very-capable-app.xcarchive/Products/Applications/very-capable-app.app/_CodeSignature/CodeResources',
  'ios/fastlane/very-capable-app.xcarchive/Products/Applications/very-capable-app.app/archived-expanded-entitlements.xcent',
  'ios/isign/Test.app/_CodeSignature/CodeResources',
  'ios/isign/Test.app/isignTestAppTests/Info.plist',
  'ios/isign/Test.app/isignTestAppUITests/Info.plist',
  'ios/isign/Test.app/isignTestApp.xcodeproj/xcuserdata/neilk.xcuserdatad/xcschemes/xcschememanagement.plist',
];

const xml = (body: string) => Buffer.from(`${XML_HEADER}${body}</plist>\n`);

function rejects(input: string | Buffer, pattern: RegExp): void {
  assert.throws(
    () => parseXmlPlist(typeof input === 'string' ? Buffer.from(input) : input),
    (error: unknown) => error instanceof SigningError && error.code === 'plist_invalid' && pattern.test(error.message),
  );
}

describe('Apple-formatted XML round trips byte for byte', needsSharedFixtures(), () => {
  for (const rel of APPLE_XML_FIXTURES) {
    test(rel.split('/').slice(-2).join('/'), () => {
      const bytes = readFileSync(sharedFixture(rel)!);
      const value = parseXmlPlist(bytes);
      assert.equal(writeXmlPlist(value).toString('utf8'), bytes.toString('utf8'));
    });
  }

  test('CodeResources keeps data, reals, booleans and nested dicts exact', () => {
    const value = parseXmlPlist(readFileSync(sharedFixture(APPLE_XML_FIXTURES[1]!)!));
    assert.equal(value.type, 'dict');
    const rules2 = value.type === 'dict' ? value.value.get('rules2') : undefined;
    assert.ok(rules2?.type === 'dict');
    const lproj = rules2.value.get('^.*\\.lproj/');
    assert.ok(lproj?.type === 'dict');
    assert.deepEqual(lproj.value.get('weight'), plistReal(1000));
    assert.deepEqual(lproj.value.get('optional'), plistBoolean(true));
  });
});

describe('CoreFoundation formatting', () => {
  test('document skeleton, indentation, empty containers and booleans', () => {
    const value = plistDict({
      b: plistArray([plistBoolean(true), plistBoolean(false), plistArray(), plistDict()]),
      a: plistDict({ n: plistInteger(-5), s: plistString('') }),
    });
    assert.equal(
      writeXmlPlist(value).toString(),
      `${XML_HEADER}<dict>\n\t<key>a</key>\n\t<dict>\n\t\t<key>n</key>\n\t\t<integer>-5</integer>\n\t\t<key>s</key>\n\t\t<string></string>\n\t</dict>\n` +
        `\t<key>b</key>\n\t<array>\n\t\t<true/>\n\t\t<false/>\n\t\t<array/>\n\t\t<dict/>\n\t</array>\n</dict>\n</plist>\n`,
    );
  });

  test('keys sorted by UTF-16 code units unless sortKeys is false', () => {
    const value = plistDict([['b', plistBoolean(true)], ['B', plistBoolean(true)], ['\u{1F600}', plistBoolean(true)], ['\uFF21', plistBoolean(true)], ['a', plistBoolean(true)]]);
    const keys = (out: Buffer) => [...out.toString().matchAll(/<key>(.*)<\/key>/g)].map((m) => m[1]);
    assert.deepEqual(keys(writeXmlPlist(value)), ['B', 'a', 'b', '\u{1F600}', '\uFF21']);
    assert.deepEqual(keys(writeXmlPlist(value, { sortKeys: false })), ['b', 'B', '\u{1F600}', '\uFF21', 'a']);
  });

  test('only <, > and & are escaped (CFPropertyList.c _appendEscapedString)', () => {
    const out = writeXmlPlist(plistDict({ 'k<&>"\'': plistString('a<b>&c"\'') })).toString();
    assert.match(out, /<key>k&lt;&amp;&gt;"'<\/key>\n\t<string>a&lt;b&gt;&amp;c"'<\/string>/);
  });

  test('reals: %.17g with round-half-even, nan, ±infinity, zero as 0.0', () => {
    const cases: [number, string][] = [
      [1000, '1000'], [1, '1'], [0.5, '0.5'], [0.1, '0.10000000000000001'], [-2.5, '-2.5'],
      [1e21, '1e+21'], [1e16, '10000000000000000'], [1e17, '1e+17'], [1e-5, '1.0000000000000001e-05'],
      [0.0001, '0.0001'], [123456.789, '123456.789'], [5e-324, '4.9406564584124654e-324'],
      [1.7976931348623157e308, '1.7976931348623157e+308'], [1250000000000000.2, '1250000000000000.2'],
      [Number.NaN, 'nan'], [Infinity, '+infinity'], [-Infinity, '-infinity'], [0, '0.0'], [-0, '0.0'],
    ];
    for (const [value, text] of cases) assert.equal(formatReal(value), text, String(value));
  });

  test('reals agree with C printf("%.17g") (python3 uses the C library)', { skip: pythonAvailable() ? false : 'python3 not installed' }, () => {
    const next = rng(7);
    const values = Array.from({ length: 200 }, () => (next() - 0.5) * 10 ** Math.floor(next() * 60 - 30));
    values.push(1250000000000000.25, 2.5, 0.125, 1125899906842624.125);
    const script = 'import sys,struct\nfor h in sys.stdin.read().split():\n print("%.17g" % struct.unpack(">d", bytes.fromhex(h))[0])';
    const input = values.map((v) => { const b = Buffer.alloc(8); b.writeDoubleBE(v); return b.toString('hex'); }).join('\n');
    const run = spawnSync('python3', ['-c', script], { input });
    assert.equal(run.status, 0, run.stderr.toString());
    const expected = run.stdout.toString().trim().split('\n');
    values.forEach((v, i) => assert.equal(formatReal(v), expected[i], String(v)));
  });

  test('dates: whole seconds, UTC, truncated', () => {
    assert.equal(formatDate(0), '2001-01-01T00:00:00Z');
    assert.equal(formatDate(0.999), '2001-01-01T00:00:00Z');
    assert.equal(formatDate(-0.5), '2000-12-31T23:59:59Z');
    assert.equal(formatDate(plistDate(new Date('2018-04-25T01:10:17Z')).value), '2018-04-25T01:10:17Z');
    assert.throws(() => formatDate(-1e12), SigningError);
  });

  test('data: base64 lines of 76 − 8·indent characters at the tag indentation', () => {
    const bytes = Uint8Array.from({ length: 100 }, (_, i) => i);
    const b64 = Buffer.from(bytes).toString('base64');
    const top = writeXmlPlist(plistData(bytes)).toString();
    assert.equal(top, `${XML_HEADER}<data>\n${b64.slice(0, 76)}\n${b64.slice(76, 152)}\n</data>\n</plist>\n`);
    const nested = writeXmlPlist(plistDict({ d: plistData(bytes) })).toString();
    assert.match(nested, new RegExp(`\\t<data>\\n\\t${b64.slice(0, 68).replace(/[+/]/g, '\\$&')}\\n\\t${b64.slice(68, 136).replace(/[+/]/g, '\\$&')}\\n\\t</data>`));
    // Deeper than 8 levels the indentation and line length stop shrinking (12 chars per line).
    let deep: PlistValue = plistData(bytes);
    for (let i = 0; i < 10; i++) deep = plistArray([deep]);
    const lines = writeXmlPlist(deep).toString().split('\n').filter((l) => /^\t*[A-Za-z0-9+/=]+$/.test(l) && !l.includes('<'));
    assert.equal(lines[0], `${'\t'.repeat(8)}${b64.slice(0, 12)}`);
    assert.equal(writeXmlPlist(plistData(new Uint8Array(0))).toString(), `${XML_HEADER}<data>\n</data>\n</plist>\n`);
  });

  test('UIDs are written as {CF$UID: n}', () => {
    assert.match(writeXmlPlist(plistUid(7)).toString(), /<dict>\n\t<key>CF\$UID<\/key>\n\t<integer>7<\/integer>\n<\/dict>/);
  });

  test('characters XML cannot carry are refused on write', () => {
    assert.throws(() => writeXmlPlist(plistString('a\u0000b')), SigningError);
    assert.throws(() => writeXmlPlist(plistString('\uD800')), SigningError);
  });
});

describe('reading', () => {
  test('integers beyond 2^53, reals distinct from integers, dates and data exact', () => {
    const value = parseXmlPlist(xml('<array><integer>18446744073709551615</integer><integer>-9223372036854775808</integer>' +
      '<integer>0x10</integer><real>1</real><real>-infinity</real><real>nan</real><date>2018-04-25T01:10:17Z</date>' +
      '<data> AAEC\n  /w== </data><string>a&lt;&#x1F600;&#65;<![CDATA[<x>]]></string><integer> 42 </integer></array>'));
    assert.ok(value.type === 'array');
    const [big, min, hex, real, inf, nan, date, data, str, spaced] = value.value;
    assert.deepEqual(big, plistInteger((1n << 64n) - 1n));
    assert.deepEqual(min, plistInteger(-(1n << 63n)));
    assert.deepEqual(hex, plistInteger(16));
    assert.deepEqual(real, plistReal(1));
    assert.deepEqual(inf, plistReal(-Infinity));
    assert.ok(nan?.type === 'real' && Number.isNaN(nan.value));
    assert.deepEqual(date, plistDate(new Date('2018-04-25T01:10:17Z')));
    assert.deepEqual(data, plistData(Buffer.of(0, 1, 2, 255)));
    assert.deepEqual(str, plistString('a<\u{1F600}A<x>'));
    assert.deepEqual(spaced, plistInteger(42));
  });

  test('whitespace inside <string> is kept; comments and PIs are skipped; a bare root is accepted', () => {
    assert.deepEqual(parseXmlPlist(xml('<string> a\r\n\tb </string>')), plistString(' a\r\n\tb '));
    assert.deepEqual(parseXmlPlist(Buffer.from('<!-- c --><dict><!-- x --><key>k</key><?pi x?><true/></dict>')), plistDict({ k: plistBoolean(true) }));
    assert.deepEqual(parseXmlPlist(Buffer.from('\uFEFF<plist><string/></plist>')), plistString(''));
    assert.deepEqual(parseXmlPlist(xml('<dict></dict>')), plistDict());
  });

  test('UTF-16 documents with a byte-order mark', () => {
    const text = '<?xml version="1.0" encoding="UTF-16"?><plist><string>é😀</string></plist>';
    const le = Buffer.concat([Buffer.of(0xff, 0xfe), Buffer.from(text, 'utf16le')]);
    const be = Buffer.concat([Buffer.of(0xfe, 0xff), Buffer.from(text, 'utf16le').swap16()]);
    assert.deepEqual(parseXmlPlist(le), plistString('é😀'));
    assert.deepEqual(parseXmlPlist(be), plistString('é😀'));
  });

  test('malformed documents are refused with plist_invalid', () => {
    rejects('', /root element/);
    rejects('<plist>', /expected an element|root|unterminated/);
    rejects(xml('<dict><key>a</key></dict>').toString(), /has no value/);
    rejects(xml('<dict><key>a</key><true/><key>a</key><false/></dict>').toString(), /duplicate dictionary key/);
    rejects(xml('<dict><string>a</string><true/></dict>').toString(), /expected <key>/);
    rejects(xml('<array></dict>').toString(), /does not close/);
    rejects(xml('<string>a & b</string>').toString(), /"&"/);
    rejects(xml('<string>&foo;</string>').toString(), /unknown entity/);
    rejects(xml('<string>&#0;</string>').toString(), /not an XML character/);
    rejects(xml('<string>a<b/></string>').toString(), /element inside/);
    rejects(xml('<integer>1.5</integer>').toString(), /not an integer/);
    rejects(xml('<integer></integer>').toString(), /not an integer/);
    rejects(xml('<integer>18446744073709551616</integer>').toString(), /outside/);
    rejects(xml('<real>abc</real>').toString(), /not a number/);
    rejects(xml('<date>2018-02-30T00:00:00Z</date>').toString(), /not a valid date/);
    rejects(xml('<date>2018-02-01</date>').toString(), /YYYY/);
    rejects(xml('<data>abc</data>').toString(), /base64/);
    rejects(xml('<true>x</true>').toString(), /must be empty/);
    rejects(xml('<foo/>').toString(), /unexpected element/);
    rejects(xml('<string>a</string><string>b</string>').toString(), /expected <\/plist>/);
    rejects(`${xml('<true/>').toString()}junk`, /unexpected text|after the root/);
    rejects(`${xml('<true/>').toString()}<plist/>`, /after the root/);
    rejects('<!DOCTYPE plist [<!ENTITY x "y">]><plist><string>&x;</string></plist>', /internal subset/);
    rejects('<?xml version="1.0" encoding="ISO-8859-1"?><plist><true/></plist>', /encoding/);
    rejects('<plist a="1" a="2"><true/></plist>', /repeated attribute/);
    rejects('<plist><string>\u0001</string></plist>', /forbids/);
    rejects(Buffer.from([0x3c, 0x70, 0xff, 0x3e]), /UTF-8/);
    rejects(`${'<array>'.repeat(600)}${'</array>'.repeat(600)}`, /deeper/);
  });
});

describe('model → XML → model', () => {
  test('random values survive (reals exactly, dates to the second)', () => {
    const next = rng(99);
    for (let i = 0; i < 300; i++) {
      const value = randomValue(next);
      assert.ok(plistEqual(parseXmlPlist(writeXmlPlist(value)), value), `case ${i}`);
    }
  });

  test('XML loses what Apple loses: sub-second dates and the sign of zero', () => {
    const back = parseXmlPlist(writeXmlPlist(plistArray([plistDate(10.75), plistReal(-0)])));
    assert.deepEqual(back, plistArray([plistDate(10), plistReal(0)]));
  });
});
