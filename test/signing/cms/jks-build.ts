// Test-only JKS writer (the inverse of src/signing/cms/jks.ts), following OpenJDK
// JavaKeyStore.engineStore and KeyProtector.protect, so tests can make keystores with several
// aliases, odd passwords or damaged bytes that no shared fixture has.
import { createHash, randomBytes } from 'node:crypto';

export interface JksKeySpec {
  alias: string;
  pkcs8: Buffer;
  chain: Buffer[];
  keyPassword: string;
}
export interface JksTrustedSpec {
  alias: string;
  certificate: Buffer;
}

const utf16be = (s: string): Buffer => Buffer.from(s, 'utf16le').swap16();
const u32 = (n: number): Buffer => {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n);
  return b;
};
const utf = (s: string): Buffer => {
  const body = Buffer.from(s, 'utf8');
  const len = Buffer.alloc(2);
  len.writeUInt16BE(body.length);
  return Buffer.concat([len, body]);
};
const u64 = (n: number): Buffer => {
  const b = Buffer.alloc(8);
  b.writeBigInt64BE(BigInt(n));
  return b;
};

/** KeyProtector.protect wrapped in EncryptedPrivateKeyInfo { 1.3.6.1.4.1.42.2.17.1.1, OCTET STRING }. */
export function protectKey(pkcs8: Buffer, password: string): Buffer {
  const pw = utf16be(password);
  const salt = randomBytes(20);
  const out = Buffer.alloc(pkcs8.length);
  let digest: Buffer = salt;
  for (let offset = 0; offset < pkcs8.length; offset += 20) {
    digest = createHash('sha1').update(pw).update(digest).digest();
    for (let i = 0; i < 20 && offset + i < pkcs8.length; i++) out[offset + i] = (pkcs8[offset + i] as number) ^ (digest[i] as number);
  }
  const check = createHash('sha1').update(pw).update(pkcs8).digest();
  const data = Buffer.concat([salt, out, check]);
  const algorithm = Buffer.from('300e060a2b060104012a021101010500', 'hex');
  return der(0x30, Buffer.concat([algorithm, der(0x04, data)]));
}

function der(tag: number, body: Buffer): Buffer {
  const len = body.length < 0x80 ? Buffer.from([body.length]) : body.length < 0x10000 ? Buffer.from([0x82, body.length >> 8, body.length & 0xff]) : Buffer.from([0x83, body.length >> 16, (body.length >> 8) & 0xff, body.length & 0xff]);
  return Buffer.concat([Buffer.from([tag]), len, body]);
}

export function buildJks(storePassword: string, keys: JksKeySpec[], trusted: JksTrustedSpec[] = []): Buffer {
  const parts: Buffer[] = [u32(0xfeedfeed), u32(2), u32(keys.length + trusted.length)];
  for (const key of keys) {
    const protectedKey = protectKey(key.pkcs8, key.keyPassword);
    parts.push(u32(1), utf(key.alias.toLowerCase()), u64(Date.UTC(2026, 0, 1)), u32(protectedKey.length), protectedKey, u32(key.chain.length));
    for (const cert of key.chain) parts.push(utf('X.509'), u32(cert.length), cert);
  }
  for (const entry of trusted) parts.push(u32(2), utf(entry.alias.toLowerCase()), u64(Date.UTC(2026, 0, 1)), utf('X.509'), u32(entry.certificate.length), entry.certificate);
  const body = Buffer.concat(parts);
  const mac = createHash('sha1').update(utf16be(storePassword)).update('Mighty Aphrodite', 'utf8').update(body).digest();
  return Buffer.concat([body, mac]);
}
