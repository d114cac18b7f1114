// Every third-party fixture APK: `signet inspect` must agree with `aapt dump badging` on package,
// versionCode, versionName, labels and SDK levels. Fixtures our zip layer refuses (unsafe entry
// names, a truncated central directory) are refused with invalid_package, and their manifests —
// extracted with `unzip -p`, as aapt would read them — must still parse and agree.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { readApkMetadata } from '../../../../src/signing/android/axml/index.ts';
import { FileSource } from '../../../../src/signing/data-source.ts';
import { SigningError } from '../../../../src/signing/errors.ts';
import { inspectPackage } from '../../../../src/signing/inspect/index.ts';
import { aaptBadging, aaptSkipReason } from '../../../support/aapt-apk.ts';
import { assertMatchesBadging } from '../../../support/badging-compare.ts';
import { needsSharedFixtures, sharedFixture } from '../../../support/fixtures.ts';

const skip = needsSharedFixtures().skip || aaptSkipReason();
const root = sharedFixture('android');

function apks(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((d) => {
    const full = path.join(dir, d.name);
    if (d.isDirectory()) return apks(full);
    return d.name.endsWith('.apk') ? [full] : [];
  }).sort();
}

/** Refusals by policy, with the reason Signet gives. aapt reads the first one anyway. */
const REFUSED: Record<string, string> = {
  'v1-only-with-lf-in-entry-name.apk': 'zip_rejected',
  'v2-only-truncated-cd.apk': 'not_a_zip',
};

function unzipEntry(apk: string, name: string): Buffer | null {
  try {
    return execFileSync('unzip', ['-p', apk, name], { maxBuffer: 64 * 1024 * 1024 });
  } catch {
    return null;
  }
}

describe('fixture APKs agree with aapt dump badging', { skip }, () => {
  const files = skip || root === null ? [] : apks(root);
  it('finds the fixture APKs', () => assert.ok(files.length >= 40, `only ${files.length} APKs under ${root}`));
  for (const file of files) {
    const base = path.basename(file);
    it(base, async () => {
      const badging = aaptBadging(file);
      const source = await FileSource.open(file);
      try {
        const info = await inspectPackage(source);
        assert.equal(info.platform, 'android');
        assert.ok(info.platform === 'android');
        assert.ok(badging !== null, 'aapt reads every APK Signet accepts');
        assertMatchesBadging(info, badging, base);
        assert.equal(REFUSED[base], undefined, 'expected a refusal');
      } catch (error) {
        if (!(error instanceof SigningError) || REFUSED[base] === undefined) throw error;
        assert.equal(error.code, 'invalid_package');
        assert.equal(error.details?.reason, REFUSED[base]);
        if (badging === null) return;
        const manifest = unzipEntry(file, 'AndroidManifest.xml');
        assert.ok(manifest !== null);
        const meta = await readApkMetadata({ manifest, resources: unzipEntry(file, 'resources.arsc'), files: { size: () => null, read: () => Promise.reject(new Error('unused')) } });
        assertMatchesBadging({
          bundleId: meta.packageName, versionCode: meta.versionCode, version: meta.versionName, minSdk: meta.minSdk.level,
          minSdkCodename: meta.minSdk.codename, targetSdk: meta.targetSdk?.level ?? null, targetSdkCodename: meta.targetSdk?.codename ?? null,
          name: meta.label, labels: meta.labels, icon: null,
        }, badging, base);
      } finally {
        await source.close();
      }
    });
  }

  it('refuses the .aab fixtures as app bundles, not APKs', async () => {
    for (const name of ['app-release-bundle.aab', 'sample.aab']) {
      const source = await FileSource.open(path.join(root!, 'aab', name));
      try {
        await assert.rejects(inspectPackage(source), (e) => e instanceof SigningError && e.code === 'invalid_package'
          && e.details?.reason === 'android_app_bundle' && /App Bundle/.test(e.message));
      } finally {
        await source.close();
      }
    }
  });
});
