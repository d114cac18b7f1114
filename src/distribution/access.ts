// Who may fetch a protected install link. Passwords are stored as scrypt hashes. A visitor who
// typed the right password gets an access token, which travels as a cookie for the page and as
// `?t=` on the manifest and download URLs — iOS fetches those itself, without Safari's cookies.
// A token is an expiry plus an HMAC over (slug, expiry, password hash), so changing the password
// revokes every token handed out before.
import { createHmac, randomBytes, scrypt, timingSafeEqual } from 'node:crypto';
import { promisify } from 'node:util';

const scryptAsync = promisify(scrypt) as (password: string, salt: Buffer, keylen: number, options: { N: number; r: number; p: number }) => Promise<Buffer>;
const COST = { N: 16384, r: 8, p: 1 };
const TOKEN_LIFETIME_SECONDS = 24 * 3600;

export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const hash = await scryptAsync(password, salt, 32, COST);
  return ['scrypt', COST.N, COST.r, COST.p, salt.toString('base64'), hash.toString('base64')].join('$');
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [scheme, n, r, p, salt, hash] = stored.split('$');
  if (scheme !== 'scrypt' || !salt || !hash) return false;
  const expected = Buffer.from(hash, 'base64');
  const actual = await scryptAsync(password, Buffer.from(salt, 'base64'), expected.length, { N: Number(n), r: Number(r), p: Number(p) });
  return timingSafeEqual(actual, expected);
}

export function issueAccessToken(key: Buffer, slug: string, passwordHash: string, now = new Date()): string {
  const expires = Math.floor(now.getTime() / 1000) + TOKEN_LIFETIME_SECONDS;
  return `${expires}.${mac(key, slug, expires, passwordHash)}`;
}

export function checkAccessToken(key: Buffer, slug: string, passwordHash: string, token: string | undefined, now = new Date()): boolean {
  const match = /^(\d{1,12})\.([A-Za-z0-9_-]{43})$/.exec(token ?? '');
  if (!match) return false;
  const expires = Number(match[1]);
  if (expires * 1000 <= now.getTime()) return false;
  const expected = Buffer.from(mac(key, slug, expires, passwordHash));
  const given = Buffer.from(match[2]!);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

function mac(key: Buffer, slug: string, expires: number, passwordHash: string): string {
  return createHmac('sha256', key).update(`${slug}\n${expires}\n${passwordHash}`).digest('base64url');
}

/**
 * A visitor's device as Signet learned it from a UDID enrollment (super signature): the UDID and
 * an HMAC under the link key, kept in an HttpOnly cookie so other install pages can tell the
 * visitor when an ad-hoc build will not install on this device. Never stored server-side.
 */
export function deviceCookieValue(key: Buffer, udid: string): string {
  return `${udid}.${createHmac('sha256', key).update(`device\n${udid}`).digest('base64url')}`;
}

/** The UDID of a device cookie that Signet issued, else null. */
export function deviceFromCookie(key: Buffer, value: string | undefined): string | null {
  const match = /^([0-9A-Fa-f-]{25,40})\.([A-Za-z0-9_-]{43})$/.exec(value ?? '');
  if (!match) return null;
  const expected = Buffer.from(deviceCookieValue(key, match[1]!).split('.')[1]!);
  const given = Buffer.from(match[2]!);
  return given.length === expected.length && timingSafeEqual(given, expected) ? match[1]! : null;
}
