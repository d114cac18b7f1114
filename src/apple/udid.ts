// Device identifiers as iOS reports them and App Store Connect stores them
// (distribution-protocols.md §3.1.3): 40 hex characters on devices before 2018, or
// 8 hex + "-" + 16 hex on iPhone XS and later. Apple compares them case-insensitively and keeps
// the hyphen (fastlane#17433, #20551), so the canonical form here is upper-case with the hyphen
// kept: two spellings of one device must never look like two devices, each costing a slot.
import type { DeviceClass } from './types.ts';

const LEGACY = /^[0-9A-F]{40}$/;
const MODERN = /^[0-9A-F]{8}-[0-9A-F]{16}$/;

/** The canonical (upper-case) UDID, or null when `value` is not a UDID in either format. */
export function normalizeUdid(value: string): string | null {
  const upper = value.trim().toUpperCase();
  return LEGACY.test(upper) || MODERN.test(upper) ? upper : null;
}

export function sameUdid(a: string, b: string): boolean {
  return a.trim().toUpperCase() === b.trim().toUpperCase();
}

/**
 * The App Store Connect device class of a PRODUCT string ("iPhone12,1", "iPad8,6", "iPod9,1"),
 * i.e. whose 100-slot family the device will use (§3.2.5). Null for products Signet does not
 * distribute to (watches, TVs, Macs, Vision).
 */
export function deviceClassForProduct(product: string | null): DeviceClass | null {
  if (product === null) return null;
  if (/^iPhone\d/.test(product)) return 'IPHONE';
  if (/^iPad\d/.test(product)) return 'IPAD';
  if (/^iPod\d/.test(product)) return 'IPOD';
  return null;
}
