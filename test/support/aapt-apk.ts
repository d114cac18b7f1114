// Builds small APKs with Debian's `aapt` (the AOSP tool) so the AXML / resources.arsc parsers
// are tested on real tool output with labels, locales, densities, adaptive and vector icons —
// none of which the third-party fixtures have. aapt needs a framework android.jar for the
// `android:` attribute ids; the SDK platform is not packaged for Debian, so we build a tiny
// framework ourselves the way framework-res is built (`aapt package -x`, package id 0x01) with
// the public ids of the few attributes we use (frameworks/base/core/res/res/values/public*.xml).
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { PNG } from 'pngjs';
import { testOutputDir } from './fixtures.ts';

const FRAMEWORK_ATTRS: ReadonlyArray<readonly [string, string, string]> = [
  ['label', '0x01010001', 'reference|string'],
  ['icon', '0x01010002', 'reference'],
  ['name', '0x01010003', 'string'],
  ['debuggable', '0x0101000f', 'boolean'],
  ['src', '0x01010119', 'reference'],
  ['drawable', '0x01010199', 'reference'],
  ['minSdkVersion', '0x0101020c', 'integer|string'],
  ['versionCode', '0x0101021b', 'integer'],
  ['versionName', '0x0101021c', 'string'],
  ['targetSdkVersion', '0x01010270', 'integer|string'],
  ['roundIcon', '0x0101052c', 'reference'],
  ['versionCodeMajor', '0x01010576', 'integer'],
];

/** Whether `aapt` runs here; tests skip with this reason when it does not. */
export function aaptSkipReason(): string | false {
  const probe = spawnSync('aapt', ['version'], { encoding: 'utf8' });
  return probe.status === 0 ? false : 'aapt is not installed (Debian package `aapt`); APK oracle tests skipped';
}

/** Same for aapt2 (shipped in the same Debian package). */
export function aapt2SkipReason(): string | false {
  const probe = spawnSync('aapt2', ['version'], { encoding: 'utf8' });
  return probe.status === 0 ? aaptSkipReason() : 'aapt2 is not installed (Debian package `aapt`); aapt2 tests skipped';
}

let frameworkJar: string | null = null;

function framework(): string {
  if (frameworkJar !== null) return frameworkJar;
  // Per process: test files run in parallel and each builds its own framework.
  const dir = testOutputDir('aapt-apk', `framework-${process.pid}`);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(path.join(dir, 'res', 'values'), { recursive: true });
  writeFileSync(path.join(dir, 'AndroidManifest.xml'), '<manifest xmlns:android="http://schemas.android.com/apk/res/android" package="android"/>\n');
  const attrs = FRAMEWORK_ATTRS.map(([name, , format]) => `  <attr name="${name}" format="${format}"/>`).join('\n');
  const publics = FRAMEWORK_ATTRS.map(([name, id]) => `  <public type="attr" name="${name}" id="${id}"/>`).join('\n');
  writeFileSync(path.join(dir, 'res', 'values', 'attrs.xml'), `<resources>\n${attrs}\n${publics}\n</resources>\n`);
  const jar = path.join(dir, 'android.jar');
  execFileSync('aapt', ['package', '-f', '-x', '-M', path.join(dir, 'AndroidManifest.xml'), '-S', path.join(dir, 'res'), '-F', jar], { stdio: 'pipe' });
  frameworkJar = jar;
  return jar;
}

export interface AaptApkSpec {
  /** AndroidManifest.xml source (text XML). */
  manifest: string;
  /** Files under res/, e.g. { 'values/strings.xml': '<resources>…', 'mipmap-xxhdpi/ic.png': pngBytes }. */
  res?: Record<string, string | Buffer>;
  /** Write resources.arsc string pools as UTF-16 (aapt --utf16) instead of UTF-8. */
  utf16?: boolean;
  /**
   * Build with aapt2 (`compile` + `link --enable-sparse-encoding`), as Gradle does, instead of
   * aapt 1: UTF-8 pools, and sparse type chunks when minSdk >= 26.
   */
  aapt2?: boolean;
}

/** Builds the APK under test-output/aapt-apk/<name>/ and returns its path. */
export function buildAaptApk(name: string, spec: AaptApkSpec): string {
  const jar = framework();
  const dir = testOutputDir('aapt-apk', name);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, 'AndroidManifest.xml'), spec.manifest);
  const apk = path.join(dir, `${name}.apk`);
  for (const [rel, content] of Object.entries(spec.res ?? {})) {
    const file = path.join(dir, 'res', rel);
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, content);
  }
  const hasRes = spec.res !== undefined && Object.keys(spec.res).length > 0;
  if (spec.aapt2 === true) {
    const compiled = path.join(dir, 'compiled.zip');
    const link = ['link', '-o', apk, '-I', jar, '--manifest', path.join(dir, 'AndroidManifest.xml'), '--enable-sparse-encoding'];
    if (hasRes) {
      execFileSync('aapt2', ['compile', '--dir', path.join(dir, 'res'), '-o', compiled], { stdio: 'pipe' });
      link.push(compiled);
    }
    execFileSync('aapt2', link, { stdio: 'pipe' });
    return apk;
  }
  const args = ['package', '-f', '-M', path.join(dir, 'AndroidManifest.xml'), '-I', jar, '-F', apk];
  if (hasRes) args.push('-S', path.join(dir, 'res'));
  if (spec.utf16 === true) args.push('--utf16');
  execFileSync('aapt', args, { stdio: 'pipe' });
  return apk;
}

/** A solid-colour RGBA PNG of the given size (a standard PNG, not CgBI). */
export function solidPng(width: number, height: number, rgba: readonly [number, number, number, number] = [0x20, 0x80, 0xe0, 0xff]): Buffer {
  const png = new PNG({ width, height });
  for (let i = 0; i < width * height; i++) png.data.set(rgba, i * 4);
  return PNG.sync.write(png);
}

export interface Badging {
  package: string | null;
  versionCode: string | null;
  versionName: string | null;
  sdkVersion: string | null;
  targetSdkVersion: string | null;
  /** `application-label:` (the default-locale label). */
  label: string | null;
  /** `application-label-<locale>:` lines. */
  labels: Record<string, string>;
  /** `application-icon-<dpi>:` lines. */
  icons: Record<string, string>;
}

/**
 * Runs `aapt dump badging` and parses the lines Signet compares against; null if aapt cannot read
 * the package. aapt exits 1 after printing everything when a default-config icon is missing
 * (adaptive-only icons), so the output counts whenever it has a `package:` line.
 */
export function aaptBadging(apk: string): Badging | null {
  const run = spawnSync('aapt', ['dump', 'badging', apk], { encoding: 'utf8' });
  if (!run.stdout.startsWith('package:')) return null;
  const out: Badging = { package: null, versionCode: null, versionName: null, sdkVersion: null, targetSdkVersion: null, label: null, labels: {}, icons: {} };
  for (const line of run.stdout.split('\n')) {
    const pkg = /^package: name='([^']*)' versionCode='([^']*)' versionName='([^']*)'/.exec(line);
    if (pkg !== null) [, out.package, out.versionCode, out.versionName] = pkg as unknown as [string, string, string, string];
    const quoted = (prefix: string): string | null => (line.startsWith(prefix) ? line.slice(prefix.length).replace(/^'|'$/g, '') : null);
    out.sdkVersion = quoted('sdkVersion:') ?? out.sdkVersion;
    out.targetSdkVersion = quoted('targetSdkVersion:') ?? out.targetSdkVersion;
    out.label = quoted('application-label:') ?? out.label;
    const localized = /^application-label-([^:]+):'(.*)'$/.exec(line);
    if (localized !== null) out.labels[localized[1]!] = localized[2]!;
    const icon = /^application-icon-(\d+):'(.*)'$/.exec(line);
    if (icon !== null) out.icons[icon[1]!] = icon[2]!;
  }
  return out;
}
