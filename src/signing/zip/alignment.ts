// Entry data alignment the way Android's tools do it. Stored data is mmapped by the platform, so
// zipalign and apksig place it on 4-byte boundaries (shared libraries on page boundaries) by
// growing the local header's extra field. Byte-for-byte parity with apksig matters because
// Signet's APK output is compared with apksigner's, so this follows ApkSigner.java exactly:
// outputInputJarEntryLfhRecord, getInputJarEntryDataAlignmentMultiple, createExtraFieldToAlignData.
import { EXTRA_ANDROID_ALIGNMENT, METHOD_STORED } from './format.ts';
import { androidAlignmentField, declaredAndroidAlignment, parseExtraFields, serializeExtraFields } from './extra-fields.ts';

export interface AlignmentPolicy {
  /** Alignment of stored entries other than shared libraries (zipalign's 4). */
  storedAlignment: number;
  /** Alignment of stored `*.so` entries: 16384 (Android 15+, apksigner >= 35) or 4096 (zipalign -p). */
  libraryPageAlignment: number;
}

export const DEFAULT_ALIGNMENT: Readonly<AlignmentPolicy> = Object.freeze({ storedAlignment: 4, libraryPageAlignment: 16384 });

/**
 * How addRaw treats alignment of a copied stored entry:
 * - 'preserve' (apksigner <= 34, `--alignment-preserved`): copy verbatim when the entry keeps its
 *   offset modulo the alignment or was misaligned in the input; otherwise realign.
 * - 'force' (apksigner >= 35 default): always rebuild the alignment field of stored entries.
 * - 'none': always copy the local header verbatim.
 */
export type RawAlignmentMode = 'preserve' | 'force' | 'none';

/** ApkSigner's name-based default: compressed 1, `.so` the page size, other stored entries 4. */
export function defaultAlignment(name: string, method: number, policy: AlignmentPolicy): number {
  if (method !== METHOD_STORED) return 1;
  return name.endsWith('.so') ? policy.libraryPageAlignment : policy.storedAlignment;
}

/** getInputJarEntryDataAlignmentMultiple: a 0xD935 field in the local extra wins over defaults. */
export function inputEntryAlignment(entry: { name: string; method: number; localExtra: Buffer }, policy: AlignmentPolicy): number {
  if (entry.method !== METHOD_STORED) return 1;
  return declaredAndroidAlignment(parseExtraFields(entry.localExtra).fields) ?? defaultAlignment(entry.name, entry.method, policy);
}

/**
 * createExtraFieldToAlignData: keep every well-formed field except zipalign's zero padding
 * (id 0, size 0) and old 0xD935 fields, stop at the first malformed one, then append a 0xD935
 * field (u16 id, u16 size, u16 alignment, zero padding) so that data starting right after the
 * extra field (at `extraStart` + extra length) lands on a multiple of `alignment`.
 */
export function alignedExtra(original: Buffer, extraStart: number, alignment: number): Buffer {
  if (alignment <= 1) return original;
  // parseExtraFields stops at the first malformed field, as createExtraFieldToAlignData does.
  const kept = parseExtraFields(original).fields.filter((f) => !((f.id === 0 && f.data.length === 0) || f.id === EXTRA_ANDROID_ALIGNMENT));
  const keptLength = kept.reduce((sum, f) => sum + 4 + f.data.length, 0);
  // ALIGNMENT_ZIP_EXTRA_DATA_FIELD_MIN_SIZE_BYTES = 6.
  const dataMinStart = extraStart + keptLength + 6;
  const padding = (alignment - (dataMinStart % alignment)) % alignment;
  return serializeExtraFields([...kept, androidAlignmentField(alignment, padding)]);
}

/**
 * outputInputJarEntryLfhRecord: decides whether a copied entry's local header goes out verbatim
 * (returns null) or with a rebuilt extra field (returns it). `extraStart` is the output offset of
 * the extra field (output header offset + 30 + name length).
 */
export function realignedExtra(
  entry: { name: string; method: number; localHeaderOffset: number; dataOffset: number; localExtra: Buffer },
  outputOffset: number,
  extraStart: number,
  mode: RawAlignmentMode,
  policy: AlignmentPolicy,
): Buffer | null {
  if (mode === 'none') return null;
  const preserve = mode === 'preserve';
  const inputOffset = entry.localHeaderOffset;
  if (inputOffset === outputOffset && preserve) return null;
  const alignment = inputEntryAlignment(entry, policy);
  if (alignment <= 1 || (inputOffset % alignment === outputOffset % alignment && preserve)) return null;
  // Data misaligned in the input stays misaligned: the input's producer did not need alignment.
  if (entry.dataOffset % alignment !== 0 && preserve) return null;
  return alignedExtra(entry.localExtra, extraStart, alignment);
}
