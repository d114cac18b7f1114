// Formatting shared by the pages: dates in the reader's language, byte sizes, and the
// certificate expiry badge.
import { i18n } from './i18n/index.ts';

export function formatDate(value: string | null | undefined, withTime = true): string {
  if (!value) return '—';
  const date = new Date(value);
  return new Intl.DateTimeFormat(i18n.global.locale.value, withTime ? { dateStyle: 'medium', timeStyle: 'short' } : { dateStyle: 'medium' }).format(date);
}

export function formatBytes(bytes: number): string {
  const units = ['B', 'KB', 'MB', 'GB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return `${value.toFixed(unit === 0 ? 0 : 1)} ${units[unit]}`;
}

/** ok / expiring (within 30 days) / expired, from the certificate's end date. */
export function expiryState(notAfter: string | null, now = Date.now()): 'ok' | 'expiring' | 'expired' {
  if (notAfter === null) return 'ok';
  const left = Date.parse(notAfter) - now;
  if (left <= 0) return 'expired';
  return left < 30 * 24 * 3600_000 ? 'expiring' : 'ok';
}

export function initials(name: string | null | undefined): string {
  return (name ?? '?').trim().slice(0, 1).toUpperCase() || '?';
}
