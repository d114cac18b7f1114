// The seam between the task worker and the signing engines. The worker hands a Signer the input
// package as a DataSource read where it is stored (BlobStore.openSource), the decrypted
// credential and an output path; the Signer signs AND verifies the output (no unverified artifact
// ever leaves it) or throws an AppError/SigningError whose code becomes the task's error.code.
// src/main wires one Signer per (platform, cert_type).
import type { Credential } from '../db/credential.ts';
import type { DataSource } from '../signing/data-source.ts';
import type { CertType, Platform, TaskBundle, TaskWarning } from '../db/schema.ts';
export type { CertType, Platform };

export interface SignRequest {
  /** The task being signed (`tsk_…`). */
  taskId: string;
  platform: Platform;
  certType: CertType;
  /** The upload, read where it is stored (the file on disk, range GETs on S3); the worker closes it. */
  input: DataSource;
  /** Where the signed package goes (the attempt's scratch folder; random access for APK v2 and Mach-O). */
  outputPath: string;
  credential: Credential;
  /** iOS enterprise: the certificate profile (`prf_…`) chosen per bundle id by the task. */
  profileChoice?: Record<string, string>;
  signal: AbortSignal;
}

export interface SignResult {
  /** Identity of the signed app as it now is (bundle id may have changed for iOS overrides). */
  app: { bundleId: string | null; name: string | null; version: string | null; build: string | null };
  /** What the verifier checked, for the task record (e.g. ["v1", "v2", "v3"] or slice summaries). */
  verification: string[];
  /** iOS: which profile (or App ID) signed which bundle. */
  bundles?: TaskBundle[];
  /** What signing left out and why. */
  warnings?: TaskWarning[];
}

export interface Signer {
  readonly platform: Platform;
  readonly certTypes: readonly CertType[];
  sign(request: SignRequest): Promise<SignResult>;
}
