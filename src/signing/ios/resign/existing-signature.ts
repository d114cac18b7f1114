// Reads what an existing code signature says, without verifying it: the entitlements the app was
// signed with (the input of ios-signing.md §13's transfer rules) and the signer's certificate.
import { parseSignedData, x509Of } from '../../cms/index.ts';
import type { PlistDict } from '../../plist/index.ts';
import { CSMAGIC_BLOBWRAPPER, CSSLOT_DER_ENTITLEMENTS, CSSLOT_ENTITLEMENTS, CSSLOT_SIGNATURESLOT } from '../codesign/constants.ts';
import { readEntitlements } from '../codesign/entitlements.ts';
import { parseSuperBlob, type SuperBlobEntry } from '../codesign/super-blob.ts';
import { MH_BUNDLE, MH_DYLIB, MH_EXECUTE } from '../macho/constants.ts';
import { codeSignatureCommand } from '../macho/inspect.ts';
import { parseMachO } from '../macho/parse.ts';
import type { MachOSlice } from '../macho/types.ts';

function firstSlice(bytes: Buffer): MachOSlice {
  const file = parseMachO(bytes);
  return file.kind === 'thin' ? file.slice : file.slices[0]!;
}

function blobs(slice: MachOSlice): SuperBlobEntry[] | undefined {
  const command = codeSignatureCommand(slice);
  if (command === undefined) return undefined;
  try {
    return parseSuperBlob(slice.data.subarray(command.dataoff, command.dataoff + command.datasize));
  } catch {
    return undefined; // a damaged old signature is replaced; it just has nothing to offer
  }
}

/** The XML entitlements (slot 5) of the first slice's signature, if it has readable ones. */
export function existingEntitlements(bytes: Buffer): PlistDict | undefined {
  const entries = blobs(firstSlice(bytes));
  if (entries === undefined) return undefined;
  try {
    const found = readEntitlements(entries.find((e) => e.type === CSSLOT_ENTITLEMENTS)?.blob, entries.find((e) => e.type === CSSLOT_DER_ENTITLEMENTS)?.blob);
    return found.xml ?? found.der;
  } catch {
    return undefined;
  }
}

/** The certificate that signed the first slice's CMS (matched by subject), DER. */
export function signerCertificate(bytes: Buffer): Buffer | undefined {
  const entries = blobs(firstSlice(bytes));
  const wrapper = entries?.find((e) => e.type === CSSLOT_SIGNATURESLOT)?.blob;
  if (wrapper === undefined || wrapper.length <= 8 || wrapper.readUInt32BE(0) !== CSMAGIC_BLOBWRAPPER) return undefined;
  try {
    const signed = parseSignedData(wrapper.subarray(8));
    const sid = signed.signerInfos[0]?.sid;
    const certificates = signed.certificates.map((der) => ({ der, x509: x509Of(der) }));
    if (sid !== undefined && 'serialNumber' in sid) {
      const serial = Buffer.from(sid.serialNumber).toString('hex').replace(/^0+/, '').toUpperCase();
      const match = certificates.find((c) => c.x509.serialNumber.replace(/^0+/, '').toUpperCase() === serial);
      if (match !== undefined) return match.der;
    }
    // Otherwise the leaf: the certificate that issued no other.
    return certificates.find((c) => !certificates.some((o) => o !== c && o.x509.checkIssued(c.x509)))?.der;
  } catch {
    return undefined;
  }
}

/** Code that gets signed: executables, dylibs and loadable bundles (not objects or dSYM files). */
export function isSignableCode(bytes: Buffer): boolean {
  const type = firstSlice(bytes).header.filetype;
  return type === MH_EXECUTE || type === MH_DYLIB || type === MH_BUNDLE;
}
