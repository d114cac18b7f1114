// Code-signing blob constants from xnu osfmk/kern/cs_blobs.h and Security's CodeSigning headers.
// All code-signing structures are big-endian regardless of the Mach-O's byte order.

export const CSMAGIC_REQUIREMENT = 0xfade0c00;
export const CSMAGIC_REQUIREMENTS = 0xfade0c01;
export const CSMAGIC_CODEDIRECTORY = 0xfade0c02;
export const CSMAGIC_EMBEDDED_SIGNATURE = 0xfade0cc0;
export const CSMAGIC_DETACHED_SIGNATURE = 0xfade0cc1;
export const CSMAGIC_BLOBWRAPPER = 0xfade0b01;
export const CSMAGIC_EMBEDDED_ENTITLEMENTS = 0xfade7171;
export const CSMAGIC_EMBEDDED_DER_ENTITLEMENTS = 0xfade7172;

// cs_blobs.h CSSLOT_*: indices in the SuperBlob and special-slot numbers in the CodeDirectory.
export const CSSLOT_CODEDIRECTORY = 0;
export const CSSLOT_INFOSLOT = 1;
export const CSSLOT_REQUIREMENTS = 2;
export const CSSLOT_RESOURCEDIR = 3;
export const CSSLOT_APPLICATION = 4;
export const CSSLOT_ENTITLEMENTS = 5;
export const CSSLOT_REP_SPECIFIC = 6;
export const CSSLOT_DER_ENTITLEMENTS = 7;
export const CSSLOT_ALTERNATE_CODEDIRECTORIES = 0x1000;
export const CSSLOT_ALTERNATE_CODEDIRECTORY_MAX = 5;
export const CSSLOT_SIGNATURESLOT = 0x10000;

/** The primary CodeDirectory slot or one of the alternate ones (cs_blobs.h CSSLOT_ALTERNATE_CODEDIRECTORIES). */
export function isCodeDirectorySlot(type: number): boolean {
  return type === CSSLOT_CODEDIRECTORY || (type >= CSSLOT_ALTERNATE_CODEDIRECTORIES && type < CSSLOT_ALTERNATE_CODEDIRECTORIES + CSSLOT_ALTERNATE_CODEDIRECTORY_MAX);
}

/** Highest special slot this signer fills (DER entitlements). */
export const MAX_SPECIAL_SLOT = CSSLOT_DER_ENTITLEMENTS;

// CodeDirectory versions (cs_blobs.h CS_SUPPORTS*): each adds header fields.
export const CD_VERSION_SCATTER = 0x20100;
export const CD_VERSION_TEAMID = 0x20200;
export const CD_VERSION_CODELIMIT64 = 0x20300;
export const CD_VERSION_EXECSEG = 0x20400;
export const CD_VERSION_RUNTIME = 0x20500;
export const CD_VERSION_LINKAGE = 0x20600;
/** Oldest CodeDirectory version this code parses (Apple's compatibilityLimit is 0x2F000 above). */
export const CD_VERSION_EARLIEST = 0x20001;
export const CD_VERSION_LIMIT = 0x2f000;

/** Fixed header size of a CodeDirectory of the given version (cs_blobs.h CS_CodeDirectory). */
export function codeDirectoryHeaderSize(version: number): number {
  if (version >= CD_VERSION_LINKAGE) return 108;
  if (version >= CD_VERSION_RUNTIME) return 96;
  if (version >= CD_VERSION_EXECSEG) return 88;
  if (version >= CD_VERSION_CODELIMIT64) return 64;
  if (version >= CD_VERSION_TEAMID) return 52;
  if (version >= CD_VERSION_SCATTER) return 48;
  return 44;
}

// CodeDirectory flags (cs_blobs.h CS_*).
export const CS_ADHOC = 0x2;
export const CS_LINKER_SIGNED = 0x20000;

// execSegFlags (cs_blobs.h CS_EXECSEG_*).
export const CS_EXECSEG_MAIN_BINARY = 0x1;
export const CS_EXECSEG_ALLOW_UNSIGNED = 0x10;
export const CS_EXECSEG_DEBUGGER = 0x20;
export const CS_EXECSEG_JIT = 0x40;
export const CS_EXECSEG_SKIP_LV = 0x80;
export const CS_EXECSEG_CAN_LOAD_CDHASH = 0x100;
export const CS_EXECSEG_CAN_EXEC_CDHASH = 0x200;

/** Requirement types in a Requirements set (Security requirement.h). */
export const REQUIREMENT_DESIGNATED = 3;

/**
 * What Apple's codesign reserves for the CMS blob when it sizes the signature area
 * (Security SecCodeSigner.cpp: `mCMSSize = 18000; // big enough for now, not forever`).
 */
export const APPLE_CMS_RESERVE = 18000;
