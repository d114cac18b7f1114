// Which kind of app a zip holds, from its entry names alone (never the file extension).
//
//  iOS      exactly one `Payload/<Name>.app/` with `Payload/<Name>.app/Info.plist`
//           (the layout installd and App Store Connect accept; nested apps such as
//           `Payload/A.app/Watch/B.app` belong to A and do not count);
//  Android  `AndroidManifest.xml` at the root (PackageParser reads exactly that path);
//  .aab     `BundleConfig.pb` + `base/manifest/AndroidManifest.xml`: an App Bundle, not an
//           installable APK (research note android-signing.md §13) — refused with its own reason.
import { refuse } from './refuse.ts';

export type Detected =
  | { readonly platform: 'ios'; readonly appPath: string }
  | { readonly platform: 'android' };

const APP_IN_PAYLOAD = /^Payload\/([^/]+\.app)\//;
const NESTED_PAYLOAD = /^(?!__MACOSX\/)(.+?\/)Payload\/[^/]+\.app\//;

/** `entries`: the archive's entries or central directory records (only names are read). */
export function detectPlatform(entries: readonly { readonly name: string }[]): Detected {
  return detectPlatformByNames(entries.map((e) => e.name));
}

/** detectPlatform from the entries' names (ZipReader.readNames). */
export function detectPlatformByNames(names: readonly string[]): Detected {
  const apps = new Set<string>();
  for (const name of names) {
    const match = APP_IN_PAYLOAD.exec(name);
    if (match !== null) apps.add(match[1]!);
  }
  const hasManifest = names.includes('AndroidManifest.xml');

  if (apps.size > 0 && hasManifest) {
    throw refuse('ambiguous_platform', 'the archive holds both an iOS app (Payload/*.app) and an AndroidManifest.xml; upload one app per file');
  }
  if (hasManifest) return { platform: 'android' };
  if (apps.size > 1) {
    const list = [...apps].sort();
    throw refuse('several_apps', `Payload/ holds ${apps.size} apps (${list.slice(0, 5).join(', ')}); an .ipa must hold exactly one`, { details: { apps: list } });
  }
  if (apps.size === 1) {
    const app = [...apps][0]!;
    const appPath = `Payload/${app}/`;
    if (!names.includes(`${appPath}Info.plist`)) {
      throw refuse('no_info_plist', `${appPath} has no Info.plist, so it is not an app bundle`, { details: { appPath } });
    }
    return { platform: 'ios', appPath };
  }

  if (names.includes('BundleConfig.pb') || names.includes('base/manifest/AndroidManifest.xml')) {
    throw refuse('android_app_bundle', 'this is an Android App Bundle (.aab), not an APK: bundles are split into APKs by Google Play or bundletool (`bundletool build-apks --mode=universal`); upload the APK instead');
  }
  const nested = names.map((n) => NESTED_PAYLOAD.exec(n)?.[1]).find((prefix) => prefix !== undefined);
  if (nested !== undefined) {
    throw refuse('payload_not_at_root', `Payload/ is inside the folder "${nested}"; an .ipa must have Payload/ at the top of the zip (re-zip the Payload folder itself)`, { details: { prefix: nested } });
  }
  if (names.some((n) => n === 'Payload/' || n.startsWith('Payload/'))) {
    throw refuse('no_app_bundle', 'Payload/ holds no .app bundle');
  }
  throw refuse('no_app', 'the archive holds neither an iOS app (Payload/<Name>.app/Info.plist) nor an Android app (AndroidManifest.xml at the top level)');
}
