// Identifiers and secret tokens. Ids are a type prefix plus random base62, so a pasted id says
// what it is (tsk_… is a task) and cannot be guessed or enumerated.
import { createHash, randomBytes } from 'node:crypto';

export type IdPrefix = 'acc' | 'key' | 'app' | 'tsk' | 'crt' | 'prf' | 'whd' | 'job' | 'dst' | 'usr' | 'ses' | 'inv' | 'whk' | 'evt' | 'rot';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const URL_SAFE = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

/**
 * `length` characters drawn uniformly from `alphabet`. Bytes at or above the largest multiple of
 * the alphabet size are rejected rather than reduced modulo, which would bias the first characters.
 */
function randomString(alphabet: string, length: number): string {
  const limit = 256 - (256 % alphabet.length);
  let out = '';
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte < limit) out += alphabet[byte % alphabet.length];
      if (out.length === length) break;
    }
  }
  return out;
}

/** `prefix_` + 22 base62 characters (~131 bits). */
export function newId(prefix: IdPrefix): string {
  return `${prefix}_${randomString(BASE62, 22)}`;
}

/** A public link slug (/d/{slug}, /a/{slug}): 26 base62 characters (~155 bits), short enough for a QR code. */
export function newSlug(): string {
  return randomString(BASE62, 26);
}

/** A file_key: `tmp_` + 32 url-safe characters (192 bits). */
export function newFileKey(): string {
  return `tmp_${randomString(URL_SAFE, 32)}`;
}

export const FILE_KEY_PATTERN = /^tmp_[A-Za-z0-9_-]{24,64}$/;
export const API_KEY_PATTERN = /^sk_[0-9A-Za-z]{43,128}$/;

/** An API key: `sk_` + 43 base62 characters (43 · log2 62 ≈ 256 bits, i.e. 32 random bytes). */
export function newApiKey(): string {
  return `sk_${randomString(BASE62, 43)}`;
}

/** A webhook signing secret: `whsec_` + 43 base62 characters. */
export function newWebhookSecret(): string {
  return `whsec_${randomString(BASE62, 43)}`;
}

/** Lowercase hex SHA-256, the stored form of API keys and idempotent request bodies. */
export function sha256Hex(value: string | Buffer): string {
  return createHash('sha256').update(value).digest('hex');
}

/** A bearer token for a cookie or a one-time link (session, setup, invitation, reset): 43 url-safe characters (258 bits). */
export function newSecretToken(): string {
  return randomString(URL_SAFE, 43);
}
