// Why an archive is not a package Signet can sign: shared by upload inspection and both engines,
// so an upload and a task refuse the same file with the same reason.

/**
 * Machine-readable reasons carried in `SigningError('invalid_package').details.reason`.
 * Stable: the upload API returns them.
 */
export type InvalidPackageReason =
  | 'not_a_zip'
  | 'zip_rejected'
  | 'android_app_bundle'
  | 'no_app'
  | 'ambiguous_platform'
  | 'no_app_bundle'
  | 'payload_not_at_root'
  | 'several_apps'
  | 'no_info_plist'
  | 'info_plist_unreadable'
  | 'info_plist_incomplete'
  | 'manifest_unreadable';
