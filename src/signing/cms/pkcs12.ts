// PKCS#12 (RFC 7292) reader. pkijs parses the PFX and checks the MAC (SHA-1/SHA-256 HMAC with
// the RFC 7292 Appendix B key derivation) and decrypts modern PBES2 containers (OpenSSL 3 and
// Java 17 defaults: PBKDF2 + AES-CBC). pkijs cannot decrypt the legacy PKCS#12 PBE schemes that
// Keychain and `openssl -legacy` exports use (RC2-40 certificate bags, 3DES key bags), so those
// two ciphers come from node-forge — forge is used for nothing else: its certificate and key
// parsers re-encode DER and cannot read EC keys, so bags are walked here with asn1js and every
// certificate and key keeps its original bytes.
import * as asn1js from 'asn1js';
import type forge from 'node-forge';
import * as pkijs from 'pkijs';
import { SigningError } from '../errors.ts';
import { OID, bufferOf, digestFromOid, encodeDer, parseAsn1, toArrayBuffer } from './der.ts';
import { macMatches } from './pkcs12-mac.ts';

export interface Pkcs12Bag {
  der: Buffer;
  alias?: string;
  localKeyId?: Buffer;
}

export interface Pkcs12Contents {
  /** Decrypted PKCS#8 PrivateKeyInfo DER of every key bag. */
  keys: Pkcs12Bag[];
  /** X.509 certificate DER of every certificate bag, in file order. */
  certificates: Pkcs12Bag[];
}

const LEGACY_PBE = {
  '1.2.840.113549.1.12.1.3': 'pbeWithSHAAnd3-KeyTripleDES-CBC',
  '1.2.840.113549.1.12.1.6': 'pbeWithSHAAnd40BitRC2-CBC',
} as const;

/** node-forge's PKCS#12 PBE helper, present at run time but missing from @types/node-forge. */
interface ForgePbe {
  pbe: { getCipherForPKCS12PBE(oid: string, params: forge.asn1.Asn1, password: string): forge.cipher.BlockCipher };
}

/**
 * Most key-derivation iterations a PKCS#12 file may ask for, for its MAC (RFC 7292 Appendix B
 * KDF) and for each encrypted bag (PBKDF2 or the Appendix B PBE). Exporters use 2,000–10,000
 * (OpenSSL 3 and macOS 2048, Java 17 10,000); the cap leaves two orders of magnitude of room. The
 * iteration count is the file's to choose, so without a cap a 5 KB upload can ask for minutes of
 * CPU (pkijs derives the MAC key in JavaScript, about 0.5 M iterations per second).
 */
export const MAX_PKCS12_ITERATIONS = 1_000_000;

function assertIterations(iterations: number | bigint | undefined, what: string): void {
  if (iterations === undefined) return;
  if (typeof iterations !== 'number' || !Number.isSafeInteger(iterations) || iterations < 1 || iterations > MAX_PKCS12_ITERATIONS) {
    throw new SigningError('keystore_too_expensive', `The PKCS#12 ${what} asks for ${String(iterations)} key-derivation iterations; at most ${MAX_PKCS12_ITERATIONS} are accepted. Export it again, e.g. with openssl pkcs12 -export -iter 2048 -maciter.`, {
      details: { iterations: String(iterations), limit: MAX_PKCS12_ITERATIONS },
    });
  }
}

/** The iteration count of a PBES2 (PBKDF2) or RFC 7292 Appendix B PBE AlgorithmIdentifier. */
function pbeIterations(algorithm: pkijs.AlgorithmIdentifier): number | bigint | undefined {
  const params = algorithm.algorithmParams;
  try {
    if (algorithm.algorithmId === OID.pbes2) {
      const pbes2 = new pkijs.PBES2Params({ schema: params });
      return new pkijs.PBKDF2Params({ schema: pbes2.keyDerivationFunc.algorithmParams }).iterationCount;
    }
    // pkcs-12PbeParams ::= SEQUENCE { salt OCTET STRING, iterations INTEGER }
    const [, iterations] = params instanceof asn1js.Sequence ? params.valueBlock.value : [];
    return iterations instanceof asn1js.Integer ? integerValue(iterations) : undefined;
  } catch (cause) {
    throw new SigningError('keystore_invalid', `The PKCS#12 encryption parameters are malformed: ${describe(cause)}`, { cause });
  }
}

/** An INTEGER as a number, or as a bigint when it does not fit (the caller refuses it then). */
function integerValue(integer: asn1js.Integer): number | bigint {
  const big = integer.toBigInt();
  return big <= BigInt(Number.MAX_SAFE_INTEGER) && big >= 0n ? Number(big) : big;
}

/** Signals a decryption failure that a wrong password explains (bad padding or garbage out). */
class DecryptFailed extends Error {}

/**
 * Opens a PKCS#12 file. `password` protects the file (MAC and certificate bags); `keyPassword`
 * (default: the same) protects shrouded key bags — keytool and OpenSSL always use one password.
 */
export async function openPkcs12(bytes: Buffer, password: string, keyPassword: string = password): Promise<Pkcs12Contents> {
  const pfx = parsePfx(bytes);
  // MacData ::= SEQUENCE { mac DigestInfo, macSalt OCTET STRING, iterations INTEGER DEFAULT 1 }
  const macIterations = pfx.macData?.toSchema().valueBlock.value[2];
  if (macIterations instanceof asn1js.Integer) assertIterations(integerValue(macIterations), 'integrity MAC');
  const passwordBytes = toArrayBuffer(Buffer.from(password, 'utf8'));
  const hasMac = pfx.macData !== undefined;
  try {
    // RFC 7292 §4: the MAC key is derived from the password, so a mismatch means a wrong password.
    // Checked here with node:crypto where the digest is one it knows (pkcs12-mac.ts), else by pkijs.
    const checkedHere = hasMac && checkMac(pfx, password);
    await pfx.parseInternalValues({ password: passwordBytes, checkIntegrity: hasMac && !checkedHere });
  } catch (cause) {
    if (cause instanceof Error && cause.message.includes('Integrity')) {
      throw new SigningError('keystore_password_incorrect', 'The PKCS#12 password is incorrect (the integrity MAC does not verify).', { cause });
    }
    throw new SigningError('keystore_invalid', `The PKCS#12 file cannot be read: ${describe(cause)}`, { cause });
  }
  const authSafe = pfx.parsedValue?.authenticatedSafe;
  if (!authSafe) throw new SigningError('keystore_invalid', 'The PKCS#12 file has no authenticated safe.');
  // Without a MAC, a failed decryption is the only sign of a wrong store password.
  const storeCode = hasMac ? 'keystore_invalid' : 'keystore_password_incorrect';

  const contents: Pkcs12Contents = { keys: [], certificates: [] };
  for (const info of authSafe.safeContents) {
    let safeContents: Buffer;
    if (info.contentType === OID.data) {
      safeContents = octets(info.content, 'PKCS#12 safe contents');
    } else if (info.contentType === OID.encryptedData) {
      const encrypted = new pkijs.EncryptedData({ schema: info.content });
      const eci = encrypted.encryptedContentInfo;
      const ciphertext = bufferOf(eci.getEncryptedContent());
      try {
        safeContents = await decryptPbe(eci.contentEncryptionAlgorithm, ciphertext, password);
      } catch (cause) {
        if (cause instanceof DecryptFailed) throw new SigningError(storeCode, 'The PKCS#12 certificate bag cannot be decrypted with this password.', { cause });
        throw cause;
      }
    } else {
      throw new SigningError('keystore_unsupported', `PKCS#12 content type ${info.contentType} (public-key privacy mode) is not supported.`);
    }
    await readSafeContents(safeContents, contents, keyPassword, keyPassword === password ? storeCode : 'key_password_incorrect');
  }
  return contents;
}

/**
 * The password-integrity MAC over the authenticated safe's content, checked with node:crypto:
 * true when it matches, false when pkijs should check it (another integrity mode or digest).
 * A mismatch throws as pkijs does, for the caller to report as a wrong password.
 */
function checkMac(pfx: pkijs.PFX, password: string): boolean {
  const mac = pfx.macData!;
  const digest = digestFromOid(mac.mac.digestAlgorithm.algorithmId);
  if (pfx.authSafe.contentType !== OID.data || !(pfx.authSafe.content instanceof asn1js.OctetString) || digest === undefined) return false;
  const content = new Uint8Array(pfx.authSafe.content.getValue());
  if (!macMatches(digest, password, mac.macSalt.valueBlock.valueHexView, mac.iterations ?? 1, content, mac.mac.digest.valueBlock.valueHexView)) {
    throw new Error('Integrity for the PKCS#12 data is broken!');
  }
  return true;
}

function parsePfx(bytes: Buffer): pkijs.PFX {
  const asn1 = parseAsn1(bytes, 'keystore_invalid', 'PKCS#12 file');
  try {
    return new pkijs.PFX({ schema: asn1 });
  } catch (cause) {
    throw new SigningError('keystore_invalid', `The file is not a PKCS#12 (PFX) structure: ${describe(cause)}`, { cause });
  }
}

/** SafeContents ::= SEQUENCE OF SafeBag; SafeBag ::= SEQUENCE { bagId, [0] EXPLICIT bagValue, bagAttributes SET OPTIONAL } */
async function readSafeContents(der: Buffer, out: Pkcs12Contents, keyPassword: string, keyCode: 'keystore_invalid' | 'keystore_password_incorrect' | 'key_password_incorrect'): Promise<void> {
  const sequence = parseAsn1(der, 'keystore_invalid', 'PKCS#12 safe contents');
  if (!(sequence instanceof asn1js.Sequence)) throw new SigningError('keystore_invalid', 'PKCS#12 safe contents is not a SEQUENCE.');
  for (const bag of sequence.valueBlock.value) {
    const [id, wrapped, attributes] = bag instanceof asn1js.Sequence ? bag.valueBlock.value : [];
    if (!(id instanceof asn1js.ObjectIdentifier) || !(wrapped instanceof asn1js.Constructed) || wrapped.idBlock.tagClass !== 3 || wrapped.idBlock.tagNumber !== 0) {
      throw new SigningError('keystore_invalid', 'Malformed PKCS#12 SafeBag.');
    }
    const value = wrapped.valueBlock.value[0];
    if (value === undefined) throw new SigningError('keystore_invalid', 'Empty PKCS#12 SafeBag.');
    const meta = bagAttributes(attributes);
    switch (id.valueBlock.toString()) {
      case OID.pkcs12KeyBag:
        out.keys.push({ der: bufferOf(value.valueBeforeDecodeView), ...meta });
        break;
      case OID.pkcs12ShroudedKeyBag: {
        // EncryptedPrivateKeyInfo ::= SEQUENCE { encryptionAlgorithm AlgorithmIdentifier, encryptedData OCTET STRING }
        const info = value instanceof asn1js.Sequence ? value.valueBlock.value : [];
        const algorithm = new pkijs.AlgorithmIdentifier({ schema: info[0] });
        try {
          out.keys.push({ der: await decryptPbe(algorithm, octets(info[1], 'shrouded key'), keyPassword), ...meta });
        } catch (cause) {
          if (cause instanceof DecryptFailed) throw new SigningError(keyCode, 'The private key in the PKCS#12 file cannot be decrypted with this password.', { cause });
          throw cause;
        }
        break;
      }
      case OID.pkcs12CertBag: {
        // CertBag ::= SEQUENCE { certId OID, certValue [0] EXPLICIT OCTET STRING }
        const [certId, certValue] = value instanceof asn1js.Sequence ? value.valueBlock.value : [];
        if (!(certId instanceof asn1js.ObjectIdentifier) || certId.valueBlock.toString() !== OID.x509Certificate) break; // SDSI certs: ignored
        const inner = certValue instanceof asn1js.Constructed ? certValue.valueBlock.value[0] : undefined;
        out.certificates.push({ der: octets(inner, 'certificate bag'), ...meta });
        break;
      }
      default:
        // CRL, secret and nested safe-contents bags carry nothing a signer needs.
        break;
    }
  }
}

function bagAttributes(attributes: asn1js.AsnType | undefined): { alias?: string; localKeyId?: Buffer } {
  const meta: { alias?: string; localKeyId?: Buffer } = {};
  if (!(attributes instanceof asn1js.Set)) return meta;
  for (const attribute of attributes.valueBlock.value) {
    const [type, values] = attribute instanceof asn1js.Sequence ? attribute.valueBlock.value : [];
    const first = values instanceof asn1js.Set ? values.valueBlock.value[0] : undefined;
    if (!(type instanceof asn1js.ObjectIdentifier) || first === undefined) continue;
    const oid = type.valueBlock.toString();
    if (oid === OID.friendlyName && first instanceof asn1js.BmpString) meta.alias = first.getValue();
    if (oid === OID.localKeyId && first instanceof asn1js.OctetString) meta.localKeyId = bufferOf(first.getValue());
  }
  return meta;
}

function octets(element: unknown, what: string): Buffer {
  if (!(element instanceof asn1js.OctetString)) throw new SigningError('keystore_invalid', `PKCS#12 ${what} is not an OCTET STRING.`);
  return bufferOf(element.getValue());
}

async function decryptPbe(algorithm: pkijs.AlgorithmIdentifier, ciphertext: Buffer, password: string): Promise<Buffer> {
  const oid = algorithm.algorithmId;
  if (oid === OID.pbes2 || oid in LEGACY_PBE) assertIterations(pbeIterations(algorithm), 'encryption');
  if (oid === OID.pbes2) {
    // RFC 8018 PBES2: the password goes to PBKDF2 as its UTF-8 bytes (OpenSSL, Java).
    const encrypted = new pkijs.EncryptedData({
      encryptedContentInfo: new pkijs.EncryptedContentInfo({
        contentType: OID.data,
        contentEncryptionAlgorithm: algorithm,
        encryptedContent: new asn1js.OctetString({ valueHex: toArrayBuffer(ciphertext) }),
      }),
    });
    let plain: Buffer;
    try {
      plain = bufferOf(await encrypted.decrypt({ password: toArrayBuffer(Buffer.from(password, 'utf8')) }));
    } catch (cause) {
      // WebCrypto reports a bad CBC padding as OperationError: the derived key is wrong.
      if (cause instanceof Error && cause.name === 'OperationError') throw new DecryptFailed('bad padding', { cause });
      throw new SigningError('keystore_unsupported', `The PKCS#12 PBES2 parameters are not supported: ${describe(cause)}`, { cause });
    }
    // A wrong key passes the padding check 1 time in 256; the payload is then not DER.
    if (plain[0] !== 0x30) throw new DecryptFailed('not DER');
    return plain;
  }
  if (oid in LEGACY_PBE) {
    // RFC 7292 Appendix B key/IV derivation from the BMPString password, then 3DES or RC2-40 CBC.
    // node-forge loads only here: modern (PBES2) files and every other identity format never need it.
    const { default: forge } = await import('node-forge');
    const params = forge.asn1.fromDer(forge.util.createBuffer(encodeDer(algorithm.algorithmParams as asn1js.AsnType).toString('binary')));
    const cipher = (forge.pki as unknown as ForgePbe).pbe.getCipherForPKCS12PBE(oid, params, password);
    cipher.update(forge.util.createBuffer(ciphertext.toString('binary')));
    if (!cipher.finish()) throw new DecryptFailed('bad padding');
    const plain = Buffer.from(cipher.output.getBytes(), 'binary');
    // A wrong key passes the padding check 1 time in 256; the payload is then not DER.
    if (plain[0] !== 0x30) throw new DecryptFailed('not DER');
    return plain;
  }
  throw new SigningError('keystore_unsupported', `PKCS#12 encryption algorithm ${oid} is not supported (supported: PBES2, pbeWithSHAAnd3-KeyTripleDES-CBC, pbeWithSHAAnd40BitRC2-CBC).`);
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
