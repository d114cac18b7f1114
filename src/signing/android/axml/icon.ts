// The launcher icon as an image file: which packaged file an install page should show.
//
// Order of preference (documented in SPECIFICATION.md):
//  1. a raster (PNG, WebP, JPEG) variant of the icon resources — launcher activity icon,
//     application icon, round icon — at the highest density: a complete, pre-composed icon
//     (the "legacy" icon that aapt2 builds keep beside adaptive icons);
//  2. an XML drawable's raster: an adaptive icon's <foreground> layer (uncomposited, so only when
//     no legacy icon exists), or a <bitmap>/<inset>/<layer-list> pointing at a raster;
//  3. nothing, with a plain reason — notably "only vector drawables", which Signet does not render.
import { parseAxml, type XmlElement } from './xml-parser.ts';
import { DENSITY_ANY, DENSITY_DEFAULT, DENSITY_MEDIUM, DENSITY_NONE, type ResConfig } from './config.ts';
import { isReference, TYPE_STRING, type ResValue } from './res-value.ts';
import { hex, MAX_REFERENCE_DEPTH } from './resolve.ts';
import type { ResourceTable } from './resource-table.ts';
import { SigningError } from '../../errors.ts';

/** Files of the APK, by archive path. `size` is the uncompressed size, null when absent. */
export interface ResourceFiles {
  size(path: string): number | null;
  read(path: string): Promise<Buffer>;
}

import type { IconFormat } from '../../package/icon.ts';
import { MAX_ICON_BYTES } from '../../package/icon.ts';

export { MAX_ICON_BYTES, type IconFormat };

export interface AndroidIcon {
  /** Archive path, e.g. "res/mipmap-xxxhdpi-v4/ic_launcher.png" (may lack an extension). */
  readonly path: string;
  readonly format: IconFormat;
  /** dpi of the chosen variant: 160 for an unqualified one, 65535 for nodpi, 65534 for anydpi. */
  readonly density: number;
  /** `legacy`: a complete raster icon; `adaptive-foreground`: only the adaptive icon's foreground layer; `xml-bitmap`: a raster behind another XML drawable. */
  readonly source: 'legacy' | 'adaptive-foreground' | 'xml-bitmap';
  /** e.g. "mipmap/ic_launcher". */
  readonly resource: string | null;
  readonly bytes: Buffer;
}

export interface IconResult {
  readonly icon: AndroidIcon | null;
  /** Why there is no icon (null when there is one). */
  readonly issue: string | null;
  /** True when the icon resources resolve only to vector drawables. */
  readonly vectorOnly: boolean;
}

/** A real icon search reads a handful of files; a table pointing at thousands is hostile. */
export const MAX_ICON_FILE_READS = 64;
/** XML drawables nest (adaptive-icon → inset → bitmap); deeper is corrupt or cyclic. */
const MAX_XML_HOPS = 4;
// android.R.attr.drawable and android.R.attr.src (public.xml).
const ATTR_DRAWABLE = 0x01010199;
const ATTR_SRC = 0x01010119;

interface FileVariant {
  readonly path: string;
  readonly config: ResConfig;
  readonly resId: number;
}

export async function resolveLauncherIcon(
  table: ResourceTable | null, candidates: readonly ResValue[], files: ResourceFiles,
): Promise<IconResult> {
  if (candidates.length === 0) return { icon: null, issue: 'the manifest declares no application or launcher icon', vectorOnly: false };
  if (table === null) return { icon: null, issue: 'the icon is a resource reference but the APK has no resources.arsc', vectorOnly: false };
  const search = new IconSearch(table, files);
  const xmlFiles: FileVariant[] = [];
  for (const candidate of candidates) {
    const found = await search.raster(candidate, 'legacy', xmlFiles);
    if (found !== null) return { icon: found, issue: null, vectorOnly: false };
  }
  for (const xml of xmlFiles) {
    const found = await search.fromXml(xml, 0);
    if (found !== null) return { icon: found, issue: null, vectorOnly: false };
  }
  if (search.vectors.length > 0) {
    return { icon: null, vectorOnly: true, issue: `the launcher icon exists only as vector drawables (${search.vectors.slice(0, 3).join(', ')}); Signet does not render vectors, so there is no PNG/WebP icon to show` };
  }
  return { icon: null, vectorOnly: false, issue: search.problems[0] ?? 'no raster image found for the launcher icon' };
}

class IconSearch {
  readonly vectors: string[] = [];
  readonly problems: string[] = [];
  private readonly table: ResourceTable;
  private readonly files: ResourceFiles;
  private readonly visitedXml = new Set<string>();
  private reads = 0;

  constructor(table: ResourceTable, files: ResourceFiles) {
    this.table = table;
    this.files = files;
  }

  /** The best raster among `value`'s file variants; XML variants are queued in `xmlOut`. */
  async raster(value: ResValue, source: AndroidIcon['source'], xmlOut: FileVariant[]): Promise<AndroidIcon | null> {
    for (const variant of this.fileVariants(value)) {
      const bytes = await this.readSmall(variant.path);
      if (bytes === null) continue;
      const format = sniffRaster(bytes);
      if (format !== null) {
        return { path: variant.path, format, density: effectiveDensity(variant.config.density), source, resource: this.table.nameOf(variant.resId), bytes };
      }
      if (isAxml(bytes)) xmlOut.push(variant);
      else this.problems.push(`${variant.path} is neither PNG, WebP, JPEG nor a compiled XML drawable`);
    }
    return null;
  }

  /** A raster reachable from a compiled XML drawable (adaptive icon foreground, bitmap, inset, ...). */
  async fromXml(variant: FileVariant, hops: number): Promise<AndroidIcon | null> {
    if (hops >= MAX_XML_HOPS || this.visitedXml.has(variant.path)) return null;
    this.visitedXml.add(variant.path);
    const bytes = await this.readSmall(variant.path);
    if (bytes === null) return null;
    let root: XmlElement;
    try {
      root = parseAxml(bytes).root;
    } catch (error) {
      if (!(error instanceof SigningError)) throw error;
      this.problems.push(`${variant.path}: ${error.message}`);
      return null;
    }
    if (root.name === 'vector' || root.name === 'animated-vector') {
      this.vectors.push(variant.path);
      return null;
    }
    // An adaptive icon's only raster worth showing is its foreground layer
    // (developer.android.com "Adaptive icons": background, foreground, monochrome layers).
    const scope = root.name === 'adaptive-icon' ? root.children.find((c) => c.name === 'foreground') : root;
    if (scope === undefined) {
      this.problems.push(`${variant.path}: adaptive icon without a <foreground> layer`);
      return null;
    }
    const source = root.name === 'adaptive-icon' ? 'adaptive-foreground' : 'xml-bitmap';
    for (const ref of drawableRefs(scope)) {
      const nested: FileVariant[] = [];
      const found = await this.raster(ref, source, nested);
      if (found !== null) return found;
      for (const xml of nested) {
        const deeper = await this.fromXml(xml, hops + 1);
        if (deeper !== null) return { ...deeper, source };
      }
    }
    return null;
  }

  /** File variants of a drawable reference, highest density first (aliases followed, bounded). */
  private fileVariants(value: ResValue): FileVariant[] {
    const out: FileVariant[] = [];
    const seen = new Set<number>();
    const visit = (ref: ResValue, depth: number): void => {
      if (!isReference(ref) || ref.data === 0 || seen.has(ref.data)) return;
      if (depth >= MAX_REFERENCE_DEPTH) {
        this.problems.push(`icon reference ${hex(ref.data)} chains deeper than ${MAX_REFERENCE_DEPTH}`);
        return;
      }
      seen.add(ref.data);
      const variants = this.table.variants(ref.data);
      if (variants.length === 0) this.problems.push(`icon resource ${hex(ref.data)} is not in resources.arsc`);
      for (const variant of variants) {
        if (variant.value === null) continue;
        if (variant.value.type === TYPE_STRING) {
          const path = this.table.strings.get(variant.value.data);
          if (path !== null && path !== '') out.push({ path, config: variant.config, resId: ref.data });
        } else if (isReference(variant.value)) {
          visit(variant.value, depth + 1);
        }
        // Colour values (a solid-colour icon layer) are not images.
      }
    };
    visit(value, 0);
    return out.sort((a, b) => densityRank(b.config) - densityRank(a.config) || a.config.otherQualifiers - b.config.otherQualifiers);
  }

  private async readSmall(path: string): Promise<Buffer | null> {
    const size = this.files.size(path);
    if (size === null) {
      this.problems.push(`${path} is named in resources.arsc but missing from the APK`);
      return null;
    }
    if (size > MAX_ICON_BYTES) {
      this.problems.push(`${path} is ${size} bytes, larger than an icon can be (${MAX_ICON_BYTES})`);
      return null;
    }
    if (++this.reads > MAX_ICON_FILE_READS) {
      if (this.reads === MAX_ICON_FILE_READS + 1) this.problems.push(`gave up after reading ${MAX_ICON_FILE_READS} candidate icon files`);
      return null;
    }
    return this.files.read(path);
  }
}

/** drawable= and src= references in document order: <foreground android:drawable>, <bitmap android:src>, nested items. */
function drawableRefs(element: XmlElement): ResValue[] {
  const out: ResValue[] = [];
  const walk = (e: XmlElement): void => {
    for (const a of e.attributes) {
      const named = a.resourceId === 0 && (a.name === 'drawable' || a.name === 'src');
      if ((a.resourceId === ATTR_DRAWABLE || a.resourceId === ATTR_SRC || named) && isReference(a.value)) out.push(a.value);
    }
    for (const child of e.children) walk(child);
  };
  walk(element);
  return out;
}

/** Real dpi for ranking and display: unqualified means mdpi; nodpi/anydpi rank below any real density. */
function effectiveDensity(density: number): number {
  return density === DENSITY_DEFAULT ? DENSITY_MEDIUM : density;
}

function densityRank(config: ResConfig): number {
  if (config.density === DENSITY_NONE || config.density === DENSITY_ANY) return 0;
  return effectiveDensity(config.density);
}

export function sniffRaster(bytes: Buffer): IconFormat | null {
  // PNG signature (RFC 2083 §3.1), RIFF....WEBP (WebP container spec), JPEG SOI + marker.
  if (bytes.length >= 8 && bytes.readUInt32BE(0) === 0x89504e47 && bytes.readUInt32BE(4) === 0x0d0a1a0a) return 'png';
  if (bytes.length >= 12 && bytes.toString('latin1', 0, 4) === 'RIFF' && bytes.toString('latin1', 8, 12) === 'WEBP') return 'webp';
  if (bytes.length >= 3 && bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) return 'jpeg';
  return null;
}

function isAxml(bytes: Buffer): boolean {
  // RES_XML_TYPE chunk with an 8-byte header.
  return bytes.length >= 8 && bytes.readUInt32LE(0) === 0x00080003;
}
