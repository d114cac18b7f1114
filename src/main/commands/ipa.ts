// The .ipa halves of `signet sign` and `signet verify` (sign.ts and verify.ts dispatch here by
// content): load the p12 and profiles, re-sign with the same engine and verification the
// service uses, and print what was done.
import { readFile } from 'node:fs/promises';
import { readCaDirectory } from '../../signing/cms/ca-directory.ts';
import { FileSource, SIGNING_READS } from '../../signing/data-source.ts';
import { SigningError } from '../../signing/errors.ts';
import { parsePlist, type PlistDict } from '../../signing/plist/index.ts';
import { describeIpaVerification, verifyIpa } from '../../signing/ios/verify-ipa/index.ts';
import { signPackageFile } from '../../signing/pipeline/sign-package.ts';
import type { IosProfileInput } from '../../signing/pipeline/types.ts';

export interface IpaSignOptions {
  output: string;
  p12?: string;
  keystore?: string;
  password?: string;
  profile?: string[];
  bundleId?: string;
  name?: string;
  version?: string;
  entitlements?: string;
  /** Folder of CA certificates completing the chain (`--ca-dir`, SIGNET_APPLE_CA_DIR). */
  caDir?: string;
}

export async function signIpaFile(input: string, options: IpaSignOptions): Promise<string[]> {
  const p12 = options.p12 ?? options.keystore;
  if (p12 === undefined) throw new SigningError('keystore_invalid', 'signing an .ipa needs --p12 FILE (the PKCS#12 export of the certificate and key)');
  if (options.profile === undefined || options.profile.length === 0) throw new SigningError('profile_invalid', 'signing an .ipa needs --profile FILE (and --profile BUNDLE_ID=FILE for extensions with their own profile)');
  const profiles: IosProfileInput[] = [];
  for (const spec of options.profile) {
    // "BUNDLE_ID=FILE" pins a profile to that bundle only; a plain FILE is matched by its app id.
    const at = spec.indexOf('=');
    const bundleId = at > 0 && !spec.slice(0, at).includes('/') ? spec.slice(0, at) : undefined;
    const file = bundleId === undefined ? spec : spec.slice(at + 1);
    profiles.push({ id: file, bytes: await readFile(file), ...(bundleId === undefined ? {} : { pinnedTo: [bundleId], matchOthers: false }) });
  }
  const entitlements = options.entitlements === undefined ? undefined : await readEntitlementsFile(options.entitlements);
  const overrides = {
    ...(options.bundleId === undefined ? {} : { bundleId: options.bundleId }),
    ...(options.name === undefined ? {} : { displayName: options.name }),
    ...(options.version === undefined ? {} : { version: options.version }),
  };
  const summary = await signPackageFile(
    {
      platform: 'ios',
      identity: { p12: await readFile(p12), ...(options.password === undefined ? {} : { password: options.password }) },
      profiles,
      overrides,
      ...(entitlements === undefined ? {} : { entitlements }),
    },
    input,
    options.output,
    { caCertificates: options.caDir === undefined ? [] : await readCaDirectory(options.caDir) },
  );
  const ios = summary.ios!;
  const lines = [`Signed ${options.output} (${summary.app.bundleId} ${summary.app.version ?? '?'}; ${ios.bundles.length} bundle(s), ${ios.bundles.reduce((n, b) => n + b.code.length, 0)} Mach-O file(s))`];
  if (ios.signer !== null) lines.push(`Signer: ${ios.signer}`);
  for (const bundle of ios.bundles) {
    lines.push(`  ${bundle.path} ${bundle.bundleId}${bundle.profile ? ` — profile "${bundle.profile.name}"` : ''}`);
    for (const dropped of bundle.droppedEntitlements) lines.push(`    WARNING: entitlement ${dropped.key} left out (${dropped.reason.replaceAll('_', ' ')})`);
  }
  lines.push(`Entries: ${ios.entries.copied} copied unchanged, ${ios.entries.rewritten + ios.entries.added} written, ${ios.entries.dropped} dropped (__MACOSX)`);
  return lines;
}

async function readEntitlementsFile(file: string): Promise<PlistDict> {
  const value = parsePlist(await readFile(file)).value;
  if (value.type !== 'dict') throw new SigningError('entitlements_invalid', `${file} is not a dictionary of entitlements`);
  return value;
}

export async function verifyIpaFile(file: string): Promise<{ text: string; json: unknown; verified: boolean }> {
  const source = await FileSource.open(file, SIGNING_READS);
  try {
    const report = await verifyIpa(source);
    return { text: describeIpaVerification(report), json: { platform: 'ios', ...report }, verified: report.verified };
  } finally {
    await source.close();
  }
}
