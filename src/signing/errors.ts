// The signing engines' half of Signet's error catalogue (src/errors.ts joins it with the
// service's half into the one catalogue). Engines import nothing outside src/signing, so their
// codes live here. A code is a stable API: it reaches task.error.code and HTTP error bodies, so
// never rename one; add a new code instead. Keep each group sorted.
export const SIGNING_ERRORS = {
  // Packages and zip archives
  invalid_package: 'The file is not a readable app package.',
  zip_invalid: 'The zip archive is malformed.',
  zip_unsafe_entry: 'A zip entry has an unsafe name (absolute, "..", NUL or control characters).',
  zip_duplicate_entry: 'Two zip entries have the same name.',
  zip_overlapping_entries: 'Zip entries overlap each other.',
  zip_bomb: 'A zip entry expands beyond the allowed compression ratio or size.',
  zip_unsupported: 'The zip archive uses a feature Signet does not support (encryption, a compression method other than stored/deflate, multi-disk).',
  // Keys, certificates and keystores
  keystore_unsupported: 'The keystore format is not supported.',
  keystore_invalid: 'The keystore file is malformed.',
  keystore_too_expensive: 'The keystore asks for more key-derivation work (iterations) than Signet allows; export it again with a standard iteration count.',
  keystore_password_incorrect: 'The keystore password is incorrect.',
  key_password_incorrect: 'The private key password is incorrect.',
  keystore_alias_not_found: 'The keystore holds no key entry with that alias.',
  keystore_no_private_key: 'The keystore holds no private key.',
  key_certificate_mismatch: 'The private key does not belong to the certificate.',
  key_type_unsupported: 'The key type is not supported for this kind of signature.',
  certificate_invalid: 'The certificate cannot be parsed.',
  certificate_expired: 'The signing certificate has expired.',
  certificate_chain_incomplete: "The certificate chain up to Apple's root cannot be completed.",
  cms_invalid: 'The CMS (PKCS#7) structure is malformed or its signature does not verify.',
  ocsp_response_invalid: 'The OCSP responder\'s answer is malformed, unsigned by the issuer or its delegate, stale, or not about the certificate asked about.',
  // Property lists and profiles
  plist_invalid: 'The property list is malformed.',
  profile_invalid: 'The provisioning profile cannot be read.',
  profile_expired: 'The provisioning profile has expired.',
  profile_certificate_mismatch: 'The provisioning profile does not include the signing certificate.',
  bundle_id_mismatch: 'No provisioning profile covers the bundle identifier (the message names every bundle left uncovered).',
  // Android
  apk_invalid: 'The APK is malformed.',
  apk_signature_invalid: 'The APK signature does not verify.',
  manifest_invalid: 'The binary AndroidManifest.xml or resources.arsc cannot be parsed.',
  // iOS
  ipa_invalid: 'The .ipa does not hold a valid app bundle.',
  macho_invalid: 'The Mach-O file is malformed.',
  macho_no_room: 'The Mach-O header has no room for a new LC_CODE_SIGNATURE load command.',
  macho_unsupported: 'The Mach-O file uses a layout or CPU type Signet cannot sign.',
  code_signature_invalid: 'The code signature does not verify.',
  entitlements_invalid: 'The entitlements cannot be encoded.',
  entitlements_not_granted: 'The requested entitlements are not granted by the provisioning profile.',
  override_invalid: 'A requested Info.plist override (bundle id, display name or version) is not valid.',
  ipa_signature_invalid: 'The signed .ipa does not verify (a code signature, resource seal or profile check failed).',
  asset_catalog_invalid: 'The compiled asset catalog (Assets.car) is malformed.',
  asset_catalog_unsupported: 'The compiled asset catalog (Assets.car) stores the image in a form Signet cannot decode.',
  incremental_template_mismatch: 'The prepared build cannot take this profile incrementally (entitlements or signature layout differ); re-sign the app in full.',
  // Signing pipeline (pipeline/sign-package.ts)
  verification_failed: 'The signed output did not pass verification and was not handed out.',
} as const;

export type SigningErrorCode = keyof typeof SIGNING_ERRORS;

/** Every failure an engine reports: a stable code, a message for people, and the cause kept. */
export class SigningError extends Error {
  readonly code: SigningErrorCode;
  readonly details: Record<string, unknown> | undefined;

  constructor(code: SigningErrorCode, message?: string, options?: { cause?: unknown; details?: Record<string, unknown> }) {
    super(message ?? SIGNING_ERRORS[code], options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'SigningError';
    this.code = code;
    this.details = options?.details;
  }
}
