// IDs and constants of the APK Signing Block (apksig ApkSigningBlockUtils, V2SchemeConstants,
// V3SchemeConstants, SourceStampConstants).
export const BLOCK_MAGIC = Buffer.from('APK Sig Block 42', 'latin1');
// apksig APK_SIG_BLOCK_MIN_SIZE: u64 size + u64 size + 16-byte magic.
export const BLOCK_MIN_SIZE = 32;
// apksig ANDROID_COMMON_PAGE_ALIGNMENT_BYTES: the block starts and ends on this boundary.
export const BLOCK_ALIGNMENT = 4096;

export const V2_BLOCK_ID = 0x7109871a;
export const V3_BLOCK_ID = 0xf05368c0;
export const V31_BLOCK_ID = 0x1b93ad61;
export const VERITY_PADDING_BLOCK_ID = 0x42726577;
export const SOURCE_STAMP_V2_BLOCK_ID = 0x6dff800d;
export const SOURCE_STAMP_V1_BLOCK_ID = 0x2b09189e;

// Additional attributes in v2/v3 signed data.
// V2SchemeConstants.STRIPPING_PROTECTION_ATTR_ID: "this APK is also signed with scheme <value>".
export const V2_STRIPPING_PROTECTION_ATTR_ID = 0xbeeff00d;
// V3SchemeConstants.PROOF_OF_ROTATION_ATTR_ID: the signing certificate lineage.
export const PROOF_OF_ROTATION_ATTR_ID = 0x3ba06f8c;
// V3SchemeConstants.ROTATION_MIN_SDK_VERSION_ATTR_ID: v3.1 stripping protection in the v3 signer.
export const ROTATION_MIN_SDK_ATTR_ID = 0x559f8b02;
// V3SchemeConstants.ROTATION_ON_DEV_RELEASE_ATTR_ID: the v3.1 signer targets a development release.
export const ROTATION_ON_DEV_RELEASE_ATTR_ID = 0xc2a6b3ba;

// Scheme IDs written into X-Android-APK-Signed and the 0xbeeff00d attribute.
export const SCHEME_ID_V2 = 2;
export const SCHEME_ID_V3 = 3;

// apksig: at most 10 signers per v1/v2 signature.
export const MAX_SIGNERS = 10;
// Integer.MAX_VALUE: the open upper bound of a v3 signer's SDK range.
export const MAX_SDK = 0x7fffffff;
