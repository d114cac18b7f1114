// Encryption at rest for private keys, passwords, profiles and webhook secrets: AES-256-GCM with a
// fresh 96-bit nonce per value (NIST SP 800-38D §8.2.2: random IVs are safe far below 2^32
// messages per key). Sealed format, base64 of: version(1) | nonce(12) | tag(16) | ciphertext.
// The version byte lets a future key rotation or algorithm change coexist with old rows.
// `context` is bound as GCM additional data, so a sealed value copied into another column or row
// (e.g. one account's password pasted into another's certificate) fails to open.
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { ConfigError } from '../config.ts';
import { AppError } from '../errors.ts';

const VERSION = 1;
const NONCE_BYTES = 12;
const TAG_BYTES = 16;
const KEY_FILE = 'master.key';

export class SecretBox {
  readonly #key: Buffer;

  constructor(key: Buffer) {
    if (key.length !== 32) throw new AppError('internal_error', `master key must be 32 bytes, got ${key.length}`);
    this.#key = Buffer.from(key);
  }

  /** Encrypts `plaintext`; `context` (e.g. "certificates.password:crt_…") must be given again to open. */
  seal(plaintext: Buffer | string, context: string): string {
    const nonce = randomBytes(NONCE_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.#key, nonce, { authTagLength: TAG_BYTES });
    cipher.setAAD(Buffer.from(context, 'utf8'));
    const body = Buffer.concat([cipher.update(typeof plaintext === 'string' ? Buffer.from(plaintext, 'utf8') : plaintext), cipher.final()]);
    return Buffer.concat([Buffer.of(VERSION), nonce, cipher.getAuthTag(), body]).toString('base64');
  }

  /** Decrypts a sealed value; AppError `internal_error` when it was tampered with or sealed under another key/context. */
  open(sealed: string, context: string): Buffer {
    const raw = Buffer.from(sealed, 'base64');
    if (raw.length < 1 + NONCE_BYTES + TAG_BYTES || raw[0] !== VERSION) {
      throw new AppError('internal_error', 'sealed secret is malformed or of an unknown version');
    }
    const nonce = raw.subarray(1, 1 + NONCE_BYTES);
    const tag = raw.subarray(1 + NONCE_BYTES, 1 + NONCE_BYTES + TAG_BYTES);
    const decipher = createDecipheriv('aes-256-gcm', this.#key, nonce, { authTagLength: TAG_BYTES });
    decipher.setAAD(Buffer.from(context, 'utf8'));
    decipher.setAuthTag(tag);
    try {
      return Buffer.concat([decipher.update(raw.subarray(1 + NONCE_BYTES + TAG_BYTES)), decipher.final()]);
    } catch (cause) {
      throw new AppError('internal_error', 'sealed secret failed authentication (wrong master key or tampered data)', { cause });
    }
  }

  openString(sealed: string, context: string): string {
    return this.open(sealed, context).toString('utf8');
  }

  /**
   * A 32-byte key for another purpose (e.g. HMAC of install-link tokens), derived with HKDF
   * (RFC 5869) so the master key itself is never used for two things.
   */
  deriveKey(purpose: string): Buffer {
    return Buffer.from(hkdfSync('sha256', this.#key, Buffer.alloc(0), `signet:${purpose}`, 32));
  }
}

/** Parses SIGNET_MASTER_KEY: 64 hex characters or base64 (standard or url-safe) of exactly 32 bytes. */
export function parseMasterKey(text: string): Buffer {
  const trimmed = text.trim();
  const key = /^[0-9a-fA-F]{64}$/.test(trimmed)
    ? Buffer.from(trimmed, 'hex')
    : /^[A-Za-z0-9+/_-]+={0,2}$/.test(trimmed)
      ? Buffer.from(trimmed.replace(/-/g, '+').replace(/_/g, '/'), 'base64')
      : null;
  if (key?.length !== 32) {
    throw new ConfigError('SIGNET_MASTER_KEY must be 32 bytes as 64 hex characters or base64');
  }
  return key;
}

/**
 * The master key: from SIGNET_MASTER_KEY when set, else `<dataDir>/master.key`, created with
 * mode 0600 on first start (atomically, so two processes starting together agree on one key).
 * An existing key file readable or writable by group/others is refused: the key protects every
 * private key in the database, and a silently loosened file is how it would leak.
 */
export async function loadMasterKey(options: { masterKey: string | null; dataDir: string }): Promise<Buffer> {
  if (options.masterKey !== null) return parseMasterKey(options.masterKey);
  const file = path.join(options.dataDir, KEY_FILE);
  await fs.mkdir(options.dataDir, { recursive: true, mode: 0o700 });
  if (!(await fileExists(file))) {
    // Written under a temp name, then hard-linked into place: link() fails with EEXIST if another
    // process won the race, and nobody can ever read a half-written key file.
    const temp = `${file}.${randomBytes(6).toString('hex')}.tmp`;
    await fs.writeFile(temp, `${randomBytes(32).toString('base64')}\n`, { mode: 0o600, flag: 'wx' });
    try {
      await fs.link(temp, file);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    } finally {
      await fs.unlink(temp);
    }
  }
  const stat = await fs.stat(file);
  if ((stat.mode & 0o077) !== 0) {
    throw new AppError(
      'internal_error',
      `${file} is accessible by other users (mode ${(stat.mode & 0o777).toString(8)}); run chmod 600 on it`,
    );
  }
  try {
    return parseMasterKey(await fs.readFile(file, 'utf8'));
  } catch (cause) {
    throw new AppError('internal_error', `${file} does not hold a valid 32-byte key`, { cause });
  }
}

async function fileExists(file: string): Promise<boolean> {
  try {
    await fs.stat(file);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw error;
  }
}
