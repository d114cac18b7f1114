// CodeDirectory blob (magic 0xfade0c02): xnu cs_blobs.h CS_CodeDirectory; field layout in
// ../SPECIFICATION.md §3. Hand-written (no JS library models it). Layout order follows Security's
// CodeDirectory::Builder: header, identifier, team id, special-slot hashes (slot -n … -1), code
// page hashes.
import { hash } from 'node:crypto';
import { SigningError } from '../../errors.ts';
import { CD_VERSION_EARLIEST, CD_VERSION_EXECSEG, CD_VERSION_LIMIT, CD_VERSION_TEAMID, CSMAGIC_CODEDIRECTORY, codeDirectoryHeaderSize } from './constants.ts';
import { hashTypeByCode, type HashType } from './digest.ts';

export interface ExecSegment {
  base: number;
  limit: number;
  flags: number;
}

export interface CodeDirectory {
  version: number;
  flags: number;
  hashType: HashType;
  platform: number;
  /** log2 of the page size (12 = 4 KiB, 14 = 16 KiB); 0 means one hash over all code. */
  pageSizeLog2: number;
  identifier: string;
  teamId: string | undefined;
  codeLimit: number;
  /** specialSlots[i] is the hash for special slot i+1 (all zero when the slot is unused). */
  specialSlots: Buffer[];
  /** nCodeSlots page hashes, concatenated. */
  codeHashes: Buffer;
  /** Present from version 0x20400. */
  execSeg: ExecSegment | undefined;
  /** Header bytes past the 0x20400 fields (runtime, pre-encrypt, linkage: 0x20500+), verbatim. */
  extraHeader: Buffer;
}

const bad = (message: string): SigningError => new SigningError('code_signature_invalid', `Malformed CodeDirectory: ${message}`);

export function codeDirectorySize(cd: Pick<CodeDirectory, 'version' | 'identifier' | 'teamId' | 'specialSlots' | 'codeHashes' | 'hashType'>): number {
  return layout(cd).length;
}

function layout(cd: Pick<CodeDirectory, 'version' | 'identifier' | 'teamId' | 'specialSlots' | 'codeHashes' | 'hashType'>) {
  const headerSize = codeDirectoryHeaderSize(cd.version);
  const identOffset = headerSize;
  const identLength = Buffer.byteLength(cd.identifier, 'utf8') + 1;
  const teamOffset = cd.teamId === undefined ? 0 : identOffset + identLength;
  const afterStrings = teamOffset === 0 ? identOffset + identLength : teamOffset + Buffer.byteLength(cd.teamId!, 'utf8') + 1;
  const hashOffset = afterStrings + cd.specialSlots.length * cd.hashType.size;
  return { headerSize, identOffset, teamOffset, hashOffset, length: hashOffset + cd.codeHashes.length };
}

export function serializeCodeDirectory(cd: CodeDirectory): Buffer {
  if (cd.teamId !== undefined && cd.version < CD_VERSION_TEAMID) throw new Error('team id needs CodeDirectory version 0x20200');
  if (cd.codeLimit > 0xffffffff) throw new SigningError('macho_unsupported', 'Code larger than 4 GiB (codeLimit64) is not supported');
  const l = layout(cd);
  const hashSize = cd.hashType.size;
  const out = Buffer.alloc(l.length);
  out.writeUInt32BE(CSMAGIC_CODEDIRECTORY, 0);
  out.writeUInt32BE(l.length, 4);
  out.writeUInt32BE(cd.version, 8);
  out.writeUInt32BE(cd.flags >>> 0, 12);
  out.writeUInt32BE(l.hashOffset, 16);
  out.writeUInt32BE(l.identOffset, 20);
  out.writeUInt32BE(cd.specialSlots.length, 24);
  out.writeUInt32BE(cd.codeHashes.length / hashSize, 28);
  out.writeUInt32BE(cd.codeLimit, 32);
  out.writeUInt8(hashSize, 36);
  out.writeUInt8(cd.hashType.code, 37);
  out.writeUInt8(cd.platform, 38);
  out.writeUInt8(cd.pageSizeLog2, 39);
  // 40 spare2, 44 scatterOffset (0: no scatter), 52 spare3, 56 codeLimit64: all zero.
  if (l.headerSize >= 52) out.writeUInt32BE(l.teamOffset, 48);
  if (cd.version >= CD_VERSION_EXECSEG) {
    const seg = cd.execSeg ?? { base: 0, limit: 0, flags: 0 };
    out.writeBigUInt64BE(BigInt(seg.base), 64);
    out.writeBigUInt64BE(BigInt(seg.limit), 72);
    out.writeBigUInt64BE(BigInt(seg.flags), 80);
  }
  cd.extraHeader.copy(out, 88, 0, Math.max(0, l.headerSize - 88));
  out.write(cd.identifier, l.identOffset, 'utf8');
  if (cd.teamId !== undefined) out.write(cd.teamId, l.teamOffset, 'utf8');
  // Special slots are stored from slot -n up to slot -1, so slot 1 sits right before hashOffset.
  cd.specialSlots.forEach((slotHash, i) => {
    if (slotHash.length !== hashSize) throw new Error(`special slot ${i + 1} hash has ${slotHash.length} bytes, not ${hashSize}`);
    slotHash.copy(out, l.hashOffset - (i + 1) * hashSize);
  });
  cd.codeHashes.copy(out, l.hashOffset);
  return out;
}

export function parseCodeDirectory(blob: Buffer): CodeDirectory {
  if (blob.length < 44) throw bad('shorter than its header');
  if (blob.readUInt32BE(0) !== CSMAGIC_CODEDIRECTORY) throw bad('wrong magic');
  const length = blob.readUInt32BE(4);
  if (length !== blob.length) throw bad('length field does not match the blob');
  const version = blob.readUInt32BE(8);
  if (version < CD_VERSION_EARLIEST || version >= CD_VERSION_LIMIT) throw bad(`unsupported version 0x${version.toString(16)}`);
  const headerSize = codeDirectoryHeaderSize(version);
  if (length < headerSize) throw bad('shorter than its version header');
  const flags = blob.readUInt32BE(12);
  const hashOffset = blob.readUInt32BE(16);
  const identOffset = blob.readUInt32BE(20);
  const nSpecial = blob.readUInt32BE(24);
  const nCode = blob.readUInt32BE(28);
  const codeLimit = blob.readUInt32BE(32);
  const hashSize = blob.readUInt8(36);
  const hashType = hashTypeByCode(blob.readUInt8(37));
  if (hashSize !== hashType.size) throw bad(`hash size ${hashSize} does not match hash type ${hashType.name}`);
  const platform = blob.readUInt8(38);
  const pageSizeLog2 = blob.readUInt8(39);
  if (pageSizeLog2 !== 0 && (pageSizeLog2 < 9 || pageSizeLog2 > 20)) throw bad(`implausible page size 2^${pageSizeLog2}`);
  if (version >= 0x20300 && blob.readBigUInt64BE(56) !== 0n) {
    throw new SigningError('macho_unsupported', 'CodeDirectory with codeLimit64 (code > 4 GiB) is not supported');
  }
  const teamOffset = version >= CD_VERSION_TEAMID ? blob.readUInt32BE(48) : 0;
  const identifier = readString(blob, identOffset, headerSize, 'identifier');
  const teamId = teamOffset === 0 ? undefined : readString(blob, teamOffset, headerSize, 'team id');
  if (nSpecial > 64) throw bad(`${nSpecial} special slots`);
  const specialStart = hashOffset - nSpecial * hashSize;
  if (specialStart < headerSize || hashOffset + nCode * hashSize > length) throw bad('hash slots lie outside the blob');
  const specialSlots: Buffer[] = [];
  for (let i = 0; i < nSpecial; i++) specialSlots.push(Buffer.from(blob.subarray(hashOffset - (i + 1) * hashSize, hashOffset - i * hashSize)));
  let execSeg: ExecSegment | undefined;
  if (version >= CD_VERSION_EXECSEG) {
    execSeg = {
      base: u64(blob, 64),
      limit: u64(blob, 72),
      flags: u64(blob, 80),
    };
  }
  return {
    version,
    flags,
    hashType,
    platform,
    pageSizeLog2,
    identifier,
    teamId,
    codeLimit,
    specialSlots,
    codeHashes: blob.subarray(hashOffset, hashOffset + nCode * hashSize),
    execSeg,
    extraHeader: Buffer.from(blob.subarray(Math.min(88, headerSize), headerSize)),
  };
}

function u64(blob: Buffer, at: number): number {
  const value = blob.readBigUInt64BE(at);
  if (value > BigInt(Number.MAX_SAFE_INTEGER)) throw bad(`field at ${at} is out of range`);
  return Number(value);
}

function readString(blob: Buffer, offset: number, min: number, what: string): string {
  if (offset < min || offset >= blob.length) throw bad(`${what} offset ${offset} out of range`);
  const nul = blob.indexOf(0, offset);
  if (nul < 0) throw bad(`${what} is not NUL-terminated`);
  return blob.toString('utf8', offset, nul);
}

/** Full digest of a CodeDirectory blob with its own hash type (CDHashes2 uses it untruncated). */
export function codeDirectoryDigest(blob: Buffer, hashType: HashType): Buffer {
  return hash(hashType.algorithm, blob, 'buffer');
}

/** The cdhash: the CodeDirectory digest truncated to 20 bytes (cs_blobs.h CS_CDHASH_LEN). */
export function cdHash(blob: Buffer, hashType: HashType): Buffer {
  return codeDirectoryDigest(blob, hashType).subarray(0, 20);
}
