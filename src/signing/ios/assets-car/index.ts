// Compiled asset catalogs (Assets.car): a BOM container of CoreUI renditions. See SPECIFICATION.md.
export { parseBom, bomTree, type BomStore, type BomTreeEntry } from './bom.ts';
export { parseAssetCatalog, ATTR, IDIOM, type AssetCatalog, type CarHeader, type CsiHeader, type Rendition } from './car.ts';
export { renditionPng, COMPRESSION, MAX_IMAGE_SIDE } from './rendition-image.ts';
export { readCatalogAppIcon, catalogAppIcon, appIconCandidates, type CatalogIcon } from './app-icon.ts';
export { lzfseDecode } from './lzfse.ts';
export { lzvnDecodeInto } from './lzvn.ts';
