// What the verifier reports: per scheme whether it is present and verified, the signers it saw,
// and apksigner-style errors and warnings, each tagged with the scheme it concerns.
export type SchemeName = 'v1' | 'v2' | 'v3' | 'v3.1';

export interface SignerReport {
  readonly scheme: SchemeName;
  /** v1: the signature file's base name; v2/v3: the signer's position (1-based). */
  readonly name: string;
  readonly certificateSha256: string;
  readonly subject: string;
  readonly notBefore: string;
  readonly notAfter: string;
  /** Android ignores validity dates, so an expired certificate only earns a warning. */
  readonly expired: boolean;
  readonly algorithms: readonly string[];
  /** v3/v3.1: the platform range the signer covers. */
  readonly minSdk?: number;
  readonly maxSdk?: number;
  /** v3/v3.1 with key rotation: SHA-256 of each certificate in the lineage, oldest first. */
  readonly lineage?: readonly string[];
}

export interface Issue {
  readonly scheme: SchemeName | null;
  readonly message: string;
}

export interface SchemeStatus {
  /** A signature of this scheme exists in the APK. */
  readonly present: boolean;
  /** It was checked for the SDK range and passed (apksigner "Verified using ... scheme: true"). */
  readonly verified: boolean;
}

export interface ApkVerification {
  readonly verified: boolean;
  /** The platform range checked: from the manifest's minSdkVersion (or the caller's) to maxSdk. */
  readonly minSdk: number;
  readonly maxSdk: number;
  readonly schemes: Readonly<Record<SchemeName, SchemeStatus>>;
  readonly signers: readonly SignerReport[];
  readonly errors: readonly Issue[];
  readonly warnings: readonly Issue[];
}

/** Mutable collector used while verifying one scheme. */
export class Findings {
  readonly errors: Issue[] = [];
  readonly warnings: Issue[] = [];

  error(scheme: SchemeName | null, message: string): void {
    this.errors.push({ scheme, message });
  }

  warn(scheme: SchemeName | null, message: string): void {
    this.warnings.push({ scheme, message });
  }
}
