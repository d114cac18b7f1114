// APKs built by aapt from source in the test (labels in several locales, densities, adaptive
// and vector icons, references, UTF-16 tables): Signet must agree with `aapt dump badging` and
// pick the icon its documented rules say.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { BufferSource, FileSource } from '../../../../src/signing/data-source.ts';
import { readFileSync } from 'node:fs';
import { inspectPackage, readPngHeader, type AndroidPackageInfo } from '../../../../src/signing/inspect/index.ts';
import { readApkMetadata } from '../../../../src/signing/android/axml/index.ts';
import { aapt2SkipReason, aaptBadging, aaptSkipReason, buildAaptApk, solidPng, type AaptApkSpec } from '../../../support/aapt-apk.ts';
import { assertMatchesBadging } from '../../../support/badging-compare.ts';
import { ZipReader } from '../../../../src/signing/zip/index.ts';

const skip = aaptSkipReason();
const NS = 'xmlns:android="http://schemas.android.com/apk/res/android"';
const manifest = (app: string, attrs = 'android:versionCode="42" android:versionName="2.1 [beta]"', sdk = '<uses-sdk android:minSdkVersion="21" android:targetSdkVersion="34"/>'): string =>
  `<manifest ${NS} package="com.example.demo" ${attrs}>${sdk}${app}</manifest>`;
const strings = (pairs: Record<string, string>): string =>
  `<resources>${Object.entries(pairs).map(([k, v]) => `<string name="${k}">${v}</string>`).join('')}</resources>`;
const adaptive = (fg: string): string =>
  `<adaptive-icon ${NS}><background android:drawable="@color/bg"/><foreground android:drawable="${fg}"/></adaptive-icon>`;
const vector = `<vector ${NS}><path/></vector>`;
const colors = '<resources><color name="bg">#ff3366</color></resources>';

async function inspectBuilt(name: string, spec: AaptApkSpec): Promise<{ info: AndroidPackageInfo; apk: string }> {
  const apk = buildAaptApk(name, spec);
  const source = await FileSource.open(apk);
  try {
    const info = await inspectPackage(source);
    assert.equal(info.platform, 'android');
    assert.ok(info.platform === 'android');
    const badging = aaptBadging(apk);
    assert.ok(badging !== null, 'aapt reads the APK');
    assertMatchesBadging(info, badging, name);
    return { info, apk };
  } finally {
    await source.close();
  }
}

describe('aapt-built APKs', { skip }, () => {
  for (const utf16 of [false, true]) {
    it(`labels per locale and the highest-density PNG icon (${utf16 ? 'UTF-16' : 'UTF-8'} resource strings)`, async () => {
      const { info } = await inspectBuilt(`labels-${utf16 ? 'utf16' : 'utf8'}`, {
        utf16,
        manifest: manifest('<application android:label="@string/app_name" android:icon="@mipmap/ic_launcher"/>'),
        res: {
          'values/strings.xml': strings({ app_name: 'Démo “App” 🚀' }),
          'values-fr/strings.xml': strings({ app_name: 'Appli Démo' }),
          'values-ja/strings.xml': strings({ app_name: 'デモ' }),
          'mipmap-mdpi/ic_launcher.png': solidPng(48, 48),
          'mipmap-xxhdpi/ic_launcher.png': solidPng(144, 144),
          'mipmap-hdpi/ic_launcher.png': solidPng(72, 72),
        },
      });
      assert.equal(info.name, 'Démo “App” 🚀');
      assert.deepEqual(info.labels, { '': 'Démo “App” 🚀', fr: 'Appli Démo', ja: 'デモ' });
      assert.equal(info.version, '2.1 [beta]');
      assert.equal(info.build, '42');
      assert.deepEqual([info.minSdk, info.targetSdk], [21, 34]);
      assert.equal(info.icon?.path, 'res/mipmap-xxhdpi-v4/ic_launcher.png');
      assert.deepEqual([info.icon.format, info.icon.density, info.icon.source], ['png', 480, 'legacy']);
      // aapt re-encodes PNGs ("crunch"), so check the image header rather than the bytes.
      assert.deepEqual([readPngHeader(info.icon.bytes!)?.width, readPngHeader(info.icon.bytes!)?.height], [144, 144]);
      assert.equal(info.iconIssue, null);
    });
  }

  it('picks `en` when no default-locale label exists, and resolves versionName references', async () => {
    const { info } = await inspectBuilt('no-default-label', {
      manifest: manifest('<application android:label="@string/app"/>', 'android:versionCode="7" android:versionName="@string/vn"'),
      res: {
        'values/strings.xml': strings({ vn: '3.0-rc1' }),
        'values-de/strings.xml': strings({ app: 'Deutsch' }),
        'values-en-rUS/strings.xml': strings({ app: 'American' }),
        'values-en/strings.xml': strings({ app: 'English' }),
      },
    });
    assert.equal(info.name, 'English');
    assert.equal(info.version, '3.0-rc1');
    assert.equal(info.icon, null);
    assert.match(info.iconIssue ?? '', /declares no application or launcher icon/);
  });

  it('prefers a legacy raster icon over an adaptive icon', async () => {
    const { info } = await inspectBuilt('adaptive-and-legacy', {
      manifest: manifest('<application android:label="A" android:icon="@mipmap/ic_launcher"/>', 'android:versionCode="1"', '<uses-sdk android:minSdkVersion="21" android:targetSdkVersion="34"/>'),
      res: {
        'values/colors.xml': colors,
        'mipmap-anydpi-v26/ic_launcher.xml': adaptive('@mipmap/ic_fg'),
        'mipmap-xxxhdpi/ic_fg.png': solidPng(432, 432),
        'mipmap-xhdpi/ic_launcher.png': solidPng(96, 96),
      },
    });
    assert.equal(info.icon?.path, 'res/mipmap-xhdpi-v4/ic_launcher.png');
    assert.equal(info.icon.source, 'legacy');
  });

  it('falls back to the adaptive icon foreground when no legacy icon exists', async () => {
    const { info } = await inspectBuilt('adaptive-only', {
      manifest: manifest('<application android:label="A" android:icon="@mipmap/ic_launcher"/>', 'android:versionCode="1"', '<uses-sdk android:minSdkVersion="26" android:targetSdkVersion="34"/>'),
      res: {
        'values/colors.xml': colors,
        'mipmap-anydpi-v26/ic_launcher.xml': adaptive('@drawable/fg'),
        'drawable-xxxhdpi/fg.png': solidPng(432, 432),
        'drawable-mdpi/fg.png': solidPng(108, 108),
      },
    });
    assert.equal(info.icon?.path, 'res/drawable-xxxhdpi-v4/fg.png');
    assert.deepEqual([info.icon.source, info.icon.density], ['adaptive-foreground', 640]);
  });

  it('says plainly when the icon exists only as vector drawables', async () => {
    const { info } = await inspectBuilt('vector-only', {
      manifest: manifest('<application android:label="A" android:icon="@mipmap/ic_launcher"/>', 'android:versionCode="1"', '<uses-sdk android:minSdkVersion="26"/>'),
      res: {
        'values/colors.xml': colors,
        'mipmap-anydpi-v26/ic_launcher.xml': adaptive('@drawable/fg'),
        'drawable/fg.xml': vector,
      },
    });
    assert.equal(info.icon, null);
    assert.match(info.iconIssue ?? '', /only as vector drawables \(res\/drawable\/fg\.xml\)/);
  });

  it('uses the round icon when the main icon is vector-only, and the launcher activity icon first', async () => {
    const round = await inspectBuilt('round-fallback', {
      manifest: manifest('<application android:label="A" android:icon="@drawable/vec" android:roundIcon="@mipmap/round"/>', 'android:versionCode="1"'),
      res: { 'drawable/vec.xml': vector, 'mipmap-hdpi/round.png': solidPng(72, 72) },
    });
    assert.equal(round.info.icon?.path, 'res/mipmap-hdpi-v4/round.png');
    const activity = await inspectBuilt('launcher-activity', {
      manifest: manifest(`<application android:label="A" android:icon="@mipmap/app"><activity android:name=".Other"/><activity android:name=".Main" android:icon="@mipmap/main"><intent-filter><action android:name="android.intent.action.MAIN"/><category android:name="android.intent.category.LAUNCHER"/></intent-filter></activity></application>`, 'android:versionCode="1"'),
      res: { 'mipmap-xxhdpi/app.png': solidPng(144, 144), 'mipmap-mdpi/main.png': solidPng(48, 48) },
    });
    assert.equal(activity.info.icon?.path, 'res/mipmap-mdpi-v4/main.png');
  });

  it('reads manifests without <uses-sdk> or versions, and SDK codenames', async () => {
    const bare = await inspectBuilt('bare', {
      manifest: `<manifest ${NS} package="com.example.bare"><application android:label="Bare"/></manifest>`,
      res: { 'values/strings.xml': strings({ unused: 'x' }) },
    });
    assert.deepEqual([bare.info.minSdk, bare.info.targetSdk, bare.info.versionCode, bare.info.version, bare.info.build], [1, null, 0, null, '0']);
    const codename = await inspectBuilt('codename', {
      manifest: manifest('<application android:label="C"/>', 'android:versionCode="5"', '<uses-sdk android:minSdkVersion="Q" android:targetSdkVersion="Q"/>'),
      res: { 'values/strings.xml': strings({ unused: 'x' }) },
    });
    assert.deepEqual([codename.info.minSdk, codename.info.minSdkCodename, codename.info.targetSdkCodename], [10000, 'Q', 'Q']);
    // PackageInfo.getLongVersionCode(): versionCodeMajor << 32 | versionCode; aapt prints the low part.
    const major = await inspectBuilt('version-code-major', {
      manifest: manifest('<application android:label="M"/>', 'android:versionCodeMajor="1" android:versionCode="5"'),
      res: { 'values/strings.xml': strings({ unused: 'x' }) },
    });
    assert.deepEqual([major.info.versionCode, major.info.versionCodeMajor, major.info.build], [5, 1, '4294967301']);
  });

  it('reports a missing icon file and skips icon bytes on request', async () => {
    const apk = buildAaptApk('icon-file-missing', {
      manifest: manifest('<application android:label="A" android:icon="@mipmap/ic"/>'),
      res: { 'mipmap-hdpi/ic.png': solidPng(72, 72) },
    });
    const zip = await ZipReader.open(new BufferSource(readFileSync(apk)));
    const read = (name: string): Promise<Buffer> => zip.readEntry(zip.getEntry(name)!, 1 << 20);
    const meta = await readApkMetadata({
      manifest: await read('AndroidManifest.xml'), resources: await read('resources.arsc'),
      files: { size: () => null, read: () => Promise.reject(new Error('not called')) },
    });
    assert.equal(meta.icon, null);
    assert.match(meta.iconIssue ?? '', /res\/mipmap-hdpi-v4\/ic\.png is named in resources\.arsc but missing from the APK/);
    const source = await FileSource.open(apk);
    try {
      const info = await inspectPackage(source, { iconBytes: false });
      assert.equal(info.icon?.path, 'res/mipmap-hdpi-v4/ic.png');
      assert.equal(info.icon.bytes, null);
    } finally {
      await source.close();
    }
  });
});

/** Whether resources.arsc has a type chunk with ResTable_type::FLAG_SPARSE (ResourceTypes.h). */
function hasSparseType(arsc: Buffer): boolean {
  const walk = (start: number, end: number): boolean => {
    for (let pos = start; pos + 8 <= end;) {
      const type = arsc.readUInt16LE(pos);
      const headerSize = arsc.readUInt16LE(pos + 2);
      const size = arsc.readUInt32LE(pos + 4);
      if (type === 0x0201 && (arsc[pos + 9]! & 0x01) !== 0) return true;
      if ((type === 0x0002 || type === 0x0200) && walk(pos + headerSize, pos + size)) return true;
      pos += size;
    }
    return false;
  };
  return walk(0, arsc.length);
}

describe('aapt2-built APKs (Gradle-style, sparse resource types)', { skip: aapt2SkipReason() }, () => {
  it('reads sparse tables, anydpi adaptive icons and per-locale labels', async () => {
    const { info, apk } = await inspectBuilt('aapt2-sparse', {
      aapt2: true,
      manifest: manifest('<application android:label="@string/app" android:icon="@mipmap/ic" android:roundIcon="@mipmap/ic"/>', 'android:versionCode="77" android:versionName="7.7"', '<uses-sdk android:minSdkVersion="26" android:targetSdkVersion="33"/>'),
      res: {
        'values/strings.xml': strings({ app: 'Two', b: 'B', c: 'C' }),
        'values-fr/strings.xml': strings({ c: 'Ç' }),
        'values-de/strings.xml': strings({ app: 'Zwei' }),
        'values-zh-rCN/strings.xml': strings({ app: '二' }),
        'values-b+sr+Latn/strings.xml': strings({ app: 'Dva' }),
        'values/colors.xml': colors,
        'mipmap-anydpi-v26/ic.xml': adaptive('@mipmap/fg'),
        'mipmap-xxhdpi/fg.png': solidPng(324, 324),
        'mipmap-hdpi/fg.png': solidPng(162, 162),
      },
    });
    const zip = await ZipReader.open(new BufferSource(readFileSync(apk)));
    assert.ok(hasSparseType(await zip.readEntry(zip.getEntry('resources.arsc')!, 1 << 20)), 'aapt2 wrote sparse type chunks');
    assert.deepEqual([info.name, info.labels, info.version, info.build, info.minSdk, info.targetSdk], ['Two', { '': 'Two', de: 'Zwei', 'zh-CN': '二', 'sr-Latn': 'Dva' }, '7.7', '77', 26, 33]);
    assert.equal(info.icon?.path, 'res/mipmap-xxhdpi-v4/fg.png');
    assert.deepEqual([info.icon.source, info.icon.width], ['adaptive-foreground', 324]);
  });
});
