// Java KeyStore (JKS, magic 0xFEEDFEED) reader. Hand-written instead of taking jks-js: the format
// is ~100 lines to read (OpenJDK sun.security.provider.JavaKeyStore.engineLoad and KeyProtector),
// and jks-js would pull node-rsa and node-int64 and hand back re-encoded PEM instead of the
// original DER. Both integrity checks of the format are verified: the store's SHA-1 trailer
// (store password) and each KeyProtector's SHA-1 check value (key password).
import { createHash } from 'node:crypto';
import * as asn1js from 'asn1js';
import { SigningError } from '../errors.ts';
import { bufferOf, parseAsn1 } from './der.ts';

export const JKS_MAGIC = 0xfeedfeed;
export const JCEKS_MAGIC = 0xcececece;

/** OID of Sun's proprietary KeyProtector algorithm (JavaKeyStore stores keys only with it). */
const KEY_PROTECTOR_OID = '1.3.6.1.4.1.42.2.17.1.1';

/**
 * Bounds on what a JKS file may declare. Every count is also bounded by the file's bytes (a
 * truncated file fails), but a declared count of four billion entries should fail at once with
 * a clear message. Real signing keystores hold a handful of entries with chains of 1–4.
 */
const MAX_ENTRIES = 1024;
const MAX_CHAIN_LENGTH = 32;

export interface JksEntry {
  /** Aliases are stored lower-cased by JavaKeyStore. */
  alias: string;
  kind: 'key' | 'trusted';
  created: Date;
  /** Key entries: the certificate chain, leaf first. Trusted entries: the one certificate. */
  certificates: Buffer[];
  /** Key entries: the EncryptedPrivateKeyInfo DER, opened by recoverJksKey. */
  protectedKey?: Buffer;
}

class Cursor {
  offset = 0;
  readonly bytes: Buffer;
  constructor(bytes: Buffer) {
    this.bytes = bytes;
  }
  take(length: number): Buffer {
    if (length < 0 || this.offset + length > this.bytes.length) throw new SigningError('keystore_invalid', `The JKS keystore is truncated at offset ${this.offset}.`);
    const out = this.bytes.subarray(this.offset, this.offset + length);
    this.offset += length;
    return out;
  }
  u16(): number {
    return this.take(2).readUInt16BE(0);
  }
  u32(): number {
    return this.take(4).readUInt32BE(0);
  }
  /** DataInput.readUTF: u16 length + modified UTF-8. */
  utf(): string {
    return decodeModifiedUtf8(this.take(this.u16()));
  }
}

/** Java's modified UTF-8: NUL as C0 80, supplementary characters as two 3-byte surrogates. */
function decodeModifiedUtf8(bytes: Buffer): string {
  const units: number[] = [];
  for (let i = 0; i < bytes.length; ) {
    const a = bytes[i] as number;
    if (a < 0x80) {
      units.push(a);
      i += 1;
    } else if ((a & 0xe0) === 0xc0 && i + 1 < bytes.length) {
      units.push(((a & 0x1f) << 6) | ((bytes[i + 1] as number) & 0x3f));
      i += 2;
    } else if ((a & 0xf0) === 0xe0 && i + 2 < bytes.length) {
      units.push(((a & 0x0f) << 12) | (((bytes[i + 1] as number) & 0x3f) << 6) | ((bytes[i + 2] as number) & 0x3f));
      i += 3;
    } else {
      throw new SigningError('keystore_invalid', 'The JKS keystore has a malformed alias.');
    }
  }
  return String.fromCharCode(...units);
}

/** Java char[] passwords enter both SHA-1 checks as UTF-16BE code units. */
function passwordBytes(password: string): Buffer {
  return Buffer.from(password, 'utf16le').swap16();
}

/**
 * Parses a JKS keystore and checks its integrity trailer against the store password:
 * trailer = SHA-1(password UTF-16BE || "Mighty Aphrodite" || every preceding byte).
 */
export function readJks(bytes: Buffer, storePassword: string): JksEntry[] {
  if (bytes.length < 32) throw new SigningError('keystore_invalid', 'The JKS keystore is truncated.');
  const body = bytes.subarray(0, bytes.length - 20);
  const expected = createHash('sha1').update(passwordBytes(storePassword)).update('Mighty Aphrodite', 'utf8').update(body).digest();
  if (!expected.equals(bytes.subarray(bytes.length - 20))) {
    throw new SigningError('keystore_password_incorrect', 'The keystore password is incorrect (the JKS integrity check does not match).');
  }

  const cursor = new Cursor(body);
  if (cursor.u32() !== JKS_MAGIC) throw new SigningError('keystore_invalid', 'Not a JKS keystore.');
  const version = cursor.u32();
  if (version !== 1 && version !== 2) throw new SigningError('keystore_unsupported', `JKS version ${version} is not supported.`);
  const readCertificate = (): Buffer => {
    // Version 2 names the certificate type before each certificate; only X.509 exists in practice.
    if (version === 2) {
      const type = cursor.utf();
      if (type !== 'X.509') throw new SigningError('keystore_unsupported', `JKS certificate type ${type} is not supported.`);
    }
    return Buffer.from(cursor.take(cursor.u32()));
  };

  const count = cursor.u32();
  if (count > MAX_ENTRIES) throw new SigningError('keystore_invalid', `The JKS keystore declares ${count} entries; at most ${MAX_ENTRIES} are accepted.`);
  const entries: JksEntry[] = [];
  for (let i = 0; i < count; i++) {
    const tag = cursor.u32();
    const alias = cursor.utf();
    const created = new Date(Number(cursor.take(8).readBigInt64BE(0)));
    if (tag === 1) {
      const protectedKey = Buffer.from(cursor.take(cursor.u32()));
      const chainLength = cursor.u32();
      if (chainLength > MAX_CHAIN_LENGTH) throw new SigningError('keystore_invalid', `The JKS key entry "${alias}" declares a chain of ${chainLength} certificates; at most ${MAX_CHAIN_LENGTH} are accepted.`);
      const certificates: Buffer[] = [];
      for (let c = 0; c < chainLength; c++) certificates.push(readCertificate());
      entries.push({ alias, kind: 'key', created, certificates, protectedKey });
    } else if (tag === 2) {
      entries.push({ alias, kind: 'trusted', created, certificates: [readCertificate()] });
    } else {
      throw new SigningError('keystore_invalid', `Unknown JKS entry tag ${tag}.`);
    }
  }
  if (cursor.offset !== body.length) throw new SigningError('keystore_invalid', 'The JKS keystore has trailing bytes after its entries.');
  return entries;
}

/**
 * Opens a key entry (sun.security.provider.KeyProtector.recover):
 * protectedKey = salt(20) || ciphertext || check(20); the keystream is d1 = SHA-1(pw || salt),
 * d(i+1) = SHA-1(pw || d(i)); plaintext = ciphertext XOR keystream; check = SHA-1(pw || plaintext).
 * Returns the PKCS#8 PrivateKeyInfo DER.
 */
export function recoverJksKey(entry: JksEntry, keyPassword: string): Buffer {
  if (entry.protectedKey === undefined) throw new SigningError('keystore_no_private_key', `The entry "${entry.alias}" is a trusted certificate, not a key.`);
  const info = parseAsn1(entry.protectedKey, 'keystore_invalid', 'JKS protected key');
  const [algorithm, data] = info instanceof asn1js.Sequence ? info.valueBlock.value : [];
  const algorithmOid = algorithm instanceof asn1js.Sequence ? algorithm.valueBlock.value[0] : undefined;
  if (!(algorithmOid instanceof asn1js.ObjectIdentifier) || !(data instanceof asn1js.OctetString)) {
    throw new SigningError('keystore_invalid', `The JKS key entry "${entry.alias}" is malformed.`);
  }
  if (algorithmOid.valueBlock.toString() !== KEY_PROTECTOR_OID) {
    throw new SigningError('keystore_unsupported', `The JKS key entry "${entry.alias}" uses protection ${algorithmOid.valueBlock.toString()}, not Sun's KeyProtector.`);
  }
  const protectedKey = bufferOf(data.getValue());
  if (protectedKey.length < 41) throw new SigningError('keystore_invalid', `The JKS key entry "${entry.alias}" is truncated.`);
  const password = passwordBytes(keyPassword);
  const salt = protectedKey.subarray(0, 20);
  const ciphertext = protectedKey.subarray(20, protectedKey.length - 20);
  const check = protectedKey.subarray(protectedKey.length - 20);
  const plaintext = Buffer.alloc(ciphertext.length);
  let digest: Buffer = salt;
  for (let offset = 0; offset < ciphertext.length; offset += 20) {
    digest = createHash('sha1').update(password).update(digest).digest();
    for (let i = 0; i < 20 && offset + i < ciphertext.length; i++) {
      plaintext[offset + i] = (ciphertext[offset + i] as number) ^ (digest[i] as number);
    }
  }
  if (!createHash('sha1').update(password).update(plaintext).digest().equals(check)) {
    throw new SigningError('key_password_incorrect', `The key password for "${entry.alias}" is incorrect (the JKS key check does not match).`);
  }
  return plaintext;
}
