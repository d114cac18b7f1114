// Info.plist overrides (ios-signing.md §13 step 7): a new bundle id for the app with its
// extensions and watch app re-prefixed (installd refuses an extension whose id does not start
// with the app's: AppexBundleIDNotPrefixed), a display name, a version. Each edited Info.plist
// is written back in the format it was read in (binary stays binary).
import { SigningError } from '../../errors.ts';
import { plistClone, plistString, writePlist, type PlistDict } from '../../plist/index.ts';
import { stringValue, type BundleNode, type IpaLayout } from '../bundle/index.ts';
import type { ResignOverrides } from './options.ts';

export interface InfoPlan {
  bundleId: string;
  /** Final Info.plist bytes (the input's when nothing changed). */
  bytes: Buffer;
  dict: PlistDict;
  changed: boolean;
}

// Apple: "The bundle ID string must contain only alphanumeric characters (A-Z, a-z, 0-9),
// hyphens (-), and periods (.)" (CFBundleIdentifier reference).
const BUNDLE_ID = /^[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)*$/;
// CFBundleShortVersionString: "three period-separated integers" (at most; fewer are accepted).
const VERSION = /^\d+(\.\d+){0,2}$/;

export function planInfoPlists(layout: IpaLayout, overrides: ResignOverrides = {}): Map<BundleNode, InfoPlan> {
  validate(overrides);
  const oldMain = layout.main.bundleId;
  const newMain = overrides.bundleId ?? oldMain;
  const rename = (id: string): string => (id === oldMain ? newMain : id.startsWith(`${oldMain}.`) ? newMain + id.slice(oldMain.length) : id);
  const plans = new Map<BundleNode, InfoPlan>();
  for (const bundle of layout.postOrder) {
    const isMain = bundle === layout.main;
    const hosted = bundle.kind === 'app' || bundle.kind === 'appex' || bundle.kind === 'xpc';
    const dict = plistClone(bundle.info.dict);
    const map = dict.value;
    let changed = false;
    const set = (key: string, value: string): void => {
      if (stringValue(dict, key) === value) return;
      map.set(key, plistString(value));
      changed = true;
    };
    const bundleId = hosted ? rename(bundle.bundleId) : bundle.bundleId;
    set('CFBundleIdentifier', bundleId);
    if (hosted && overrides.bundleId !== undefined) {
      // A watch app names its iPhone app; a WatchKit 1 extension names its watch app.
      const companion = stringValue(dict, 'WKCompanionAppBundleIdentifier');
      if (companion !== undefined) set('WKCompanionAppBundleIdentifier', rename(companion));
      const extension = map.get('NSExtension');
      const attributes = extension?.type === 'dict' ? extension.value.get('NSExtensionAttributes') : undefined;
      const watchApp = attributes?.type === 'dict' ? attributes.value.get('WKAppBundleIdentifier') : undefined;
      if (attributes?.type === 'dict' && watchApp?.type === 'string' && rename(watchApp.value) !== watchApp.value) {
        attributes.value.set('WKAppBundleIdentifier', plistString(rename(watchApp.value)));
        changed = true;
      }
    }
    if (isMain && overrides.displayName !== undefined) set('CFBundleDisplayName', overrides.displayName);
    // Extensions must carry the app's version (Xcode/App Store rule); apply it to every hosted bundle.
    if (hosted && overrides.version !== undefined) set('CFBundleShortVersionString', overrides.version);
    if (!isMain && (bundle.kind === 'appex' || bundle.kind === 'app') && !bundleId.startsWith(`${newMain}.`)) {
      throw new SigningError('ipa_invalid', `${bundle.relativeDir} has the bundle id "${bundleId}", which does not start with the app's "${newMain}." (installd: AppexBundleIDNotPrefixed)`, {
        details: { path: bundle.dir, bundleId, appBundleId: newMain },
      });
    }
    plans.set(bundle, { bundleId, dict, changed, bytes: changed ? writePlist(dict, bundle.info.format) : bundle.info.bytes });
  }
  return plans;
}

function validate(overrides: ResignOverrides): void {
  if (overrides.bundleId !== undefined && !BUNDLE_ID.test(overrides.bundleId)) {
    throw new SigningError('override_invalid', `"${overrides.bundleId}" is not a valid bundle id (letters, digits, hyphens and periods)`, { details: { bundleId: overrides.bundleId } });
  }
  if (overrides.version !== undefined && !VERSION.test(overrides.version)) {
    throw new SigningError('override_invalid', `"${overrides.version}" is not a valid version (up to three period-separated integers, e.g. 2.1.0)`, { details: { version: overrides.version } });
  }
  if (overrides.displayName !== undefined && (overrides.displayName.trim() === '' || /[\u0000-\u001f]/u.test(overrides.displayName))) {
    throw new SigningError('override_invalid', 'The display name is empty or contains control characters');
  }
}
