// `signet codesign BINARY [-o OUT] (--adhoc | --p12 FILE --password P) …`: signs one Mach-O file
// (thin or fat) offline with the engine the .ipa re-signer uses per binary; and the Mach-O branch
// of `signet verify`.
import { readFile, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { InvalidArgumentError, Option, type Command } from 'commander';
import { readCaDirectory } from '../../signing/cms/ca-directory.ts';
import { openSigningIdentity } from '../../signing/pipeline/identity.ts';
import { SigningError } from '../../signing/errors.ts';
import { identityCodeSigner } from '../../signing/ios/codesign/identity-signer.ts';
import { signMachO } from '../../signing/ios/codesign/sign.ts';
import { verifyMachO, type VerifyReport } from '../../signing/ios/codesign/verify.ts';
import { parsePlist, plistToJs } from '../../signing/plist/index.ts';

export interface CodesignCommandOptions {
  output?: string;
  adhoc?: boolean;
  p12?: string;
  password?: string;
  identifier?: string;
  entitlements?: string;
  pageSize?: 4096 | 16384;
  caDir?: string;
  infoPlist?: string;
  codeResources?: string;
  json?: boolean;
}

function parsePageSize(value: string): 4096 | 16384 {
  if (value === '4096' || value === '16384') return Number(value) as 4096 | 16384;
  throw new InvalidArgumentError('must be 4096 or 16384');
}

/** Where the command prints (tests pass their own sink). */
export interface CommandOutput {
  write(text: string): unknown;
}

export function register(program: Command, out: CommandOutput = process.stdout): void {
  program
    .command('codesign')
    .description('Sign a Mach-O binary (thin or fat) ad-hoc or with a .p12 identity, as Apple codesign does')
    .argument('<binary>', 'the Mach-O file to sign')
    .option('-o, --output <file>', 'where to write the signed binary (default: replace the input)')
    .option('--adhoc', 'ad-hoc signature (no identity)')
    .option('--p12 <file>', 'PKCS#12 identity (certificate + private key)')
    .option('--password <password>', 'password of the .p12')
    .option('--identifier <id>', 'signing identifier (default: kept from the old signature, else derived from the file name)')
    .option('--entitlements <plist>', 'entitlements plist (XML or binary) for a main executable')
    .option('--page-size <bytes>', 'code page size: 4096 (default) or 16384', parsePageSize)
    .addOption(new Option('--ca-dir <dir>', "folder of intermediate/root certificates (DER or PEM) completing the chain, besides Apple's CAs shipped with Signet").env('SIGNET_APPLE_CA_DIR'))
    .option('--info-plist <file>', "the bundle's Info.plist (special slot 1)")
    .option('--code-resources <file>', "the bundle's _CodeSignature/CodeResources (special slot 3)")
    .option('--json', 'print the result as JSON')
    .action(async (binary: string, options: CodesignCommandOptions, command: Command) => {
      if (Boolean(options.adhoc) === (options.p12 !== undefined)) command.error('error: pass exactly one of --adhoc or --p12 <file>');
      const input = await readFile(binary);
      const signer = options.p12 === undefined ? undefined : await loadSigner(options);
      const entitlements = options.entitlements === undefined ? undefined : await readEntitlements(options.entitlements);
      const result = signMachO(input, {
        ...(signer ? { signer } : {}),
        ...(options.identifier ? { identifier: options.identifier } : {}),
        fileName: path.basename(binary),
        ...(entitlements ? { entitlements } : {}),
        ...(options.pageSize ? { pageSize: options.pageSize } : {}),
        specialSlotHashes: {
          ...(options.infoPlist ? { infoPlist: await readFile(options.infoPlist) } : {}),
          ...(options.codeResources ? { codeResources: await readFile(options.codeResources) } : {}),
        },
      });
      const target = options.output ?? binary;
      const temporary = `${target}.signet-${process.pid}.tmp`;
      try {
        await writeFile(temporary, result.bytes, { mode: 0o755 });
        await rename(temporary, target);
      } catch (error) {
        await rm(temporary, { force: true });
        throw error;
      }
      const summary = {
        output: target,
        identifier: result.identifier,
        slices: result.slices.map((s) => ({ arch: s.arch, cdhashes: s.codeDirectories.map((c) => `${c.hashType.name}:${c.digest.subarray(0, 20).toString('hex')}`) })),
      };
      if (options.json) out.write(`${JSON.stringify(summary, null, 2)}\n`);
      else {
        out.write(`Signed ${target} as ${result.identifier}\n`);
        for (const slice of summary.slices) out.write(`  ${slice.arch}: ${slice.cdhashes.join(', ')}\n`);
      }
    });
}

async function loadSigner(options: CodesignCommandOptions) {
  // The same identity opening as every signing path: chain completed from the .p12, --ca-dir
  // (SIGNET_APPLE_CA_DIR) and Apple's CAs shipped with Signet.
  const caCertificates = options.caDir ? await readCaDirectory(options.caDir) : [];
  return identityCodeSigner(await openSigningIdentity({ p12: await readFile(options.p12!), password: options.password ?? '' }, { caCertificates }));
}

async function readEntitlements(file: string) {
  const { value } = parsePlist(await readFile(file));
  if (value.type !== 'dict') throw new SigningError('entitlements_invalid', `${file} is not a dictionary plist`);
  return value;
}

/** The Mach-O branch of `signet verify` (registered in verify.ts). */
export async function verifyMachOFile(file: string): Promise<{ text: string; json: unknown; verified: boolean }> {
  const report = verifyMachO(await readFile(file));
  return { text: describeReport(report), json: { platform: 'macho', ...jsonReport(report) }, verified: report.valid };
}

function jsonReport(report: VerifyReport): Record<string, unknown> {
  return {
    ...report,
    slices: report.slices.map((s) => ({ ...s, entitlements: s.entitlements ? plistToJs(s.entitlements) : undefined })),
  };
}

function describeReport(report: VerifyReport): string {
  const lines = [report.valid ? 'Verifies' : 'DOES NOT VERIFY'];
  for (const slice of report.slices) {
    lines.push(`${slice.arch}: identifier ${slice.identifier ?? '?'}${slice.teamId ? `, team ${slice.teamId}` : ''}${slice.adhoc ? ', ad-hoc' : ''}`);
    for (const cd of slice.codeDirectories) {
      lines.push(`  CodeDirectory v${cd.version.toString(16)} ${cd.hashType} slot 0x${cd.slot.toString(16)}: ${cd.nCodeSlots} pages of ${cd.pageSize}, ${cd.nSpecialSlots} special slots, cdhash ${cd.cdhash}`);
    }
    if (slice.designatedRequirement) lines.push(`  designated => ${slice.designatedRequirement}`);
    if (slice.cms) lines.push(`  signed by ${slice.cms.signerSubject ?? '?'}${slice.cms.signingTime ? ` at ${slice.cms.signingTime.toISOString()}` : ''}; chain: ${slice.cms.chain.length} certificates`);
    if (slice.unchecked.length) lines.push(`  not checked (pass the bundle to check): special slots ${slice.unchecked.join(', ')}`);
    for (const problem of slice.problems) lines.push(`  ERROR: ${problem}`);
  }
  return `${lines.join('\n')}\n`;
}
