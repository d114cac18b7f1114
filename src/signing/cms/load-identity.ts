// One entry point for every way a user hands us a signing key: PKCS#12 (.p12/.pfx, and the many
// ".jks" files that keytool ≥ 9 writes as PKCS#12), JKS, PEM, and DER PKCS#8 with a separate
// certificate. The format is recognised from the content, never from a file name.
import { createPrivateKey, type KeyObject } from 'node:crypto';
import { SigningError } from '../errors.ts';
import { assembleIdentity, classifyKey, keyMatchesCertificate, type Identity } from './identity.ts';
import { JCEKS_MAGIC, JKS_MAGIC, readJks, recoverJksKey } from './jks.ts';
import { openPkcs12, type Pkcs12Bag } from './pkcs12.ts';
import { classifyDer, looksLikePem, privateKeyFromDer, readCertificates, readPem } from './private-key.ts';

export interface LoadIdentityOptions {
  /** Store password (PKCS#12, JKS) or, for a lone encrypted key, the key password. */
  password?: string;
  /** Key password when it differs from the store password (JKS); defaults to `password`. */
  keyPassword?: string;
  /** Which key entry to use when the store holds several (JKS aliases are case-insensitive). */
  alias?: string;
  /** The certificate (DER, or PEM with one or more certificates) when the key file has none. */
  certificate?: Buffer;
}

export type IdentityFormat = 'pkcs12' | 'jks' | 'jceks' | 'pem' | 'pkcs8' | 'encrypted-pkcs8' | 'pkcs1' | 'sec1' | 'certificate';

/** Names the container format from its leading bytes and ASN.1 shape. */
export function detectIdentityFormat(bytes: Buffer): IdentityFormat | undefined {
  if (bytes.length >= 4 && bytes.readUInt32BE(0) === JKS_MAGIC) return 'jks';
  if (bytes.length >= 4 && bytes.readUInt32BE(0) === JCEKS_MAGIC) return 'jceks';
  if (looksLikePem(bytes)) return 'pem';
  if (bytes[0] === 0x30) return classifyDer(bytes);
  return undefined;
}

/** Loads a signing identity from keystore or key-file bytes. */
export async function loadIdentity(bytes: Buffer, options: LoadIdentityOptions = {}): Promise<Identity> {
  try {
    return await loadUnguarded(bytes, options);
  } catch (error) {
    // Keystores are untrusted uploads: a parser failure below becomes a catalogue error.
    if (error instanceof SigningError) throw error;
    throw new SigningError('keystore_invalid', `The key file cannot be read: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  }
}

async function loadUnguarded(bytes: Buffer, options: LoadIdentityOptions): Promise<Identity> {
  const format = detectIdentityFormat(bytes);
  const extra = options.certificate === undefined ? [] : readCertificates(options.certificate);
  switch (format) {
    case 'pkcs12':
      return fromPkcs12(bytes, options, extra);
    case 'jks':
      return fromJks(bytes, options, extra);
    case 'jceks':
      throw new SigningError(
        'keystore_unsupported',
        'JCEKS keystores are not supported. Convert it to PKCS#12 with: keytool -importkeystore -srckeystore in.jceks -srcstoretype JCEKS -destkeystore out.p12 -deststoretype PKCS12',
      );
    case 'pem': {
      const pem = readPem(bytes.toString('utf8'), options.keyPassword ?? options.password);
      if (pem.privateKey === undefined) throw noKey('The PEM file holds no private key.');
      return withCertificates(pem.privateKey, [...extra, ...pem.certificates], undefined, extra.length > 0);
    }
    case 'pkcs8':
    case 'encrypted-pkcs8':
    case 'pkcs1':
    case 'sec1':
      return withCertificates(privateKeyFromDer(bytes, format, options.keyPassword ?? options.password), extra, undefined, extra.length > 0);
    case 'certificate':
      throw noKey('The file is a certificate only; the private key is needed too.');
    case undefined:
      throw new SigningError('keystore_unsupported', 'Unrecognised key file: expected PKCS#12 (.p12/.pfx), JKS, PEM or DER PKCS#8.');
  }
}

/** `explicit`: certificates[0] came from the caller's `certificate` option and must be the key's. */
function withCertificates(privateKey: KeyObject, certificates: Buffer[], alias: string | undefined, explicit: boolean): Identity {
  if (certificates.length === 0) {
    throw new SigningError('certificate_invalid', 'The key file holds no certificate; pass the signing certificate as well.');
  }
  classifyKey(privateKey);
  if (explicit && !keyMatchesCertificate(privateKey, certificates[0] as Buffer)) {
    throw new SigningError('key_certificate_mismatch', 'The private key does not belong to the certificate provided.');
  }
  return assembleIdentity(privateKey, certificates, alias);
}

function noKey(message: string): SigningError {
  return new SigningError('keystore_no_private_key', message);
}

function aliasNotFound(alias: string, available: string[]): SigningError {
  const list = available.length ? available.map((a) => `"${a}"`).join(', ') : 'none';
  return new SigningError('keystore_alias_not_found', `The keystore has no key entry "${alias}". Available aliases: ${list}.`, {
    details: { alias, available },
  });
}

function ambiguous(available: string[]): SigningError {
  return new SigningError('keystore_alias_not_found', `The keystore holds ${available.length} keys; choose one by alias: ${available.map((a) => `"${a}"`).join(', ')}.`, {
    details: { available },
  });
}

async function fromPkcs12(bytes: Buffer, options: LoadIdentityOptions, extra: Buffer[]): Promise<Identity> {
  const contents = await openPkcs12(bytes, options.password ?? '', options.keyPassword ?? options.password ?? '');
  if (contents.keys.length === 0) throw noKey('The PKCS#12 file holds certificates but no private key.');
  const label = (bag: Pkcs12Bag, i: number): string => bag.alias ?? `#${i + 1}`;
  let chosen: Pkcs12Bag | undefined;
  if (options.alias !== undefined) {
    chosen = contents.keys.find((bag) => bag.alias === options.alias) ?? contents.keys.find((bag) => bag.alias?.toLowerCase() === options.alias?.toLowerCase());
    if (!chosen) throw aliasNotFound(options.alias, contents.keys.map(label));
  } else if (contents.keys.length > 1) {
    throw ambiguous(contents.keys.map(label));
  } else {
    chosen = contents.keys[0] as Pkcs12Bag;
  }
  const privateKey = pkcs8Key(chosen.der);
  // RFC 7292 pairs a key with its certificate by localKeyId; fall back to the public key.
  const others = new Set(contents.keys.filter((k) => k !== chosen && k.localKeyId).map((k) => k.localKeyId?.toString('hex')));
  const candidates = contents.certificates.filter((c) => !c.localKeyId || !others.has(c.localKeyId.toString('hex')));
  const paired = candidates.find((c) => chosen.localKeyId && c.localKeyId?.equals(chosen.localKeyId) && keyMatchesCertificate(privateKey, c.der));
  const ordered = paired ? [paired, ...candidates.filter((c) => c !== paired)] : candidates;
  const certificates = [...extra, ...ordered.map((c) => c.der)];
  return withCertificates(privateKey, dedupe(certificates), chosen.alias, extra.length > 0);
}

async function fromJks(bytes: Buffer, options: LoadIdentityOptions, extra: Buffer[]): Promise<Identity> {
  const entries = readJks(bytes, options.password ?? '');
  const keys = entries.filter((e) => e.kind === 'key');
  if (keys.length === 0) throw noKey('The keystore holds only trusted certificates (a truststore), no private key.');
  let entry = keys[0];
  if (options.alias !== undefined) {
    // JavaKeyStore lower-cases aliases when storing them.
    entry = keys.find((e) => e.alias === options.alias?.toLowerCase() || e.alias === options.alias);
    if (!entry) throw aliasNotFound(options.alias, keys.map((e) => e.alias));
  } else if (keys.length > 1) {
    throw ambiguous(keys.map((e) => e.alias));
  }
  const chosen = entry as (typeof keys)[number];
  const privateKey = pkcs8Key(recoverJksKey(chosen, options.keyPassword ?? options.password ?? ''));
  return withCertificates(privateKey, dedupe([...extra, ...chosen.certificates]), chosen.alias, extra.length > 0);
}

/** Decodes a keystore's PKCS#8 key and refuses key types we cannot sign with. */
function pkcs8Key(der: Buffer): KeyObject {
  let key: KeyObject;
  try {
    key = createPrivateKey({ key: der, format: 'der', type: 'pkcs8' });
  } catch (cause) {
    const message = cause instanceof Error ? cause.message : String(cause);
    if (/unsupported/i.test(message)) throw new SigningError('key_type_unsupported', `The private key uses an unsupported algorithm: ${message}`, { cause });
    throw new SigningError('keystore_invalid', `The private key in the keystore cannot be decoded: ${message}`, { cause });
  }
  classifyKey(key);
  return key;
}

function dedupe(certificates: Buffer[]): Buffer[] {
  return certificates.filter((der, i) => certificates.findIndex((other) => other.equals(der)) === i);
}
