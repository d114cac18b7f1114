// .mobileprovision reader: a DER/BER CMS SignedData with the profile plist attached as
// eContent (ios-signing.md §11). The CMS is read by the CMS engine's parser; Apple's signature
// is checked only through the caller's `verifyProfileSignature` hook.
import { parseCertificate } from '../../cms/certificate.ts';
import { parseSignedData, type ParsedSignedData } from '../../cms/cms-parse.ts';
import { OID, bufferOf } from '../../cms/der.ts';
import { SigningError } from '../../errors.ts';
import { dateToJs, expectType, parsePlist, type PlistDict, type PlistValue } from '../../plist/index.ts';
import type { ProfileType, ProvisioningProfile, VerifyProfileSignature } from './types.ts';

export interface ParseProfileOptions {
  /** Checks the CMS signature/chain; when absent, `signatureVerified` is false. */
  verifyProfileSignature?: VerifyProfileSignature;
}

const invalid = (message: string, cause?: unknown) =>
  new SigningError('profile_invalid', `Provisioning profile: ${message}`, cause === undefined ? undefined : { cause });

export function parseProvisioningProfile(bytes: Uint8Array, options: ParseProfileOptions = {}): ProvisioningProfile {
  const der = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let signedData: ParsedSignedData;
  try {
    signedData = parseSignedData(der);
  } catch (cause) {
    throw invalid('not a CMS SignedData structure', cause);
  }
  // RFC 5652 §5.2: the profile plist is attached as id-data content.
  if (signedData.contentType !== OID.data || signedData.content === undefined) throw invalid('the CMS carries no attached plist');
  const signerCertificates = findSignerCertificates(signedData);
  let signatureVerified = false;
  if (options.verifyProfileSignature) {
    options.verifyProfileSignature({ der, signedData, signerCertificates });
    signatureVerified = true;
  }
  const plistBytes = signedData.content;
  let plist: PlistDict;
  try {
    plist = expectType(parsePlist(plistBytes).value, 'dict', 'the profile plist', 'profile_invalid');
  } catch (cause) {
    if (cause instanceof SigningError && cause.code === 'profile_invalid') throw cause;
    throw invalid('the embedded plist cannot be read', cause);
  }
  return describeProfile(Buffer.from(der), Buffer.from(plistBytes), plist, signedData.certificates, signerCertificates, signatureVerified);
}

function describeProfile(
  bytes: Buffer,
  plistBytes: Buffer,
  plist: PlistDict,
  cmsCertificates: Buffer[],
  signerCertificates: Buffer[],
  signatureVerified: boolean,
): ProvisioningProfile {
  const field = (key: string) => plist.value.get(key);
  const entitlements = expectType(field('Entitlements'), 'dict', 'Entitlements', 'profile_invalid');
  const teamId = firstString(field('TeamIdentifier'), 'TeamIdentifier');
  const appIdPrefix = firstString(field('ApplicationIdentifierPrefix'), 'ApplicationIdentifierPrefix');
  const applicationIdentifier = expectType(entitlements.value.get('application-identifier'), 'string', 'Entitlements.application-identifier', 'profile_invalid').value;
  if (!applicationIdentifier.startsWith(`${appIdPrefix}.`) || applicationIdentifier.length === appIdPrefix.length + 1) {
    throw invalid(`application-identifier "${applicationIdentifier}" does not start with the prefix "${appIdPrefix}."`);
  }
  const devicesValue = field('ProvisionedDevices');
  const devices = devicesValue === undefined ? [] : stringArray(devicesValue, 'ProvisionedDevices');
  const allDevices = field('ProvisionsAllDevices');
  const provisionsAllDevices = allDevices !== undefined && expectType(allDevices, 'boolean', 'ProvisionsAllDevices', 'profile_invalid').value;
  const getTaskAllow = entitlements.value.get('get-task-allow');
  const debuggable = getTaskAllow !== undefined && expectType(getTaskAllow, 'boolean', 'Entitlements.get-task-allow', 'profile_invalid').value;
  const developerCertificates = expectType(field('DeveloperCertificates'), 'array', 'DeveloperCertificates', 'profile_invalid').value.map(
    (item, i) => Buffer.from(expectType(item, 'data', `DeveloperCertificates[${i}]`, 'profile_invalid').value),
  );
  const platforms = field('Platform') === undefined ? [] : stringArray(field('Platform')!, 'Platform');
  const profile: ProvisioningProfile = {
    bytes,
    plistBytes,
    plist,
    name: requiredString(field('Name'), 'Name'),
    uuid: requiredString(field('UUID'), 'UUID'),
    teamId,
    appIdPrefix,
    applicationIdentifier,
    bundleIdPattern: applicationIdentifier.slice(appIdPrefix.length + 1),
    type: profileType(provisionsAllDevices, devices, debuggable),
    platforms,
    devices,
    provisionsAllDevices,
    createdAt: dateToJs(expectType(field('CreationDate'), 'date', 'CreationDate', 'profile_invalid')),
    expiresAt: dateToJs(expectType(field('ExpirationDate'), 'date', 'ExpirationDate', 'profile_invalid')),
    developerCertificates,
    entitlements,
    cmsCertificates,
    signerCertificates,
    signatureVerified,
  };
  const appIdName = field('AppIDName');
  if (appIdName !== undefined) profile.appIdName = requiredString(appIdName, 'AppIDName');
  const teamName = field('TeamName');
  if (teamName !== undefined) profile.teamName = requiredString(teamName, 'TeamName');
  return profile;
}

/** Type rules from the brief and Apple's profile kinds (distribution-protocols.md §1). */
function profileType(provisionsAllDevices: boolean, devices: string[], getTaskAllow: boolean): ProfileType {
  if (provisionsAllDevices) return 'enterprise';
  if (getTaskAllow) return 'development';
  if (devices.length > 0) return 'ad-hoc';
  return 'app-store';
}

function requiredString(value: PlistValue | undefined, what: string): string {
  return expectType(value, 'string', what, 'profile_invalid').value;
}

function stringArray(value: PlistValue, what: string): string[] {
  return expectType(value, 'array', what, 'profile_invalid').value.map((item, i) => requiredString(item, `${what}[${i}]`));
}

function firstString(value: PlistValue | undefined, what: string): string {
  const first = stringArray(expectType(value, 'array', what, 'profile_invalid'), what)[0];
  if (first === undefined || first === '') throw invalid(`${what} is empty`);
  return first;
}

/** RFC 5652 §5.3 SignerIdentifier: issuerAndSerialNumber or subjectKeyIdentifier. */
function findSignerCertificates(signedData: ParsedSignedData): Buffer[] {
  const found: Buffer[] = [];
  for (const signer of signedData.signerInfos) {
    for (const der of signedData.certificates) {
      let matches = false;
      try {
        const cert = parseCertificate(der);
        if ('issuer' in signer.sid) {
          matches =
            bufferOf(cert.issuer.valueBeforeDecode).equals(signer.sid.issuer) &&
            bufferOf(cert.serialNumber.valueBlock.valueHexView).equals(signer.sid.serialNumber);
        } else {
          const ski = cert.extensions?.find((e) => e.extnID === OID.subjectKeyIdentifier);
          const value = ski?.parsedValue as { valueBlock?: { valueHexView?: Uint8Array } } | undefined;
          matches = value?.valueBlock?.valueHexView !== undefined && bufferOf(value.valueBlock.valueHexView).equals(signer.sid.subjectKeyIdentifier);
        }
      } catch {
        // A certificate the CMS carries but nobody can parse cannot be the signer's.
      }
      if (matches && !found.some((f) => f.equals(der))) found.push(der);
    }
  }
  return found;
}
