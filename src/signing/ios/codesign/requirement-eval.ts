// Evaluates a designated requirement against what a signature actually contains (Security
// reqinterp.cpp, the subset codesign writes for iOS identities): identifier, anchor apple
// generic, certificate fields, certificate extensions, anchor hashes, and/or/not. Anything else
// yields "undecided" rather than a guess.
import { createHash } from 'node:crypto';
import * as asn1js from 'asn1js';
import * as pkijs from 'pkijs';
import { x509Of } from '../../cms/index.ts';
import { ANCHOR_CERT, oidText, type Expr, type MatchOp } from './requirements.ts';
import { APPLE_ANCHOR_SHA1 } from './designated-requirement.ts';

export type Verdict = boolean | 'undecided';

export interface RequirementContext {
  identifier: string;
  /** DER certificates leaf → root, as the CMS chain was built. */
  chain: readonly Buffer[];
}

export function evaluateRequirement(expr: Expr, context: RequirementContext, depth = 0): Verdict {
  if (depth > 64) return 'undecided';
  const cert = (slot: number): Buffer | undefined => (slot === ANCHOR_CERT ? context.chain[context.chain.length - 1] : context.chain[slot]);
  switch (expr.op) {
    case 'true':
      return true;
    case 'false':
      return false;
    case 'ident':
      return expr.identifier === context.identifier;
    case 'and': {
      const left = evaluateRequirement(expr.left, context, depth + 1);
      if (left === false) return false;
      const right = evaluateRequirement(expr.right, context, depth + 1);
      return right === false ? false : left === true && right === true ? true : 'undecided';
    }
    case 'or': {
      const left = evaluateRequirement(expr.left, context, depth + 1);
      if (left === true) return true;
      const right = evaluateRequirement(expr.right, context, depth + 1);
      return right === true ? true : left === false && right === false ? false : 'undecided';
    }
    case 'not': {
      const inner = evaluateRequirement(expr.expr, context, depth + 1);
      return inner === 'undecided' ? inner : !inner;
    }
    case 'appleGenericAnchor':
    case 'appleAnchor': {
      const root = cert(ANCHOR_CERT);
      return root !== undefined && APPLE_ANCHOR_SHA1.has(createHash('sha1').update(root).digest('hex'));
    }
    case 'anchorHash': {
      const der = cert(expr.slot);
      return der !== undefined && createHash('sha1').update(der).digest().equals(expr.hash);
    }
    case 'certField': {
      const der = cert(expr.slot);
      if (!der) return false;
      const [scope, key] = expr.field.split('.');
      if ((scope !== 'subject' && scope !== 'issuer') || key === undefined) return 'undecided';
      const x509 = x509Of(der);
      const value = (scope === 'subject' ? x509.subject : x509.issuer).split('\n').find((line) => line.startsWith(`${key}=`))?.slice(key.length + 1);
      return match(expr.match, value === undefined ? undefined : Buffer.from(value, 'utf8'));
    }
    case 'certGeneric': {
      const der = cert(expr.slot);
      if (!der) return false;
      const present = extensionOids(der).includes(oidText(expr.oid));
      return expr.match.op === 'exists' ? present : expr.match.op === 'absent' ? !present : 'undecided';
    }
    default:
      return 'undecided';
  }
}

function match(m: MatchOp, value: Buffer | undefined): Verdict {
  if (m.op === 'exists') return value !== undefined;
  if (m.op === 'absent') return value === undefined;
  if (value === undefined) return false;
  const text = value.toString('utf8');
  const want = m.value.toString('utf8');
  switch (m.op) {
    case 'equal':
      return text === want;
    case 'contains':
      return text.includes(want);
    case 'beginsWith':
      return text.startsWith(want);
    case 'endsWith':
      return text.endsWith(want);
    default:
      return 'undecided';
  }
}

function extensionOids(der: Buffer): string[] {
  try {
    const cert = new pkijs.Certificate({ schema: asn1js.fromBER(new Uint8Array(der)).result });
    return (cert.extensions ?? []).map((e) => e.extnID);
  } catch {
    return [];
  }
}
