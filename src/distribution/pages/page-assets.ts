// The static files of the public pages: one stylesheet and one script, named by a hash of their
// content (/pages/page.<hash>.css) so browsers may cache them forever and a new release of Signet
// is fetched at once. Hashed on first use, not on import.
import { createHash } from 'node:crypto';
import { PAGE_SCRIPT } from './page-script.ts';
import { PAGE_STYLE } from './page-style.ts';

export interface PageAsset {
  /** URL path, e.g. /pages/page.3f9c1a2b7d4e.css */
  path: string;
  contentType: string;
  body: string;
}

let assets: { style: PageAsset; script: PageAsset } | null = null;

export function pageAssets(): { style: PageAsset; script: PageAsset } {
  if (assets) return assets;
  const asset = (body: string, extension: string, contentType: string): PageAsset => {
    const hash = createHash('sha256').update(body).digest('hex').slice(0, 12);
    return { path: `/pages/page.${hash}.${extension}`, contentType, body };
  };
  assets = { style: asset(PAGE_STYLE, 'css', 'text/css; charset=utf-8'), script: asset(PAGE_SCRIPT, 'js', 'text/javascript; charset=utf-8') };
  return assets;
}
