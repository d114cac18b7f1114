// What an APK says about itself in AndroidManifest.xml: package, versions, SDK levels, label
// and the launcher icon's resource. Attributes are matched by resource id (see xml-parser.ts).
import { invalid } from './chunk.ts';
import { isInteger, isReference, signed, TYPE_INT_BOOLEAN, TYPE_STRING, type ResValue } from './res-value.ts';
import { dereference, resolveText, resolveTextByLocale, type Resolved } from './resolve.ts';
import type { ResourceTable } from './resource-table.ts';
import { findAttribute, type XmlAttribute, type XmlDocument, type XmlElement } from './xml-parser.ts';

// android.R.attr ids (frameworks/base/core/res/res/values/public*.xml; research note §14.1).
export const ATTR_LABEL = 0x01010001;
export const ATTR_ICON = 0x01010002;
export const ATTR_NAME = 0x01010003;
export const ATTR_DEBUGGABLE = 0x0101000f;
export const ATTR_MIN_SDK_VERSION = 0x0101020c;
export const ATTR_VERSION_CODE = 0x0101021b;
export const ATTR_VERSION_NAME = 0x0101021c;
export const ATTR_TARGET_SDK_VERSION = 0x01010270;
export const ATTR_ROUND_ICON = 0x0101052c;
export const ATTR_VERSION_CODE_MAJOR = 0x01010576;

/** android.os.Build.VERSION_CODES.CUR_DEVELOPMENT: the level a pre-release codename stands for. */
export const CUR_DEVELOPMENT = 10000;

export interface SdkLevel {
  /** The API level; a pre-release codename counts as CUR_DEVELOPMENT (10000), as on devices. */
  readonly level: number;
  /** The codename (e.g. "VanillaIceCream") when the manifest gives one instead of a number. */
  readonly codename: string | null;
}

export interface ManifestInfo {
  readonly packageName: string;
  /** android:versionCode (low 32 bits, what `aapt dump badging` prints). */
  readonly versionCode: number;
  /** android:versionCodeMajor (high 32 bits of the long version code), 0 when absent. */
  readonly versionCodeMajor: number;
  readonly versionName: string | null;
  /** <uses-sdk android:minSdkVersion>; Android's default is 1 when absent. */
  readonly minSdk: SdkLevel;
  /** <uses-sdk android:targetSdkVersion>, or null when absent (devices then use minSdk). */
  readonly targetSdk: SdkLevel | null;
  /** The application label in the best locale (see resolve.ts), or null with `labelIssue`. */
  readonly label: string | null;
  readonly labelIssue: string | null;
  /** The label per locale ("" = default), for install pages. */
  readonly labels: Readonly<Record<string, string>>;
  readonly debuggable: boolean;
  /**
   * Icon resources to try, best first: the launcher activity's icon, the application's icon,
   * the application's round icon (deduplicated).
   */
  readonly iconCandidates: readonly ResValue[];
}

export function readManifest(doc: XmlDocument, table: ResourceTable | null): ManifestInfo {
  const root = doc.root;
  // PackageParser.parseBaseApk: the root element must be <manifest>.
  if (root.name !== 'manifest') invalid(`the root element is <${root.name}>, not <manifest>`);
  const pkgAttr = findAttribute(root, null, 'package');
  const packageName = pkgAttr?.stringValue ?? pkgAttr?.rawValue ?? null;
  if (packageName === null || packageName === '') invalid('<manifest> has no package attribute');

  const versionCode = readInteger(table, findAttribute(root, ATTR_VERSION_CODE, 'versionCode')) ?? 0;
  const versionCodeMajor = readInteger(table, findAttribute(root, ATTR_VERSION_CODE_MAJOR, 'versionCodeMajor')) ?? 0;
  const versionNameAttr = findAttribute(root, ATTR_VERSION_NAME, 'versionName');
  const versionName = versionNameAttr === undefined ? null : textOrNull(resolveText(table, versionNameAttr));

  const usesSdk = root.children.find((c) => c.name === 'uses-sdk');
  const minSdk = (usesSdk && readSdk(table, findAttribute(usesSdk, ATTR_MIN_SDK_VERSION, 'minSdkVersion'))) ?? { level: 1, codename: null };
  const targetSdk = (usesSdk && readSdk(table, findAttribute(usesSdk, ATTR_TARGET_SDK_VERSION, 'targetSdkVersion'))) ?? null;

  const application = root.children.find((c) => c.name === 'application');
  let label: string | null = null;
  let labelIssue: string | null = 'the manifest declares no application label';
  let labels: Record<string, string> = {};
  const labelAttr = application && findAttribute(application, ATTR_LABEL, 'label');
  if (labelAttr !== undefined) {
    const resolved = resolveText(table, labelAttr);
    label = resolved.ok ? resolved.value : null;
    labelIssue = resolved.ok ? null : `application label: ${resolved.reason}`;
    labels = resolveTextByLocale(table, labelAttr);
  }
  const debuggableAttr = application && findAttribute(application, ATTR_DEBUGGABLE, 'debuggable');
  const debuggable = debuggableAttr?.value.type === TYPE_INT_BOOLEAN && debuggableAttr.value.data !== 0;

  const iconCandidates: ResValue[] = [];
  const addIcon = (element: XmlElement | undefined, id: number, name: string): void => {
    const attr = element && findAttribute(element, id, name);
    if (attr !== undefined && isReference(attr.value) && attr.value.data !== 0
      && !iconCandidates.some((v) => v.data === attr.value.data)) iconCandidates.push(attr.value);
  };
  addIcon(application && launcherActivity(application), ATTR_ICON, 'icon');
  addIcon(application, ATTR_ICON, 'icon');
  addIcon(application, ATTR_ROUND_ICON, 'roundIcon');

  return { packageName, versionCode, versionCodeMajor, versionName, minSdk, targetSdk, label, labelIssue, labels, debuggable, iconCandidates };
}

function textOrNull(resolved: Resolved<string>): string | null {
  return resolved.ok ? resolved.value : null;
}

function readInteger(table: ResourceTable | null, attr: XmlAttribute | undefined): number | null {
  if (attr === undefined) return null;
  const target = dereference(table, attr.value);
  if (!target.ok) invalid(`android:${attr.name}: ${target.reason}`);
  if (isInteger(target.value)) return signed(target.value);
  // Hand-built manifests sometimes keep the number as a string; PackageParser accepts that too.
  let text = attr.rawValue;
  if (target.value.type === TYPE_STRING) text = attr.value.type === TYPE_STRING ? attr.stringValue : (table?.strings.get(target.value.data) ?? null);
  if (text !== null && /^-?\d+$/.test(text.trim())) return Number.parseInt(text.trim(), 10);
  invalid(`android:${attr.name} is not an integer (type 0x${target.value.type.toString(16)})`);
}

function readSdk(table: ResourceTable | null, attr: XmlAttribute | undefined): SdkLevel | null {
  if (attr === undefined) return null;
  const target = dereference(table, attr.value);
  if (!target.ok) invalid(`android:${attr.name}: ${target.reason}`);
  if (isInteger(target.value)) return { level: signed(target.value), codename: null };
  const text = textOrNull(resolveText(table, attr));
  if (text === null || text.trim() === '') invalid(`android:${attr.name} is neither a number nor a codename`);
  // PackageParser.computeMinSdkVersion: a numeric string is a level, anything else a codename.
  if (/^\d+$/.test(text.trim())) return { level: Number.parseInt(text.trim(), 10), codename: null };
  return { level: CUR_DEVELOPMENT, codename: text.trim() };
}

/** The first <activity>/<activity-alias> whose intent filter has action MAIN and category LAUNCHER. */
function launcherActivity(application: XmlElement): XmlElement | undefined {
  const nameOf = (e: XmlElement): string | null => {
    const attr = findAttribute(e, ATTR_NAME, 'name');
    return attr?.stringValue ?? attr?.rawValue ?? null;
  };
  return application.children.find((activity) => (activity.name === 'activity' || activity.name === 'activity-alias')
    && activity.children.some((filter) => filter.name === 'intent-filter'
      && filter.children.some((c) => c.name === 'action' && nameOf(c) === 'android.intent.action.MAIN')
      && filter.children.some((c) => c.name === 'category' && nameOf(c) === 'android.intent.category.LAUNCHER')));
}
