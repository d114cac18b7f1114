// `signet sign IN -o OUT --keystore FILE ...`: re-signs a package offline, the same engines the
// service uses. The kind of package is read from its content (never its extension) and each kind
// has one entry in SIGNERS below; iOS adds its own line there. Engines load on use, so other
// commands do not pay for them at start-up.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { InvalidArgumentError, Option, type Command } from 'commander';
import type { ApkSchemes } from '../../signing/android/index.ts';
import type { IpaSignOptions } from './ipa.ts';
import { FileSource, SIGNING_READS } from '../../signing/data-source.ts';
import { SigningError } from '../../signing/errors.ts';
import { FIRST_V2_SDK } from '../../signing/pipeline/constants.ts';

export type PackageKind = 'apk' | 'ipa' | 'macho';

// Mach-O magics (mach-o/loader.h, mach-o/fat.h) in either byte order.
const MACHO_MAGICS = new Set([0xfeedface, 0xfeedfacf, 0xcefaedfe, 0xcffaedfe, 0xcafebabe, 0xbebafeca]);

/** What a file is, from its bytes: a Mach-O binary, or a zip holding an Android or iOS app. */
export async function detectPackageKind(source: FileSource): Promise<PackageKind> {
  const { ZipReader } = await import('../../signing/zip/index.ts');
  const { detectPlatformByNames } = await import('../../signing/package/detect.ts');
  const head = source.size >= 4 ? await source.read(0, 4) : Buffer.alloc(0);
  if (head.length === 4 && MACHO_MAGICS.has(head.readUInt32BE(0))) return 'macho';
  // APPNOTE 4.3.7 / 4.3.16: a zip starts with a local header, or is empty (EoCD only). Anything
  // else is not a package; a damaged zip keeps the reader's precise zip_* error.
  const zipMagic = head.length === 4 && (head.readUInt32LE(0) === 0x04034b50 || head.readUInt32LE(0) === 0x06054b50);
  // Only names are looked at here, so only they are read from the central directory: the engine
  // opens the archive with its own rules and checks every local header then (reading them here
  // as well cost `signet sign` ~30 ms of wall time on bench:ipa's app, whole records ~15 ms more
  // on bench:apk's).
  const names = await ZipReader.readNames(source).catch((cause: unknown) => {
    if (zipMagic && cause instanceof SigningError) throw cause;
    throw new SigningError('invalid_package', `not an .apk, .ipa or Mach-O file: ${(cause as Error).message}`, { cause });
  });
  return detectPlatformByNames(names).platform === 'android' ? 'apk' : 'ipa';
}

/** The iOS options (ipa.ts) plus the Android ones. */
export interface SignCommandOptions extends IpaSignOptions {
  cert?: string;
  keyPassword?: string;
  alias?: string;
  schemes?: ApkSchemes;
  minSdk?: number;
}

type SignFn = (input: string, options: SignCommandOptions) => Promise<string[]>;

const SIGNERS: Partial<Record<PackageKind, SignFn>> = {
  apk: signApkFile,
  // The iOS stack loads only for an .ipa, so signing an APK does not pay for it.
  ipa: async (input, options) => (await import('./ipa.ts')).signIpaFile(input, options),
};

export function register(program: Command): void {
  program
    .command('sign')
    .description('Re-sign an .apk (or .ipa) with your key; the output is verified before it is kept')
    .argument('<input>', 'the package to sign')
    .requiredOption('-o, --output <file>', 'where to write the signed package')
    .option('--keystore <file>', 'PKCS#12, JKS, PEM or PKCS#8 key file (Android; required for an .apk)')
    .option('--p12 <file>', 'iOS: PKCS#12 with the signing certificate and key')
    .option('--profile <file>', 'iOS: provisioning profile; repeat, as BUNDLE_ID=FILE, for extensions with their own', (value: string, list: string[]) => [...list, value], [] as string[])
    .option('--bundle-id <id>', 'iOS: new bundle id for the app (extensions are re-prefixed)')
    .option('--name <name>', 'iOS: new display name')
    .option('--version <version>', 'iOS: new CFBundleShortVersionString')
    .option('--entitlements <file>', 'iOS: entitlements plist for the app (each must be granted by its profile)')
    .addOption(new Option('--ca-dir <dir>', "iOS: folder of CA certificates (DER or PEM) completing the chain, besides Apple's CAs shipped with Signet").env('SIGNET_APPLE_CA_DIR'))
    .option('--cert <file>', 'certificate (PEM/DER) when the key file holds none')
    .option('--password <password>', 'keystore password (or the key password of a lone key file)')
    .option('--key-password <password>', 'key password when it differs from the keystore password')
    .option('--alias <alias>', 'keystore entry to use when it holds several keys')
    .option('--schemes <list>', 'Android signature schemes, e.g. v1,v2,v3 (default: all three)', parseSchemes)
    .option('--min-sdk <level>', "Android minSdkVersion to sign for (default: the manifest's)", parseLevel)
    .action(async (input: string, options: SignCommandOptions) => {
      const source = await openInput(input);
      let kind: PackageKind;
      try {
        kind = await detectPackageKind(source);
      } finally {
        await source.close();
      }
      const sign = SIGNERS[kind];
      if (sign === undefined) throw new SigningError('invalid_package', `signing ${kind === 'macho' ? 'Mach-O binaries' : `.${kind} files`} is not available in this build`);
      for (const line of await sign(input, options)) process.stdout.write(`${line}\n`);
    });
}

async function signApkFile(input: string, options: SignCommandOptions): Promise<string[]> {
  if (options.keystore === undefined) throw new SigningError('keystore_invalid', 'signing an .apk needs --keystore FILE');
  const { signPackageFile } = await import('../../signing/pipeline/index.ts');
  const summary = await signPackageFile(
    {
      platform: 'android',
      keystore: await readFile(options.keystore),
      keyFileName: path.basename(options.keystore),
      ...(options.password === undefined ? {} : { password: options.password }),
      ...(options.keyPassword === undefined ? {} : { keyPassword: options.keyPassword }),
      ...(options.alias === undefined ? {} : { alias: options.alias }),
      ...(options.cert === undefined ? {} : { certificate: await readFile(options.cert) }),
      ...(options.schemes === undefined ? {} : { schemes: options.schemes }),
      ...(options.minSdk === undefined ? {} : { minSdk: options.minSdk }),
    },
    input,
    options.output,
    // Nothing below prints the app's identity: the pipeline need not read it back.
    { describeApp: false },
  );
  const apk = summary.android!;
  const schemes = (['v1', 'v2', 'v3'] as const).filter((s) => apk.schemes[s]);
  const lines = [
    `Signed ${options.output} (${schemes.join(', ')}; ${apk.signatureAlgorithm}; minSdk ${apk.minSdk})`,
    `Signer: ${apk.certificate.subject.replaceAll('\n', ', ')}`,
    `Certificate SHA-256: ${apk.certificate.sha256}`,
  ];
  if (apk.certificate.expired) lines.push(`WARNING: the certificate expired on ${apk.certificate.notAfter.toISOString()} (Android does not check validity)`);
  if (!apk.schemes.v1 && apk.minSdk < FIRST_V2_SDK) lines.push(`WARNING: without v1, devices below API ${FIRST_V2_SDK} cannot install this APK (its minSdk is ${apk.minSdk})`);
  return lines;
}

export async function openInput(file: string): Promise<FileSource> {
  try {
    return await FileSource.open(file, SIGNING_READS);
  } catch (cause) {
    throw new SigningError('invalid_package', `cannot open ${file}: ${(cause as Error).message}`, { cause });
  }
}

function parseSchemes(value: string): ApkSchemes {
  const names = value.split(',').map((s) => s.trim().toLowerCase()).filter((s) => s !== '');
  const unknown = names.filter((n) => !['v1', 'v2', 'v3'].includes(n));
  if (unknown.length > 0 || names.length === 0) throw new InvalidArgumentError('expected a comma-separated list of v1, v2, v3');
  return { v1: names.includes('v1'), v2: names.includes('v2'), v3: names.includes('v3') };
}

export function parseLevel(value: string): number {
  const level = Number(value);
  if (!Number.isInteger(level) || level < 1 || level > 10000) throw new InvalidArgumentError('expected an API level (a whole number from 1)');
  return level;
}
