// The app icon inside a compiled asset catalog (SPECIFICATION.md §6): among the renditions of the
// facet named by Info.plist's CFBundleIconName (default "AppIcon"), take the iPhone/iPad (or
// universal) bitmaps in the default appearance, largest first, and return the first one that
// decodes, as a standard PNG. The App Store ("marketing") icon is used only when the catalog has
// no device icon.
import { SigningError } from '../../errors.ts';
import { ATTR, IDIOM, parseAssetCatalog, type AssetCatalog, type Rendition } from './car.ts';
import { checkRenditionEncoding, renditionPng } from './rendition-image.ts';

export interface CatalogIcon {
  /** The standard PNG, or null when decoding was not asked for. */
  readonly png: Buffer | null;
  readonly width: number;
  readonly height: number;
  /** The rendition's file name as Xcode recorded it, e.g. "Icon-60@3x.png". */
  readonly renditionName: string;
  readonly idiom: number;
  readonly scale: number;
}

/** Renditions with a layout ≥ 1000 are not images (§3.5: data, colours, multisize sets, …). */
const FIRST_NON_IMAGE_LAYOUT = 1000;

/**
 * Parses `bytes` as Assets.car and returns its app icon, or null when it has none. With
 * `decode: false` the pixels are not decompressed: the icon is the best rendition whose
 * encoding Signet supports (upload validation only needs its size).
 */
export function readCatalogAppIcon(bytes: Buffer, iconName = 'AppIcon', decode = true): CatalogIcon | null {
  return catalogAppIcon(parseAssetCatalog(bytes), iconName, decode);
}

export function catalogAppIcon(catalog: AssetCatalog, iconName = 'AppIcon', decode = true): CatalogIcon | null {
  const candidates = appIconCandidates(catalog, iconName);
  let firstError: SigningError | null = null;
  for (const rendition of candidates) {
    try {
      const png = decode ? renditionPng(rendition.csi) : (checkRenditionEncoding(rendition.csi), null);
      return {
        png, width: rendition.csi.width, height: rendition.csi.height, renditionName: rendition.csi.name,
        idiom: rendition.key.get(ATTR.idiom) ?? IDIOM.universal, scale: rendition.csi.scale / 100,
      };
    } catch (error) {
      // A rendition we cannot decode (e.g. a deep-map variant) must not hide a smaller one we can.
      if (!(error instanceof SigningError)) throw error;
      firstError ??= error;
    }
  }
  if (firstError !== null) throw firstError;
  return null;
}

/** The icon renditions of `iconName`, best first. */
export function appIconCandidates(catalog: AssetCatalog, iconName: string): Rendition[] {
  const identifier = catalog.facets.get(iconName);
  if (identifier === undefined) return [];
  // Xcode 13+ adds dark and tinted appearances; the default one is "UIAppearanceAny" or id 0.
  const anyAppearance = catalog.appearances.get('UIAppearanceAny') ?? 0;
  const images = catalog.renditions.filter((r) => r.key.get(ATTR.identifier) === identifier
    && r.csi.layout < FIRST_NON_IMAGE_LAYOUT && r.csi.width > 0 && r.csi.height > 0
    && (r.key.get(ATTR.appearance) ?? anyAppearance) === anyAppearance);
  const device = images.filter((r) => [IDIOM.universal, IDIOM.phone, IDIOM.pad].includes((r.key.get(ATTR.idiom) ?? 0) as 0 | 1 | 2));
  const pool = device.length > 0 ? device : images.filter((r) => r.key.get(ATTR.idiom) === IDIOM.marketing);
  // Largest area first; at equal size prefer sRGB (gamut 0) over Display P3, then a phone icon.
  return [...pool].sort((a, b) => b.csi.width * b.csi.height - a.csi.width * a.csi.height
    || (a.key.get(ATTR.gamut) ?? 0) - (b.key.get(ATTR.gamut) ?? 0)
    || (a.key.get(ATTR.idiom) ?? 0) - (b.key.get(ATTR.idiom) ?? 0));
}
