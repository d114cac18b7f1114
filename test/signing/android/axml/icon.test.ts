// Launcher icon resolution on crafted tables: formats sniffed from bytes (not names), density
// ranking, XML drawable chains, cycles, and every "no icon" reason.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MAX_ICON_BYTES, MAX_ICON_FILE_READS, resolveLauncherIcon, ResourceTable, sniffRaster, type ResourceFiles } from '../../../../src/signing/android/axml/index.ts';
import { encodeArsc, encodeAxml, type EncType } from '../../../support/axml-encoder.ts';

const NS = 'http://schemas.android.com/apk/res/android';
const STR = 0x03;
const REF = 0x01;
const COLOR = 0x1c;
const PNG = Buffer.concat([Buffer.from('89504e470d0a1a0a', 'hex'), Buffer.alloc(24)]);
const WEBP = Buffer.concat([Buffer.from('RIFF'), Buffer.alloc(4), Buffer.from('WEBPVP8 '), Buffer.alloc(8)]);
const JPEG = Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0, 0x10]);
const DRAWABLE = 0x01010199;
const SRC = 0x01010119;

/** Type 1 = mipmap (icons), type 2 = drawable; entry ids 0x7f01NNNN / 0x7f02NNNN. */
function table(types: EncType[]): ResourceTable {
  return ResourceTable.parse(encodeArsc([{ id: 0x7f, name: 'p', typeNames: ['mipmap', 'drawable'], types }]));
}

function files(map: Record<string, Buffer>, sizes: Record<string, number> = {}): ResourceFiles {
  return {
    size: (path) => sizes[path] ?? map[path]?.length ?? null,
    read: async (path) => map[path] ?? assert.fail(`unexpected read of ${path}`),
  };
}

const ref = (id: number) => ({ type: REF, data: id });
const adaptive = (foregroundRef: number): Buffer => encodeAxml({ name: 'adaptive-icon', attrs: [], children: [
  { name: 'background', attrs: [{ ns: NS, name: 'drawable', resId: DRAWABLE, type: REF, data: 0x7f020009 }] },
  { name: 'foreground', attrs: [{ ns: NS, name: 'drawable', resId: DRAWABLE, type: REF, data: foregroundRef }] },
] });

describe('launcher icon', () => {
  it('sniffs PNG, WebP and JPEG from the bytes', () => {
    assert.deepEqual([PNG, WEBP, JPEG, Buffer.from('GIF89a'), Buffer.alloc(0)].map(sniffRaster), ['png', 'webp', 'jpeg', null, null]);
  });

  it('takes the highest real density; nodpi and anydpi rank last; names need no extension', async () => {
    const t = table([
      { id: 1, config: { density: 0xffff }, entries: [{ key: 'ic', type: STR, string: 'res/nodpi/ic' }] },
      { id: 1, config: { density: 240 }, entries: [{ key: 'ic', type: STR, string: 'res/hdpi/ic' }] },
      { id: 1, config: { density: 480 }, entries: [{ key: 'ic', type: STR, string: 'res/xxhdpi/ic' }] },
      { id: 1, config: { density: 320 }, entries: [{ key: 'ic', type: STR, string: 'res/xhdpi/ic' }] },
    ]);
    const result = await resolveLauncherIcon(t, [ref(0x7f010000)], files({ 'res/nodpi/ic': PNG, 'res/hdpi/ic': PNG, 'res/xxhdpi/ic': WEBP, 'res/xhdpi/ic': JPEG }));
    assert.deepEqual([result.icon?.path, result.icon?.format, result.icon?.density, result.icon?.resource], ['res/xxhdpi/ic', 'webp', 480, 'mipmap/ic']);
  });

  it('follows <bitmap android:src> behind an adaptive foreground', async () => {
    const bitmap = encodeAxml({ name: 'bitmap', attrs: [{ ns: NS, name: 'src', resId: SRC, type: REF, data: 0x7f020001 }] });
    const t = table([
      { id: 1, config: { density: 0xfffe, sdkVersion: 26 }, entries: [{ key: 'ic', type: STR, string: 'res/anydpi/ic.xml' }] },
      { id: 2, entries: [{ key: 'fg', type: STR, string: 'res/drawable/fg.xml' }, { key: 'bits', type: STR, string: 'res/drawable/bits.png' }] },
    ]);
    const result = await resolveLauncherIcon(t, [ref(0x7f010000)], files({ 'res/anydpi/ic.xml': adaptive(0x7f020000), 'res/drawable/fg.xml': bitmap, 'res/drawable/bits.png': PNG }));
    assert.deepEqual([result.icon?.path, result.icon?.source, result.issue], ['res/drawable/bits.png', 'adaptive-foreground', null]);
  });

  it('ends cycles between XML drawables and between references with a reason', async () => {
    const t = table([
      { id: 1, entries: [{ key: 'ic', type: STR, string: 'res/ic.xml' }, { key: 'a', type: REF, data: 0x7f010002 }, { key: 'b', type: REF, data: 0x7f010001 }] },
    ]);
    const selfAdaptive = await resolveLauncherIcon(t, [ref(0x7f010000)], files({ 'res/ic.xml': adaptive(0x7f010000) }));
    assert.equal(selfAdaptive.icon, null);
    const loop = await resolveLauncherIcon(t, [ref(0x7f010001)], files({}));
    assert.equal(loop.icon, null);
    assert.match(loop.issue ?? '', /no raster image found/);
  });

  it('explains why there is no icon', async () => {
    const t = table([
      { id: 1, entries: [
        { key: 'missing', type: STR, string: 'res/gone.png' },
        { key: 'huge', type: STR, string: 'res/huge.png' },
        { key: 'text', type: STR, string: 'res/readme.txt' },
        { key: 'colour', type: STR, string: 'res/colour.xml' },
      ] },
      { id: 2, entries: [{ key: 'solid', type: COLOR, data: 0xff00ff00 }] },
    ]);
    const colourForeground = encodeAxml({ name: 'adaptive-icon', children: [{ name: 'foreground', attrs: [{ ns: NS, name: 'drawable', resId: DRAWABLE, type: REF, data: 0x7f020000 }] }] });
    const f = files({ 'res/readme.txt': Buffer.from('hello'), 'res/colour.xml': colourForeground }, { 'res/huge.png': MAX_ICON_BYTES + 1 });
    const cases: Array<[number[], RegExp]> = [
      [[], /declares no application or launcher icon/],
      [[0x7f010000], /res\/gone\.png is named in resources\.arsc but missing from the APK/],
      [[0x7f010001], /res\/huge\.png is \d+ bytes, larger than an icon can be/],
      [[0x7f010002], /res\/readme\.txt is neither PNG, WebP, JPEG nor a compiled XML drawable/],
      [[0x7f010003], /no raster image found/],
      [[0x7f01ffff], /icon resource 0x7f01ffff is not in resources\.arsc/],
    ];
    for (const [ids, reason] of cases) {
      const result = await resolveLauncherIcon(t, ids.map(ref), f);
      assert.equal(result.icon, null);
      assert.match(result.issue ?? '', reason);
    }
    const noTable = await resolveLauncherIcon(null, [ref(0x7f010000)], f);
    assert.match(noTable.issue ?? '', /no resources\.arsc/);
  });

  it('stops after a bounded number of file reads', async () => {
    const types: EncType[] = Array.from({ length: 100 }, (_, i) => ({ id: 1, config: { density: 100 + i }, entries: [{ key: 'ic', type: STR, string: `res/f${i}` }] }));
    let reads = 0;
    const result = await resolveLauncherIcon(table(types), [ref(0x7f010000)], {
      size: () => 5,
      read: async () => { reads++; return Buffer.from('text!'); },
    });
    assert.equal(result.icon, null);
    assert.equal(reads, MAX_ICON_FILE_READS);
  });
});
