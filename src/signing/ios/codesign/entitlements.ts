// Entitlements blobs: slot 5 = XML plist (magic 0xfade7171), slot 7 = CoreEntitlements DER
// (0xfade7172, required by iOS 15+). The DER encoder lives in src/signing/plist. Also the
// execSegFlags that Apple's Signer::cookEntitlements derives from boolean-true entitlements.
import { SigningError } from '../../errors.ts';
import { decodeEntitlementsDer, encodeEntitlementsDer, parseXmlPlist, plistEqual, writeXmlPlist, type PlistDict } from '../../plist/index.ts';
import {
  CSMAGIC_EMBEDDED_DER_ENTITLEMENTS, CSMAGIC_EMBEDDED_ENTITLEMENTS, CS_EXECSEG_ALLOW_UNSIGNED, CS_EXECSEG_CAN_EXEC_CDHASH,
  CS_EXECSEG_CAN_LOAD_CDHASH, CS_EXECSEG_DEBUGGER, CS_EXECSEG_JIT, CS_EXECSEG_SKIP_LV,
} from './constants.ts';
import { unwrapBlob, wrapBlob } from './blob.ts';

export interface EntitlementsBlobs {
  /** Slot 5 blob (XML bytes as Apple's codesign writes them). */
  xml: Buffer;
  /** Slot 7 blob (DER). */
  der: Buffer;
}

export function entitlementsBlobs(entitlements: PlistDict): EntitlementsBlobs {
  return {
    xml: wrapBlob(CSMAGIC_EMBEDDED_ENTITLEMENTS, writeXmlPlist(entitlements)),
    der: wrapBlob(CSMAGIC_EMBEDDED_DER_ENTITLEMENTS, encodeEntitlementsDer(entitlements)),
  };
}

// Security signer.cpp cookEntitlements: these keys, when boolean true, set execSeg flags.
const EXECSEG_ENTITLEMENTS: ReadonlyArray<readonly [string, number]> = [
  ['get-task-allow', CS_EXECSEG_ALLOW_UNSIGNED],
  ['run-unsigned-code', CS_EXECSEG_ALLOW_UNSIGNED],
  ['com.apple.private.cs.debugger', CS_EXECSEG_DEBUGGER],
  ['dynamic-codesigning', CS_EXECSEG_JIT],
  ['com.apple.private.skip-library-validation', CS_EXECSEG_SKIP_LV],
  ['com.apple.private.amfi.can-load-cdhash', CS_EXECSEG_CAN_LOAD_CDHASH],
  ['com.apple.private.amfi.can-execute-cdhash', CS_EXECSEG_CAN_EXEC_CDHASH],
];

export function execSegFlagsFor(entitlements: PlistDict | undefined): number {
  if (!entitlements) return 0;
  let flags = 0;
  for (const [key, flag] of EXECSEG_ENTITLEMENTS) {
    const value = entitlements.value.get(key);
    if (value?.type === 'boolean' && value.value) flags |= flag;
  }
  return flags;
}

/** Decodes both blobs and checks they describe the same dictionary (verifier). */
export function readEntitlements(xmlBlob: Buffer | undefined, derBlob: Buffer | undefined): { xml?: PlistDict; der?: PlistDict } {
  const out: { xml?: PlistDict; der?: PlistDict } = {};
  if (xmlBlob) {
    const value = parseXmlPlist(unwrapBlob(xmlBlob, CSMAGIC_EMBEDDED_ENTITLEMENTS, 'entitlements'));
    if (value.type !== 'dict') throw new SigningError('code_signature_invalid', 'XML entitlements are not a dictionary');
    out.xml = value;
  }
  if (derBlob) out.der = decodeEntitlementsDer(unwrapBlob(derBlob, CSMAGIC_EMBEDDED_DER_ENTITLEMENTS, 'DER entitlements'));
  return out;
}

export function sameEntitlements(a: PlistDict, b: PlistDict): boolean {
  return plistEqual(a, b);
}
