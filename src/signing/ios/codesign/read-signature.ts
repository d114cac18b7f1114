// Reads what an existing signature says (identifier, team, flags, entitlements) without checking
// it — for callers that carry facts over when re-signing (the .ipa re-signer keeps the identifier
// of nested binaries and reads the entitlements an app was signed with). verify.ts checks.
import type { PlistDict } from '../../plist/index.ts';
import { archName } from '../macho/constants.ts';
import { codeSignatureCommand } from '../macho/inspect.ts';
import { parseMachO } from '../macho/parse.ts';
import { parseCodeDirectory } from './code-directory.ts';
import { CSSLOT_CODEDIRECTORY, CSSLOT_DER_ENTITLEMENTS, CSSLOT_ENTITLEMENTS, CS_ADHOC, CS_LINKER_SIGNED } from './constants.ts';
import { readEntitlements } from './entitlements.ts';
import { parseSuperBlob } from './super-blob.ts';

export interface ExistingSignature {
  arch: string;
  identifier: string;
  teamId: string | undefined;
  adhoc: boolean;
  linkerSigned: boolean;
  /** XML entitlements (slot 5), else the DER ones (slot 7), if any. */
  entitlements: PlistDict | undefined;
}

/**
 * One entry per slice; undefined for a slice without a signature. Malformed signatures raise
 * code_signature_invalid; malformed Mach-O files raise macho_invalid.
 */
export function readCodeSignatures(bytes: Buffer): Array<ExistingSignature | undefined> {
  const file = parseMachO(bytes);
  return (file.kind === 'thin' ? [file.slice] : file.slices).map((slice) => {
    const command = codeSignatureCommand(slice);
    if (!command) return undefined;
    const entries = parseSuperBlob(slice.data.subarray(command.dataoff, command.dataoff + command.datasize));
    const blob = (type: number): Buffer | undefined => entries.find((e) => e.type === type)?.blob;
    const cdBlob = blob(CSSLOT_CODEDIRECTORY);
    if (!cdBlob) return undefined;
    const cd = parseCodeDirectory(cdBlob);
    const { xml, der } = readEntitlements(blob(CSSLOT_ENTITLEMENTS), blob(CSSLOT_DER_ENTITLEMENTS));
    return {
      arch: archName(slice.header.cputype, slice.header.cpusubtype),
      identifier: cd.identifier,
      teamId: cd.teamId,
      adhoc: (cd.flags & CS_ADHOC) !== 0,
      linkerSigned: (cd.flags & CS_LINKER_SIGNED) !== 0,
      entitlements: xml ?? der,
    };
  });
}
