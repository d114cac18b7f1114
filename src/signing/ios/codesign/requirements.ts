// Code requirements (Security requirement.h / reqinterp.cpp): a Requirements set (0xfade0c01)
// indexes Requirement blobs (0xfade0c00, kind 1 = expression form) whose expressions are
// prefix-encoded u32 opcodes. Hand-written: only the binary form is needed, not the text compiler.
import { SigningError } from '../../errors.ts';
import { CSMAGIC_REQUIREMENT, CSMAGIC_REQUIREMENTS } from './constants.ts';

/** Certificate slots: 0 = leaf, positive = up the chain, -1 = anchor (root). */
export const LEAF_CERT = 0;
export const ANCHOR_CERT = -1;

export type MatchOp =
  | { op: 'exists' }
  | { op: 'absent' }
  | { op: 'equal' | 'contains' | 'beginsWith' | 'endsWith' | 'lessThan' | 'greaterThan' | 'lessEqual' | 'greaterEqual'; value: Buffer };

export type Expr =
  | { op: 'false' }
  | { op: 'true' }
  | { op: 'ident'; identifier: string }
  | { op: 'appleAnchor' }
  | { op: 'anchorHash'; slot: number; hash: Buffer }
  | { op: 'infoKeyValue'; key: string; value: string }
  | { op: 'and' | 'or'; left: Expr; right: Expr }
  | { op: 'cdhash'; hash: Buffer }
  | { op: 'not'; expr: Expr }
  | { op: 'infoKeyField'; key: string; match: MatchOp }
  | { op: 'certField'; slot: number; field: string; match: MatchOp }
  | { op: 'trustedCert'; slot: number }
  | { op: 'trustedCerts' }
  | { op: 'certGeneric' | 'certPolicy'; slot: number; oid: Buffer; match: MatchOp }
  | { op: 'appleGenericAnchor' }
  | { op: 'entitlementField'; key: string; match: MatchOp }
  | { op: 'namedAnchor' | 'namedCode'; name: string }
  | { op: 'platform'; platform: number }
  | { op: 'notarized' }
  | { op: 'legacyDevID' };

const OPS = [
  'false', 'true', 'ident', 'appleAnchor', 'anchorHash', 'infoKeyValue', 'and', 'or', 'cdhash', 'not',
  'infoKeyField', 'certField', 'trustedCert', 'trustedCerts', 'certGeneric', 'appleGenericAnchor',
  'entitlementField', 'certPolicy', 'namedAnchor', 'namedCode', 'platform', 'notarized', 'certFieldDate', 'legacyDevID',
] as const;
const MATCHES = ['exists', 'equal', 'contains', 'beginsWith', 'endsWith', 'lessThan', 'greaterThan', 'lessEqual', 'greaterEqual'] as const;
const MATCH_ABSENT = 14;
/** requirement.h: the high byte of an opcode carries flags (opGenericFalse, opGenericSkip). */
const OP_FLAG_MASK = 0xff000000;

const bad = (message: string): SigningError => new SigningError('code_signature_invalid', `Malformed code requirement: ${message}`);

class Writer {
  private readonly parts: Buffer[] = [];
  u32(value: number): void {
    const b = Buffer.allocUnsafe(4);
    b.writeInt32BE(value | 0, 0);
    this.parts.push(b);
  }
  data(bytes: Buffer): void {
    this.u32(bytes.length);
    this.parts.push(bytes);
    const pad = (4 - (bytes.length % 4)) % 4;
    if (pad) this.parts.push(Buffer.alloc(pad));
  }
  result(): Buffer {
    return Buffer.concat(this.parts);
  }
}

export function encodeExpr(expr: Expr): Buffer {
  const w = new Writer();
  writeExpr(w, expr);
  return w.result();
}

function writeExpr(w: Writer, e: Expr): void {
  w.u32(OPS.indexOf(e.op));
  switch (e.op) {
    case 'ident': return w.data(Buffer.from(e.identifier, 'utf8'));
    case 'anchorHash': w.u32(e.slot); return w.data(e.hash);
    case 'infoKeyValue': w.data(Buffer.from(e.key, 'utf8')); return w.data(Buffer.from(e.value, 'utf8'));
    case 'and': case 'or': writeExpr(w, e.left); return writeExpr(w, e.right);
    case 'cdhash': return w.data(e.hash);
    case 'not': return writeExpr(w, e.expr);
    case 'infoKeyField': case 'entitlementField': w.data(Buffer.from(e.key, 'utf8')); return writeMatch(w, e.match);
    case 'certField': w.u32(e.slot); w.data(Buffer.from(e.field, 'utf8')); return writeMatch(w, e.match);
    case 'trustedCert': return w.u32(e.slot);
    case 'certGeneric': case 'certPolicy': w.u32(e.slot); w.data(e.oid); return writeMatch(w, e.match);
    case 'namedAnchor': case 'namedCode': return w.data(Buffer.from(e.name, 'utf8'));
    case 'platform': return w.u32(e.platform);
    default: return;
  }
}

function writeMatch(w: Writer, m: MatchOp): void {
  if (m.op === 'absent') return w.u32(MATCH_ABSENT);
  w.u32(MATCHES.indexOf(m.op));
  if (m.op !== 'exists') w.data(m.value);
}

class Reader {
  at = 0;
  private readonly bytes: Buffer;
  constructor(bytes: Buffer) {
    this.bytes = bytes;
  }
  u32(): number {
    if (this.at + 4 > this.bytes.length) throw bad('expression truncated');
    const v = this.bytes.readInt32BE(this.at);
    this.at += 4;
    return v;
  }
  data(): Buffer {
    const length = this.u32();
    if (length < 0 || this.at + length > this.bytes.length) throw bad('data runs past the expression');
    const out = this.bytes.subarray(this.at, this.at + length);
    this.at += length + ((4 - (length % 4)) % 4);
    return out;
  }
  get done(): boolean {
    return this.at >= this.bytes.length;
  }
}

/** Decodes one expression spanning all of `bytes` (trailing padding allowed). */
export function decodeExpr(bytes: Buffer): Expr {
  const r = new Reader(bytes);
  const expr = readExpr(r, 0);
  if (r.at > bytes.length) throw bad('expression truncated');
  return expr;
}

function readExpr(r: Reader, depth: number): Expr {
  // Nesting bound: a hostile blob must not blow the stack.
  if (depth > 64) throw bad('expression nested too deeply');
  const code = r.u32() & ~OP_FLAG_MASK;
  const op = OPS[code];
  const text = (): string => r.data().toString('utf8');
  switch (op) {
    case 'false': case 'true': case 'appleAnchor': case 'trustedCerts': case 'appleGenericAnchor': case 'notarized': case 'legacyDevID':
      return { op };
    case 'ident': return { op, identifier: text() };
    case 'anchorHash': { const slot = r.u32(); return { op, slot, hash: r.data() }; }
    case 'infoKeyValue': { const key = text(); return { op, key, value: text() }; }
    case 'and': case 'or': { const left = readExpr(r, depth + 1); return { op, left, right: readExpr(r, depth + 1) }; }
    case 'cdhash': return { op, hash: r.data() };
    case 'not': return { op, expr: readExpr(r, depth + 1) };
    case 'infoKeyField': case 'entitlementField': { const key = text(); return { op, key, match: readMatch(r) }; }
    case 'certField': { const slot = r.u32(); const field = text(); return { op, slot, field, match: readMatch(r) }; }
    case 'trustedCert': return { op, slot: r.u32() };
    case 'certGeneric': case 'certPolicy': { const slot = r.u32(); const oid = r.data(); return { op, slot, oid, match: readMatch(r) }; }
    case 'namedAnchor': case 'namedCode': return { op, name: text() };
    case 'platform': return { op, platform: r.u32() };
    default: throw bad(`unsupported opcode ${code}`);
  }
}

function readMatch(r: Reader): MatchOp {
  const code = r.u32();
  if (code === MATCH_ABSENT) return { op: 'absent' };
  const op = MATCHES[code];
  if (op === undefined) throw bad(`unsupported match operation ${code}`);
  if (op === 'exists') return { op };
  return { op, value: r.data() };
}

/** Requirement blob: magic, length, kind 1 (expression form), expression. */
export function serializeRequirement(expr: Expr): Buffer {
  const body = encodeExpr(expr);
  const out = Buffer.allocUnsafe(12 + body.length);
  out.writeUInt32BE(CSMAGIC_REQUIREMENT, 0);
  out.writeUInt32BE(out.length, 4);
  out.writeUInt32BE(1, 8);
  body.copy(out, 12);
  return out;
}

export interface RequirementEntry {
  type: number;
  expr: Expr;
}

/** Requirements set; an empty list gives Apple's ad-hoc blob `fade0c01 0000000c 00000000`. */
export function serializeRequirements(entries: readonly RequirementEntry[]): Buffer {
  const blobs = [...entries].sort((a, b) => a.type - b.type).map((e) => ({ type: e.type, blob: serializeRequirement(e.expr) }));
  const headerSize = 12 + 8 * blobs.length;
  const out = Buffer.allocUnsafe(blobs.reduce((n, b) => n + b.blob.length, headerSize));
  out.writeUInt32BE(CSMAGIC_REQUIREMENTS, 0);
  out.writeUInt32BE(out.length, 4);
  out.writeUInt32BE(blobs.length, 8);
  let offset = headerSize;
  blobs.forEach((b, i) => {
    out.writeUInt32BE(b.type, 12 + 8 * i);
    out.writeUInt32BE(offset, 16 + 8 * i);
    b.blob.copy(out, offset);
    offset += b.blob.length;
  });
  return out;
}

export function parseRequirements(blob: Buffer): RequirementEntry[] {
  if (blob.length < 12 || blob.readUInt32BE(0) !== CSMAGIC_REQUIREMENTS) throw bad('not a Requirements set');
  if (blob.readUInt32BE(4) !== blob.length) throw bad('set length does not match');
  const count = blob.readUInt32BE(8);
  if (12 + 8 * count > blob.length) throw bad('index runs past the set');
  const entries: RequirementEntry[] = [];
  for (let i = 0; i < count; i++) {
    const type = blob.readUInt32BE(12 + 8 * i);
    const offset = blob.readUInt32BE(16 + 8 * i);
    if (offset + 12 > blob.length) throw bad(`requirement ${type} offset out of range`);
    const length = blob.readUInt32BE(offset + 4);
    if (blob.readUInt32BE(offset) !== CSMAGIC_REQUIREMENT || length < 12 || offset + length > blob.length) {
      throw bad(`requirement ${type} is malformed`);
    }
    if (blob.readUInt32BE(offset + 8) !== 1) throw bad(`requirement ${type} is not in expression form`);
    entries.push({ type, expr: decodeExpr(blob.subarray(offset + 12, offset + length)) });
  }
  return entries;
}

/** Apple's requirement language, for reports (`codesign -d -r-` style). */
export function formatExpr(e: Expr): string {
  const q = (s: string): string => JSON.stringify(s);
  const slot = (n: number): string => (n === LEAF_CERT ? 'leaf' : n === ANCHOR_CERT ? 'root' : String(n));
  const m = (x: MatchOp): string => {
    if (x.op === 'exists') return '/* exists */';
    if (x.op === 'absent') return 'absent';
    const v = x.value.toString('utf8');
    switch (x.op) {
      case 'equal': return `= ${q(v)}`;
      case 'contains': return `~ ${q(v)}`;
      case 'beginsWith': return `= ${q(`${v}*`)}`;
      case 'endsWith': return `= ${q(`*${v}`)}`;
      case 'lessThan': return `< ${q(v)}`;
      case 'greaterThan': return `> ${q(v)}`;
      case 'lessEqual': return `<= ${q(v)}`;
      case 'greaterEqual': return `>= ${q(v)}`;
    }
  };
  switch (e.op) {
    case 'false': case 'true': return e.op;
    case 'ident': return `identifier ${q(e.identifier)}`;
    case 'appleAnchor': return 'anchor apple';
    case 'appleGenericAnchor': return 'anchor apple generic';
    case 'anchorHash': return `certificate ${slot(e.slot)} = H"${e.hash.toString('hex')}"`;
    case 'infoKeyValue': return `info[${e.key}] = ${q(e.value)}`;
    case 'and': return `${formatExpr(e.left)} and ${formatExpr(e.right)}`;
    case 'or': return `(${formatExpr(e.left)} or ${formatExpr(e.right)})`;
    case 'cdhash': return `cdhash H"${e.hash.toString('hex')}"`;
    case 'not': return `!(${formatExpr(e.expr)})`;
    case 'infoKeyField': return `info[${e.key}] ${m(e.match)}`;
    case 'entitlementField': return `entitlement[${e.key}] ${m(e.match)}`;
    case 'certField': return `certificate ${slot(e.slot)}[${e.field}] ${m(e.match)}`;
    case 'certGeneric': return `certificate ${slot(e.slot)}[field.${oidText(e.oid)}] ${m(e.match)}`;
    case 'certPolicy': return `certificate ${slot(e.slot)}[policy.${oidText(e.oid)}] ${m(e.match)}`;
    case 'trustedCert': return `certificate ${slot(e.slot)} trusted`;
    case 'trustedCerts': return 'anchor trusted';
    case 'namedAnchor': return `anchor apple ${e.name}`;
    case 'namedCode': return `(${e.name})`;
    case 'platform': return `platform ${e.platform}`;
    case 'notarized': return 'notarized';
    case 'legacyDevID': return 'legacy';
  }
}

/** Dotted text of DER OID content bytes (base-128 arcs). */
export function oidText(bytes: Buffer): string {
  const arcs: number[] = [];
  let value = 0;
  for (const byte of bytes) {
    value = value * 128 + (byte & 0x7f);
    if ((byte & 0x80) === 0) {
      if (arcs.length === 0) arcs.push(Math.min(2, Math.floor(value / 40)), value - Math.min(2, Math.floor(value / 40)) * 40);
      else arcs.push(value);
      value = 0;
    }
  }
  return arcs.join('.');
}

/** DER content bytes of a dotted OID (what certGeneric/certPolicy store). */
export function oidBytes(dotted: string): Buffer {
  const arcs = dotted.split('.').map(Number);
  const out: number[] = [];
  const first = arcs[0]! * 40 + arcs[1]!;
  for (const arc of [first, ...arcs.slice(2)]) {
    const chunk: number[] = [arc & 0x7f];
    let rest = Math.floor(arc / 128);
    while (rest > 0) {
      chunk.unshift((rest & 0x7f) | 0x80);
      rest = Math.floor(rest / 128);
    }
    out.push(...chunk);
  }
  return Buffer.from(out);
}
