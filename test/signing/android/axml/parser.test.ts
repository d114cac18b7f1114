// AXML and resources.arsc parsers on crafted input: round trips through the test encoder, the
// layouts aapt never writes (sparse, 16-bit offsets, compact entries), and locale/density rules.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { bestTextVariant, parseAxml, readManifest, ResourceTable, type XmlElement } from '../../../../src/signing/android/axml/index.ts';
import { SigningError } from '../../../../src/signing/errors.ts';
import { encodeArsc, encodeAxml, type EncElement, type EncPackage } from '../../../support/axml-encoder.ts';

const NS = 'http://schemas.android.com/apk/res/android';
const STR = 0x03;
const REF = 0x01;
const INT = 0x10;

function manifest(attrs: EncElement['attrs'], children: EncElement[] = []): EncElement {
  return { name: 'manifest', attrs: [{ name: 'package', type: STR, string: 'com.example.app' }, ...(attrs ?? [])], children };
}

/** Strips an element tree to what the encoder's model carries, for deep comparison. */
function shape(e: XmlElement): unknown {
  return {
    ns: e.namespace, name: e.name,
    attrs: e.attributes.map((a) => ({ ns: a.namespace, name: a.name, resId: a.resourceId, type: a.value.type, data: a.value.type === STR ? a.stringValue : a.value.data })),
    children: e.children.map(shape),
  };
}

describe('AXML', () => {
  for (const utf8 of [false, true]) {
    it(`round-trips an element tree (${utf8 ? 'UTF-8' : 'UTF-16'} pool)`, () => {
      // Long enough for two-part length prefixes; UTF-8 pools cap a string at 0x7fff bytes.
      const long = 'ü'.repeat(300) + '漢字'.repeat(utf8 ? 5000 : 20000);
      const tree: EncElement = manifest([
        { ns: NS, name: 'versionCode', resId: 0x0101021b, type: INT, data: 42 },
        { ns: NS, name: 'versionName', resId: 0x0101021c, type: STR, string: long },
      ], [{ name: 'application', attrs: [{ ns: NS, name: 'label', resId: 0x01010001, type: REF, data: 0x7f010000 }], children: [{ name: 'activity' }] }]);
      const doc = parseAxml(encodeAxml(tree, { utf8 }));
      assert.deepEqual(shape(doc.root), {
        ns: null, name: 'manifest',
        attrs: [
          { ns: null, name: 'package', resId: 0, type: STR, data: 'com.example.app' },
          { ns: NS, name: 'versionCode', resId: 0x0101021b, type: INT, data: 42 },
          { ns: NS, name: 'versionName', resId: 0x0101021c, type: STR, data: long },
        ],
        children: [{ ns: null, name: 'application', attrs: [{ ns: NS, name: 'label', resId: 0x01010001, type: REF, data: 0x7f010000 }], children: [{ ns: null, name: 'activity', attrs: [], children: [] }] }],
      });
    });
  }

  it('matches attributes by resource id even when their names are obfuscated', () => {
    const doc = parseAxml(encodeAxml(manifest([
      { ns: NS, name: 'x1', resId: 0x0101021b, type: INT, data: 7 },
      { ns: NS, name: 'x2', resId: 0x0101021c, type: STR, string: '7.0' },
    ])));
    const info = readManifest(doc, null);
    assert.equal(info.versionCode, 7);
    assert.equal(info.versionName, '7.0');
  });

  it('reads a codename minSdk as CUR_DEVELOPMENT and defaults minSdk to 1', () => {
    const withCodename = readManifest(parseAxml(encodeAxml(manifest([], [{ name: 'uses-sdk', attrs: [{ ns: NS, name: 'minSdkVersion', resId: 0x0101020c, type: STR, string: 'Baklava' }] }]))), null);
    assert.deepEqual(withCodename.minSdk, { level: 10000, codename: 'Baklava' });
    assert.equal(withCodename.targetSdk, null);
    const bare = readManifest(parseAxml(encodeAxml(manifest([]))), null);
    assert.deepEqual(bare.minSdk, { level: 1, codename: null });
  });

  it('refuses documents that are not manifests or not AXML', () => {
    assert.throws(() => readManifest(parseAxml(encodeAxml({ name: 'vector' })), null), { code: 'manifest_invalid', message: /not <manifest>/ });
    assert.throws(() => readManifest(parseAxml(encodeAxml({ name: 'manifest' })), null), { code: 'manifest_invalid', message: /no package/ });
    assert.throws(() => parseAxml(Buffer.from('<manifest/>')), (e) => e instanceof SigningError && e.code === 'manifest_invalid');
    assert.throws(() => parseAxml(Buffer.alloc(0)), { code: 'manifest_invalid' });
  });

  it('refuses a start tag without its end tag and pathological nesting', () => {
    const good = encodeAxml(manifest([], [{ name: 'application' }]));
    // Drop the last chunk (the root's end tag, 24 bytes) and fix the document size.
    const cut = Buffer.from(good.subarray(0, good.length - 24));
    cut.writeUInt32LE(cut.length, 4);
    assert.throws(() => parseAxml(cut), { code: 'manifest_invalid', message: /not closed/ });
    let deep: EncElement = { name: 'x' };
    for (let i = 0; i < 300; i++) deep = { name: 'x', children: [deep] };
    assert.throws(() => parseAxml(encodeAxml(deep)), { code: 'manifest_invalid', message: /deeper than/ });
  });
});

const STRING_TYPE = 1;
function table(pkg: Partial<EncPackage> & { types: EncPackage['types'] }): ResourceTable {
  return ResourceTable.parse(encodeArsc([{ id: 0x7f, name: 'com.example.app', typeNames: ['string', 'mipmap'], ...pkg }]));
}

describe('resources.arsc', () => {
  for (const layout of ['offset32', 'offset16', 'sparse'] as const) {
    for (const compact of [false, true]) {
      it(`finds entries in ${layout}${compact ? ' compact' : ''} type chunks`, () => {
        const t = table({
          types: [
            { id: STRING_TYPE, layout, compact, entries: [{ key: 'a', type: STR, string: 'A' }, null, { key: 'c', type: INT, data: 99 }] },
            { id: STRING_TYPE, layout, compact, config: { language: 'fr' }, entries: [null, null, { key: 'c', type: INT, data: 100 }] },
          ],
        });
        const a = t.variants(0x7f010000);
        assert.equal(a.length, 1);
        assert.equal(a[0]!.value!.type, STR);
        assert.equal(t.strings.get(a[0]!.value!.data), 'A');
        assert.deepEqual(t.variants(0x7f010001), []);
        assert.deepEqual(t.variants(0x7f010002).map((v) => [v.config.locale, v.value?.data]), [['', 99], ['fr', 100]]);
        assert.deepEqual(t.variants(0x7f010003), []);
        assert.equal(t.nameOf(0x7f010002), 'string/c');
        assert.deepEqual(t.variants(0x7f020000), []);
        assert.deepEqual(t.variants(0x12010000), []);
      });
    }
  }

  it('decodes locales, 3-letter packed languages, densities and qualifiers', () => {
    const t = table({
      types: [
        { id: STRING_TYPE, config: { language: 'fil', region: 'PH' }, entries: [{ key: 'a', type: STR, string: 'fil' }] },
        { id: STRING_TYPE, config: { language: 'en', region: 'US' }, entries: [{ key: 'a', type: STR, string: 'en-US' }] },
        { id: STRING_TYPE, config: { language: 'en' }, entries: [{ key: 'a', type: STR, string: 'en' }] },
        { id: STRING_TYPE, config: { language: 'en', night: true }, entries: [{ key: 'a', type: STR, string: 'en-night' }] },
        { id: 2, config: { density: 480, sdkVersion: 4 }, entries: [{ key: 'ic', type: STR, string: 'res/x.png' }] },
      ],
    });
    const variants = t.variants(0x7f010000);
    assert.deepEqual(variants.map((v) => [v.config.locale, v.config.otherQualifiers]), [['fil-PH', 0], ['en-US', 0], ['en', 0], ['en', 1]]);
    // Best locale: no default here, so `en` beats `en-US`, and fewer qualifiers win within `en`.
    assert.equal(t.strings.get(bestTextVariant(variants)!.value!.data), 'en');
    const icon = t.variants(0x7f020000)[0]!.config;
    assert.equal(icon.density, 480);
    assert.equal(icon.sdkVersion, 4);
  });

  it('treats complex (bag) entries as having no simple value', () => {
    const t = table({ types: [{ id: STRING_TYPE, entries: [{ key: 'arr', type: 0, complex: true }] }] });
    assert.deepEqual(t.variants(0x7f010000).map((v) => v.value), [null]);
  });

  it('refuses tables that are not resources.arsc', () => {
    assert.throws(() => ResourceTable.parse(encodeAxml({ name: 'x' })), { code: 'manifest_invalid', message: /RES_TABLE_TYPE/ });
    assert.throws(() => ResourceTable.parse(Buffer.from([2, 0, 12, 0, 12, 0, 0, 0, 0, 0, 0, 0])), { code: 'manifest_invalid', message: /no global value string pool/ });
  });
});

describe('manifest values through resources.arsc', () => {
  const t = table({
    typeNames: ['string', 'integer'],
    types: [
      { id: 1, entries: [
        { key: 'app', type: REF, data: 0x7f010001 }, // alias → string/real
        { key: 'real', type: STR, string: 'Through an alias' },
        { key: 'loop_a', type: REF, data: 0x7f010003 },
        { key: 'loop_b', type: REF, data: 0x7f010002 },
        { key: 'vn', type: STR, string: '9.9' },
      ] },
      { id: 2, entries: [{ key: 'vc', type: INT, data: 1234 }] },
    ],
  });
  const doc = (labelRef: number): ReturnType<typeof parseAxml> => parseAxml(encodeAxml(manifest([
    { ns: NS, name: 'versionCode', resId: 0x0101021b, type: REF, data: 0x7f020000 },
    { ns: NS, name: 'versionName', resId: 0x0101021c, type: REF, data: 0x7f010004 },
  ], [{ name: 'application', attrs: [{ ns: NS, name: 'label', resId: 0x01010001, type: REF, data: labelRef }] }])));

  it('resolves versionCode, versionName and a label behind an alias', () => {
    const info = readManifest(doc(0x7f010000), t);
    assert.deepEqual([info.versionCode, info.versionName, info.label, info.labelIssue], [1234, '9.9', 'Through an alias', null]);
  });

  it('reports a reference cycle or a framework reference as a label issue, not a crash', () => {
    const cyclic = readManifest(doc(0x7f010002), t);
    assert.equal(cyclic.label, null);
    assert.match(cyclic.labelIssue ?? '', /cycle/);
    const framework = readManifest(doc(0x01040000), t);
    assert.match(framework.labelIssue ?? '', /Android framework/);
    const noTable = readManifest(parseAxml(encodeAxml(manifest([], [{ name: 'application', attrs: [{ ns: NS, name: 'label', resId: 0x01010001, type: REF, data: 0x7f010000 }] }]))), null);
    assert.match(noTable.labelIssue ?? '', /no resources\.arsc/);
  });

  it('refuses a versionCode that cannot be resolved', () => {
    assert.throws(() => readManifest(doc(0x7f010000), null), { code: 'manifest_invalid', message: /versionCode: .*no resources\.arsc/ });
  });
});
