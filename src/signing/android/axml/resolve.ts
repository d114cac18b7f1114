// Turning manifest attribute values into what people read: strings (labels, versionName),
// integers (versionCode), following resource references through resources.arsc.
//
// "Best locale" (documented for users in SPECIFICATION.md): among a string resource's variants
// Signet picks, in order, the default locale (no language qualifier), then `en`, then `en-US`,
// then any other `en-*`, then the first variant in table order; ties go to the variant with the
// fewest other qualifiers (night mode, screen size, ...), then the lowest SDK qualifier, then
// table order. This is what an English-speaking device without a better match would show, and
// it equals `aapt dump badging`'s `application-label:` line whenever a default exists.
import type { ResConfig } from './config.ts';
import { isReference, TYPE_STRING, type ResValue } from './res-value.ts';
import type { ResourceTable, ResVariant } from './resource-table.ts';
import type { XmlAttribute } from './xml-parser.ts';

/** References to references are legal (`@string/a` → `@string/b`); longer chains are corrupt or cyclic. */
export const MAX_REFERENCE_DEPTH = 16;

export type Resolved<T> =
  | { readonly ok: true; readonly value: T }
  | { readonly ok: false; readonly reason: string };

function localeRank(locale: string): number {
  if (locale === '') return 0;
  if (locale === 'en') return 1;
  if (locale === 'en-US') return 2;
  if (locale.startsWith('en-')) return 3;
  return 4;
}

function compareForText(a: ResConfig, b: ResConfig): number {
  return localeRank(a.locale) - localeRank(b.locale)
    || a.otherQualifiers - b.otherQualifiers
    || a.sdkVersion - b.sdkVersion;
}

/** The variant a reader without locale preferences should see (stable: ties keep table order). */
export function bestTextVariant(variants: readonly ResVariant[]): ResVariant | undefined {
  let best: ResVariant | undefined;
  for (const v of variants) if (v.value !== null && (best === undefined || compareForText(v.config, best.config) < 0)) best = v;
  return best;
}

/**
 * Follows references from `value` until a non-reference value, picking the best text variant
 * at each hop. `table` null (an APK without resources.arsc) leaves references unresolved.
 */
export function dereference(table: ResourceTable | null, value: ResValue): Resolved<ResValue> {
  let current = value;
  const seen = new Set<number>();
  for (let depth = 0; isReference(current); depth++) {
    if (current.data === 0) return { ok: false, reason: 'null reference (@null)' };
    if (table === null) return { ok: false, reason: `reference ${hex(current.data)} cannot be resolved: the APK has no resources.arsc` };
    if (depth >= MAX_REFERENCE_DEPTH || seen.has(current.data)) return { ok: false, reason: `reference ${hex(current.data)} is part of a cycle or a chain longer than ${MAX_REFERENCE_DEPTH}` };
    seen.add(current.data);
    if (current.data >>> 24 === 0x01) return { ok: false, reason: `reference ${hex(current.data)} points into the Android framework's resources` };
    const best = bestTextVariant(table.variants(current.data));
    if (best === undefined || best.value === null) return { ok: false, reason: `resource ${hex(current.data)} is not in resources.arsc (or only as a complex value)` };
    current = best.value;
  }
  return { ok: true, value: current };
}

/** The attribute's text: an inline string, or a string resource in its best locale. */
export function resolveText(table: ResourceTable | null, attribute: XmlAttribute): Resolved<string> {
  if (attribute.value.type === TYPE_STRING) return { ok: true, value: attribute.stringValue ?? '' };
  const target = dereference(table, attribute.value);
  if (!target.ok) return target;
  if (target.value.type === TYPE_STRING && table !== null) return { ok: true, value: table.strings.get(target.value.data) ?? '' };
  // A typed literal (e.g. android:versionName="1" compiled as an integer by some tools).
  if (attribute.rawValue !== null) return { ok: true, value: attribute.rawValue };
  return { ok: false, reason: `value of type 0x${target.value.type.toString(16)} is not text` };
}

/**
 * Every locale's text for a string attribute: "" for the default locale, else "fr", "en-US", ...
 * Only direct string resources are expanded per locale; an inline string yields { "": value }.
 */
export function resolveTextByLocale(table: ResourceTable | null, attribute: XmlAttribute): Record<string, string> {
  const out: Record<string, string> = {};
  if (attribute.value.type === TYPE_STRING) {
    out[''] = attribute.stringValue ?? '';
    return out;
  }
  if (table === null || !isReference(attribute.value)) return out;
  for (const variant of table.variants(attribute.value.data)) {
    if (variant.value === null || variant.config.otherQualifiers !== 0 || variant.config.locale in out) continue;
    let text: string | null = null;
    if (variant.value.type === TYPE_STRING) text = table.strings.get(variant.value.data);
    else if (isReference(variant.value)) {
      const target = dereference(table, variant.value);
      if (target.ok && target.value.type === TYPE_STRING) text = table.strings.get(target.value.data);
    }
    if (text !== null) out[variant.config.locale] = text;
  }
  return out;
}

export function hex(id: number): string {
  return `0x${(id >>> 0).toString(16).padStart(8, '0')}`;
}
