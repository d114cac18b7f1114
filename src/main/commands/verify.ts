// `signet verify FILE [--json]`: checks a package's signatures offline with the verifier the
// service runs on every output. The package kind comes from its content (see sign.ts); each kind
// has one entry in VERIFIERS below; iOS adds its own line there. Engines load on use.
import type { Command } from 'commander';
import type { ApkVerification } from '../../signing/android/index.ts';
import { SigningError } from '../../signing/errors.ts';
import { detectPackageKind, openInput, parseLevel, type PackageKind } from './sign.ts';

export interface VerifyCommandOptions {
  json?: boolean;
  minSdk?: number;
  maxSdk?: number;
}

/** A verifier returns what to print and whether the package verified. */
type VerifyFn = (file: string, options: VerifyCommandOptions) => Promise<{ text: string; json: unknown; verified: boolean }>;

const VERIFIERS: Partial<Record<PackageKind, VerifyFn>> = {
  apk: verifyApkFile,
  // Each engine loads only for its own kind of file.
  macho: async (file) => (await import('./codesign.ts')).verifyMachOFile(file),
  ipa: async (file) => (await import('./ipa.ts')).verifyIpaFile(file),
};

export function register(program: Command): void {
  program
    .command('verify')
    .description('Check the signatures of an .apk (or .ipa); exit status 0 only if it verifies')
    .argument('<file>', 'the package to check')
    .option('--json', 'print JSON')
    .option('--min-sdk <level>', "Android: lowest API level to check (default: the manifest's minSdkVersion)", parseLevel)
    .option('--max-sdk <level>', 'Android: highest API level to check (default: any)', parseLevel)
    .action(async (file: string, options: VerifyCommandOptions) => {
      const source = await openInput(file);
      let kind: PackageKind;
      try {
        kind = await detectPackageKind(source);
      } finally {
        await source.close();
      }
      const verify = VERIFIERS[kind];
      if (verify === undefined) throw new SigningError('invalid_package', `verifying ${kind === 'macho' ? 'Mach-O binaries' : `.${kind} files`} is not available in this build`);
      const result = await verify(file, options);
      process.stdout.write(options.json === true ? `${JSON.stringify(result.json, null, 2)}\n` : result.text);
      if (!result.verified) process.exitCode = 1;
    });
}

async function verifyApkFile(file: string, options: VerifyCommandOptions): Promise<{ text: string; json: unknown; verified: boolean }> {
  const { verifyApk } = await import('../../signing/android/index.ts');
  const source = await openInput(file);
  try {
    const report = await verifyApk(source, {
      ...(options.minSdk === undefined ? {} : { minSdk: options.minSdk }),
      ...(options.maxSdk === undefined ? {} : { maxSdk: options.maxSdk }),
    });
    return { text: describeApk(report), json: { platform: 'android', ...report }, verified: report.verified };
  } finally {
    await source.close();
  }
}

/** apksigner verify --verbose style, so the two outputs can be read side by side. */
function describeApk(report: ApkVerification): string {
  const lines = [report.verified ? 'Verifies' : 'DOES NOT VERIFY'];
  lines.push(`Checked for API levels ${report.minSdk}..${report.maxSdk === 0x7fffffff ? 'any' : report.maxSdk}`);
  lines.push(`Verified using v1 scheme (JAR signing): ${report.schemes.v1.verified}`);
  lines.push(`Verified using v2 scheme (APK Signature Scheme v2): ${report.schemes.v2.verified}`);
  lines.push(`Verified using v3 scheme (APK Signature Scheme v3): ${report.schemes.v3.verified}`);
  lines.push(`Verified using v3.1 scheme (APK Signature Scheme v3.1): ${report.schemes['v3.1'].verified}`);
  const seen = new Set<string>();
  for (const signer of report.signers) {
    if (seen.has(signer.certificateSha256)) continue;
    seen.add(signer.certificateSha256);
    lines.push(`Signer #${seen.size} (${signer.scheme}) certificate DN: ${signer.subject}`);
    lines.push(`Signer #${seen.size} certificate SHA-256 digest: ${signer.certificateSha256}`);
    lines.push(`Signer #${seen.size} certificate valid until: ${signer.notAfter}${signer.expired ? ' (expired)' : ''}`);
  }
  for (const issue of report.errors) lines.push(`ERROR${issue.scheme === null ? '' : ` (${issue.scheme})`}: ${issue.message}`);
  for (const issue of report.warnings) lines.push(`WARNING${issue.scheme === null ? '' : ` (${issue.scheme})`}: ${issue.message}`);
  return `${lines.join('\n')}\n`;
}
