// Test PKI shared by every signer's tests: a root CA, an Apple-WWDR-like intermediate, Apple-style
// and Android-style leaf identities, PKCS#12 exports in modern and legacy encodings, and signed
// .mobileprovision profiles. Built once per process (keys are random, dates fixed).
//
// Certificates are encoded here with a tiny DER writer rather than with src/signing/cms, so that
// tests of the CMS code do not depend on the code under test. PKCS#12 files and profiles are made
// by the openssl CLI for the same reason: they are real third-party encodings.
import { X509Certificate, createHash, createPublicKey, generateKeyPairSync, randomBytes, randomUUID, sign, type KeyObject } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Identity } from '../../src/signing/cms/identity.ts';

export interface TestIdentity extends Identity {
  /** Human label ("leaf", "ecLeaf", ...). */
  label: string;
  certificatePem: string;
  /** Unencrypted PKCS#8 PEM. */
  privateKeyPem: string;
}

export interface P12Options {
  password: string;
  /** RC2-40 certificate bag + 3DES key bag + SHA-1 MAC, like a Keychain export (`openssl -legacy`). */
  legacy?: boolean;
  /** Also store the identity's chain (intermediate, root) in the file. Keychain exports do not. */
  includeChain?: boolean;
  /** Friendly name; defaults to the identity's alias. */
  alias?: string;
  /** Key-derivation iterations of the bags and the MAC (`-iter N -maciter`); OpenSSL's default otherwise. */
  iterations?: number;
}

export interface ProfileOptions {
  /** Bundle id or "*" for a wildcard profile. */
  bundleId: string;
  /** Ad-hoc device UDIDs; when absent the profile is an enterprise one (ProvisionsAllDevices). */
  devices?: string[];
  expiresAt?: Date;
  createdAt?: Date;
  /** Developer certificate DER; defaults to the RSA leaf's. */
  certificate?: Buffer;
  teamId?: string;
  name?: string;
  uuid?: string;
  getTaskAllow?: boolean;
  apsEnvironment?: 'development' | 'production';
  applicationGroups?: string[];
  /** Further entitlements the profile grants (e.g. what an App ID's capabilities add). */
  entitlements?: { [key: string]: ProfilePlistValue };
  /** Signer of the CMS wrapper; defaults to the test intermediate (as Apple signs with its own CA). */
  signer?: TestIdentity;
}

export interface TestPki {
  root: TestIdentity;
  intermediate: TestIdentity;
  /** iPhone Distribution: Signet Test Inc (SGNTEST123), RSA-2048, issued by the intermediate. */
  leaf: TestIdentity;
  /** Same subject, EC P-256. */
  ecLeaf: TestIdentity;
  /** Issued by the intermediate, valid 2020-01-01 .. 2021-01-01. */
  expiredLeaf: TestIdentity;
  /** Self-signed RSA-2048 like an Android upload key. */
  androidRsa: TestIdentity;
  /** Self-signed EC P-256 like an Android upload key. */
  androidEc: TestIdentity;
  teamId: string;
  /** A folder holding root.cer and intermediate.cer (DER). */
  caDir: string;
  p12(identity: TestIdentity, options: P12Options): Buffer;
  mobileprovision(options: ProfileOptions): Buffer;
  /** The profile plist XML that mobileprovision() wraps, for the same options. */
  profilePlist(options: ProfileOptions): string;
}

export const TEST_TEAM_ID = 'SGNTEST123';
const TEAM_NAME = 'Signet Test Inc';

let cached: TestPki | undefined;

/** The process-wide test PKI (generated on first use, about a second). */
export function testPki(): TestPki {
  cached ??= buildPki();
  return cached;
}

// ---- tiny DER writer -------------------------------------------------------------------------

function derLength(n: number): Buffer {
  if (n < 0x80) return Buffer.from([n]);
  const bytes: number[] = [];
  for (let v = n; v > 0; v = Math.floor(v / 256)) bytes.unshift(v & 0xff);
  return Buffer.from([0x80 | bytes.length, ...bytes]);
}
function tlv(tag: number, ...content: Buffer[]): Buffer {
  const body = Buffer.concat(content);
  return Buffer.concat([Buffer.from([tag]), derLength(body.length), body]);
}
const seq = (...c: Buffer[]): Buffer => tlv(0x30, ...c);
const set = (...c: Buffer[]): Buffer => tlv(0x31, ...c);
function oid(dotted: string): Buffer {
  const parts = dotted.split('.').map(Number);
  const out: number[] = [40 * (parts[0] ?? 0) + (parts[1] ?? 0)];
  for (const part of parts.slice(2)) {
    const chunk: number[] = [part & 0x7f];
    for (let v = Math.floor(part / 128); v > 0; v = Math.floor(v / 128)) chunk.unshift(0x80 | (v & 0x7f));
    out.push(...chunk);
  }
  return tlv(0x06, Buffer.from(out));
}
function integer(bytes: Buffer): Buffer {
  let b = bytes;
  while (b.length > 1 && b[0] === 0 && ((b[1] ?? 0) & 0x80) === 0) b = b.subarray(1);
  return tlv(0x02, (b[0] ?? 0) & 0x80 ? Buffer.concat([Buffer.from([0]), b]) : b);
}
function time(date: Date): Buffer {
  const iso = date.toISOString().replace(/[-:T]/g, '').slice(0, 14);
  return date.getUTCFullYear() < 2050 ? tlv(0x17, Buffer.from(iso.slice(2) + 'Z')) : tlv(0x18, Buffer.from(iso + 'Z'));
}
const utf8 = (s: string): Buffer => tlv(0x0c, Buffer.from(s, 'utf8'));
const printable = (s: string): Buffer => tlv(0x13, Buffer.from(s, 'latin1'));

type Rdn = [type: string, value: string];
const ATTR: Record<string, string> = { CN: '2.5.4.3', OU: '2.5.4.11', O: '2.5.4.10', C: '2.5.4.6', UID: '0.9.2342.19200300.100.1.1' };
function name(rdns: Rdn[]): Buffer {
  return seq(...rdns.map(([type, value]) => set(seq(oid(ATTR[type] ?? type), type === 'C' ? printable(value) : utf8(value)))));
}

function extension(id: string, critical: boolean, value: Buffer): Buffer {
  return seq(oid(id), ...(critical ? [tlv(0x01, Buffer.from([0xff]))] : []), tlv(0x04, value));
}

// ---- certificates ----------------------------------------------------------------------------

interface CertSpec {
  subject: Rdn[];
  key: KeyObject;
  issuer?: { subject: Rdn[]; key: KeyObject; publicKey: KeyObject };
  notBefore: Date;
  notAfter: Date;
  ca: boolean;
  /** Leaf only: an AIA caIssuers URL, as Apple puts in its leaves. */
  caIssuersUrl?: string;
  /** An AIA OCSP responder URL (id-ad-ocsp). */
  ocspUrl?: string;
  /** Extended key usage of a leaf (default: code signing). */
  extendedKeyUsage?: string;
  /** The serial's magnitude (default: 8 random bytes, top bit clear). */
  serial?: Buffer;
}

function keyId(publicKey: KeyObject): Buffer {
  // RFC 5280 4.2.1.2 method 1: SHA-1 of the subjectPublicKey BIT STRING value. The SPKI DER of a
  // key ends with that BIT STRING; hashing the whole SPKI is an equally valid unique identifier.
  return createHash('sha1').update(publicKey.export({ format: 'der', type: 'spki' })).digest();
}

function signatureAlgorithm(key: KeyObject): Buffer {
  return key.asymmetricKeyType === 'ec' ? seq(oid('1.2.840.10045.4.3.2')) : seq(oid('1.2.840.113549.1.1.11'), tlv(0x05));
}

function makeCertificate(spec: CertSpec): Buffer {
  const publicKey = createPublicKey(spec.key);
  const issuer = spec.issuer ?? { subject: spec.subject, key: spec.key, publicKey };
  const serial = spec.serial ?? randomBytes(8);
  if (spec.serial === undefined) serial[0] = (serial[0] ?? 0) & 0x7f;
  const extensions = [
    extension('2.5.29.19', true, spec.ca ? seq(tlv(0x01, Buffer.from([0xff]))) : seq()),
    // keyUsage: CA = keyCertSign|cRLSign, leaf = digitalSignature
    extension('2.5.29.15', true, spec.ca ? tlv(0x03, Buffer.from([0x01, 0x06])) : tlv(0x03, Buffer.from([0x07, 0x80]))),
    extension('2.5.29.14', false, tlv(0x04, keyId(publicKey))),
    extension('2.5.29.35', false, seq(tlv(0x80, keyId(issuer.publicKey)))),
  ];
  if (!spec.ca) extensions.push(extension('2.5.29.37', false, seq(oid(spec.extendedKeyUsage ?? '1.3.6.1.5.5.7.3.3'))));
  const access: Buffer[] = [];
  if (spec.ocspUrl !== undefined) access.push(seq(oid('1.3.6.1.5.5.7.48.1'), tlv(0x86, Buffer.from(spec.ocspUrl))));
  if (spec.caIssuersUrl !== undefined) access.push(seq(oid('1.3.6.1.5.5.7.48.2'), tlv(0x86, Buffer.from(spec.caIssuersUrl))));
  if (access.length > 0) extensions.push(extension('1.3.6.1.5.5.7.1.1', false, seq(...access)));
  const algorithm = signatureAlgorithm(issuer.key);
  const tbs = seq(
    tlv(0xa0, integer(Buffer.from([2]))),
    integer(serial),
    algorithm,
    name(issuer.subject),
    seq(time(spec.notBefore), time(spec.notAfter)),
    name(spec.subject),
    publicKey.export({ format: 'der', type: 'spki' }),
    tlv(0xa3, seq(...extensions)),
  );
  const signature = sign('sha256', tbs, issuer.key);
  return seq(tbs, algorithm, tlv(0x03, Buffer.concat([Buffer.from([0]), signature])));
}

export interface IssueOptions {
  /** Issuing CA (its key signs); the leaf's chain becomes [issuer, ...issuer.chain]. */
  issuer: TestIdentity;
  commonName: string;
  teamId?: string;
  notBefore: Date;
  notAfter: Date;
  ocspUrl?: string;
  /** Default: code signing; '1.3.6.1.5.5.7.3.9' makes a delegated OCSP responder. */
  extendedKeyUsage?: string;
}

/** A new RSA leaf issued by `options.issuer` (an Apple-like distribution certificate by default). */
export function issueTestIdentity(label: string, options: IssueOptions): TestIdentity {
  const key = rsaKey();
  const team = options.teamId ?? TEST_TEAM_ID;
  const subject: Rdn[] = [['UID', team], ['CN', options.commonName], ['OU', team], ['O', TEAM_NAME], ['C', 'US']];
  const issuerSubject = subjectOf(options.issuer.certificate);
  const spec: CertSpec = {
    subject,
    key,
    issuer: { subject: issuerSubject, key: options.issuer.privateKey, publicKey: createPublicKey(options.issuer.privateKey) },
    notBefore: options.notBefore,
    notAfter: options.notAfter,
    ca: false,
  };
  if (options.ocspUrl !== undefined) spec.ocspUrl = options.ocspUrl;
  if (options.extendedKeyUsage !== undefined) spec.extendedKeyUsage = options.extendedKeyUsage;
  return identity(label, key, makeCertificate(spec), [options.issuer.certificate, ...options.issuer.chain], label);
}

/** The subject RDNs of a certificate made by this module (for issuing under it). */
function subjectOf(der: Buffer): Rdn[] {
  const x509 = new X509Certificate(der);
  const lines = x509.subject.split('\n').filter(Boolean);
  // node prints RDNs in encoding order, "TYPE=value" with its own short names.
  const names: Record<string, string> = { CN: 'CN', OU: 'OU', O: 'O', C: 'C', UID: 'UID', userId: 'UID' };
  return lines.map((line) => {
    const at = line.indexOf('=');
    return [names[line.slice(0, at)] ?? line.slice(0, at), line.slice(at + 1)] as Rdn;
  });
}

function rsaKey(): KeyObject {
  return generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;
}
function ecKey(): KeyObject {
  return generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey;
}

function toPem(der: Buffer, label: string): string {
  const b64 = der.toString('base64').replace(/.{64}/g, '$&\n').replace(/\n$/, '');
  return `-----BEGIN ${label}-----\n${b64}\n-----END ${label}-----\n`;
}

function identity(label: string, key: KeyObject, certificate: Buffer, chain: Buffer[], alias: string): TestIdentity {
  const result: TestIdentity = {
    label,
    privateKey: key,
    keyType: key.asymmetricKeyType === 'ec' ? 'ec' : 'rsa',
    certificate,
    chain,
    alias,
    certificatePem: toPem(certificate, 'CERTIFICATE'),
    privateKeyPem: key.export({ format: 'pem', type: 'pkcs8' }).toString(),
  };
  if (key.asymmetricKeyType === 'ec') result.curve = 'P-256';
  return result;
}

// ---- the PKI ---------------------------------------------------------------------------------

function buildPki(): TestPki {
  const dir = mkdtempSync(path.join(tmpdir(), 'signet-pki-'));
  process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  const caDir = path.join(dir, 'ca');
  const work = path.join(dir, 'work');
  mkdirSync(caDir);
  mkdirSync(work);

  const longAgo = new Date(Date.UTC(2020, 0, 1));
  const farAway = new Date(Date.UTC(2045, 0, 1));

  const rootSubject: Rdn[] = [['CN', 'Signet Test Root CA'], ['OU', 'Signet Test Certification Authority'], ['O', TEAM_NAME], ['C', 'US']];
  const rootKey = rsaKey();
  const rootCert = makeCertificate({ subject: rootSubject, key: rootKey, notBefore: longAgo, notAfter: new Date(Date.UTC(2050, 0, 1)), ca: true });
  const root = identity('root', rootKey, rootCert, [], 'root');

  const wwdrSubject: Rdn[] = [['CN', 'Signet Test WWDR'], ['OU', 'G3'], ['O', TEAM_NAME], ['C', 'US']];
  const wwdrKey = rsaKey();
  const rootIssuer = { subject: rootSubject, key: rootKey, publicKey: createPublicKey(rootKey) };
  const wwdrCert = makeCertificate({ subject: wwdrSubject, key: wwdrKey, issuer: rootIssuer, notBefore: longAgo, notAfter: farAway, ca: true });
  const intermediate = identity('intermediate', wwdrKey, wwdrCert, [rootCert], 'intermediate');

  const wwdrIssuer = { subject: wwdrSubject, key: wwdrKey, publicKey: createPublicKey(wwdrKey) };
  const leafSubject: Rdn[] = [
    ['UID', TEST_TEAM_ID],
    ['CN', `iPhone Distribution: ${TEAM_NAME} (${TEST_TEAM_ID})`],
    ['OU', TEST_TEAM_ID],
    ['O', TEAM_NAME],
    ['C', 'US'],
  ];
  const caIssuersUrl = 'http://certs.signet.test/wwdrg3.cer';
  const appleLeaf = (label: string, key: KeyObject, notBefore: Date, notAfter: Date): TestIdentity =>
    identity(label, key, makeCertificate({ subject: leafSubject, key, issuer: wwdrIssuer, notBefore, notAfter, ca: false, caIssuersUrl }), [wwdrCert, rootCert], label);
  const leaf = appleLeaf('leaf', rsaKey(), longAgo, farAway);
  const ecLeaf = appleLeaf('ecLeaf', ecKey(), longAgo, farAway);
  const expiredLeaf = appleLeaf('expiredLeaf', rsaKey(), longAgo, new Date(Date.UTC(2021, 0, 1)));

  const androidSubject = (cn: string): Rdn[] => [['CN', cn], ['OU', 'Android'], ['O', TEAM_NAME], ['C', 'US']];
  const selfSigned = (label: string, key: KeyObject, cn: string): TestIdentity =>
    identity(label, key, makeCertificate({ subject: androidSubject(cn), key, notBefore: longAgo, notAfter: new Date(Date.UTC(2049, 11, 31)), ca: false }), [], label);
  const androidRsa = selfSigned('androidRsa', rsaKey(), 'Signet Android RSA');
  const androidEc = selfSigned('androidEc', ecKey(), 'Signet Android EC');

  writeFileSync(path.join(caDir, 'root.cer'), rootCert);
  writeFileSync(path.join(caDir, 'intermediate.cer'), wwdrCert);

  let counter = 0;
  const scratch = (suffix: string, data: string | Buffer): string => {
    const file = path.join(work, `${++counter}-${suffix}`);
    writeFileSync(file, data);
    return file;
  };
  const p12Cache = new Map<string, Buffer>();

  const p12 = (id: TestIdentity, options: P12Options): Buffer => {
    const alias = options.alias ?? id.alias ?? id.label;
    const cacheKey = JSON.stringify([id.label, options.password, !!options.legacy, !!options.includeChain, alias, options.iterations ?? null]);
    const hit = p12Cache.get(cacheKey);
    if (hit) return hit;
    const out = path.join(work, `${++counter}.p12`);
    const args = ['pkcs12', '-export', '-inkey', scratch('key.pem', id.privateKeyPem), '-in', scratch('cert.pem', id.certificatePem), '-name', alias, '-passout', 'stdin', '-out', out];
    if (options.includeChain && id.chain.length > 0) args.push('-certfile', scratch('chain.pem', id.chain.map((c) => toPem(c, 'CERTIFICATE')).join('')));
    if (options.legacy) args.push('-legacy');
    if (options.iterations !== undefined) args.push('-iter', String(options.iterations), '-maciter');
    const result = spawnChecked('openssl', args, options.password + '\n', out);
    p12Cache.set(cacheKey, result);
    return result;
  };

  const profilePlist = (options: ProfileOptions): string => buildProfilePlist(options, leaf.certificate);

  const mobileprovision = (options: ProfileOptions): Buffer => {
    const signer = options.signer ?? intermediate;
    const content = scratch('profile.plist', profilePlist(options));
    const out = path.join(work, `${++counter}.mobileprovision`);
    const args = ['cms', '-sign', '-binary', '-nodetach', '-nosmimecap', '-outform', 'DER', '-md', 'sha256', '-in', content, '-out', out];
    args.push('-signer', scratch('signer.pem', signer.certificatePem), '-inkey', scratch('signer-key.pem', signer.privateKeyPem));
    if (signer.chain.length > 0) args.push('-certfile', scratch('signer-chain.pem', signer.chain.map((c) => toPem(c, 'CERTIFICATE')).join('')));
    return spawnChecked('openssl', args, undefined, out);
  };

  return { root, intermediate, leaf, ecLeaf, expiredLeaf, androidRsa, androidEc, teamId: TEST_TEAM_ID, caDir, p12, mobileprovision, profilePlist };
}

function spawnChecked(command: string, args: string[], input?: string, output?: string): Buffer {
  const result = spawnSync(command, args, input === undefined ? {} : { input });
  if (result.status !== 0) throw new Error(`${command} ${args.join(' ')} failed: ${result.error?.message ?? result.stderr.toString()}`);
  if (output === undefined) return Buffer.alloc(0);
  return readFileSync(output);
}

// ---- profile plist ---------------------------------------------------------------------------

export type ProfilePlistValue = string | number | boolean | Date | Buffer | ProfilePlistValue[] | { [key: string]: ProfilePlistValue };
type PlistValue = ProfilePlistValue;

function escapeXml(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}
function plistXml(value: PlistValue, indent: string): string {
  if (typeof value === 'string') return `${indent}<string>${escapeXml(value)}</string>\n`;
  if (typeof value === 'number') return `${indent}<integer>${value}</integer>\n`;
  if (typeof value === 'boolean') return `${indent}<${value}/>\n`;
  if (value instanceof Date) return `${indent}<date>${value.toISOString().replace(/\.\d{3}Z$/, 'Z')}</date>\n`;
  if (Buffer.isBuffer(value)) return `${indent}<data>${value.toString('base64')}</data>\n`;
  if (Array.isArray(value)) return `${indent}<array>\n${value.map((v) => plistXml(v, indent + '\t')).join('')}${indent}</array>\n`;
  const keys = Object.keys(value).sort();
  return `${indent}<dict>\n${keys.map((k) => `${indent}\t<key>${escapeXml(k)}</key>\n${plistXml(value[k] as PlistValue, indent + '\t')}`).join('')}${indent}</dict>\n`;
}

function buildProfilePlist(options: ProfileOptions, defaultCertificate: Buffer): string {
  const teamId = options.teamId ?? TEST_TEAM_ID;
  const created = options.createdAt ?? new Date(Date.now() - 86_400_000);
  const expires = options.expiresAt ?? new Date(created.getTime() + 365 * 86_400_000);
  const entitlements: { [key: string]: PlistValue } = {
    'application-identifier': `${teamId}.${options.bundleId}`,
    'com.apple.developer.team-identifier': teamId,
    'get-task-allow': options.getTaskAllow ?? false,
    'keychain-access-groups': [`${teamId}.*`],
  };
  if (options.apsEnvironment !== undefined) entitlements['aps-environment'] = options.apsEnvironment;
  if (options.applicationGroups !== undefined) entitlements['com.apple.security.application-groups'] = options.applicationGroups;
  Object.assign(entitlements, options.entitlements);
  const profile: { [key: string]: PlistValue } = {
    AppIDName: `Signet Test ${options.bundleId}`,
    ApplicationIdentifierPrefix: [teamId],
    CreationDate: created,
    DeveloperCertificates: [options.certificate ?? defaultCertificate],
    Entitlements: entitlements,
    ExpirationDate: expires,
    Name: options.name ?? `Signet Test ${options.devices ? 'Ad Hoc' : 'Enterprise'} ${options.bundleId}`,
    Platform: ['iOS'],
    TeamIdentifier: [teamId],
    TeamName: TEAM_NAME,
    TimeToLive: Math.max(1, Math.round((expires.getTime() - created.getTime()) / 86_400_000)),
    UUID: options.uuid ?? randomUUID().toUpperCase(),
    Version: 1,
  };
  if (options.devices) profile.ProvisionedDevices = options.devices;
  else profile.ProvisionsAllDevices = true;
  return (
    '<?xml version="1.0" encoding="UTF-8"?>\n' +
    '<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">\n' +
    '<plist version="1.0">\n' +
    plistXml(profile, '') +
    '</plist>\n'
  );
}

/**
 * A self-signed certificate with any subject, for tests of name handling. `subject` lists
 * [type, value] pairs in DER order; types are CN, OU, O, C, UID or a dotted OID. `serial` is the
 * serial's magnitude, encoded as a positive DER INTEGER (a 0x00 goes before a top bit that is set).
 */
export function selfSignedCertificate(subject: Array<[string, string]>, key: KeyObject = testPki().androidRsa.privateKey, serial?: Buffer): Buffer {
  const spec: CertSpec = { subject, key, notBefore: new Date(Date.UTC(2020, 0, 1)), notAfter: new Date(Date.UTC(2040, 0, 1)), ca: false };
  if (serial !== undefined) spec.serial = serial;
  return makeCertificate(spec);
}

/** PEM of a DER certificate (exported for tests that feed PEM inputs). */
export function certificateToPem(der: Buffer): string {
  return toPem(der, 'CERTIFICATE');
}
