// What signPackage takes and returns. Requests and settings are plain data (Buffers or
// Uint8Arrays, strings, numbers, Dates) so that they cross a worker-thread boundary by structured
// cloning; only SignEnv's hooks (signal, identity loader) stay on the caller's side.
import type { ApkSchemes } from '../android/index.ts';
import type { Identity, LoadIdentityOptions } from '../cms/index.ts';
import type { DropReason } from '../ios/profile/index.ts';
import type { ResignedBundle, ResignOverrides, ResignResult } from '../ios/resign/index.ts';
import type { PlistDict } from '../plist/index.ts';
import type { Platform } from '../platform.ts';

/** Bytes as they arrive: Buffers in-process, Uint8Arrays after structured cloning. */
export type Bytes = Buffer | Uint8Array;

export interface AndroidSignRequest {
  platform: 'android';
  /** PKCS#12, JKS, PEM or PKCS#8 key file. */
  keystore: Bytes;
  password?: string | null;
  keyPassword?: string | null;
  alias?: string | null;
  /** PEM/DER certificate when the key file holds none. */
  certificate?: Bytes | null;
  /** The key file's name: with no alias, apksigner names the v1 signature files after it. */
  keyFileName?: string;
  schemes?: ApkSchemes;
  minSdk?: number;
}

export interface IosProfileInput {
  /** The caller's name for the profile (a certificate profile's `prf_…`), echoed in the summary. */
  id: string | null;
  /** The .mobileprovision file. */
  bytes: Bytes;
  /** Bundle ids this profile signs whatever else matches (a task's choice, `--profile ID=FILE`). */
  pinnedTo?: string[];
  /** Also a candidate for other bundles, matched by App ID (default true). */
  matchOthers?: boolean;
}

export interface IosSignRequest {
  platform: 'ios';
  /** The PKCS#12 export of certificate and key, or an identity the caller opened already. */
  identity: { p12: Bytes; password?: string } | { opened: Identity };
  profiles: IosProfileInput[];
  overrides?: ResignOverrides;
  /** Entitlements the main app asks for instead of those of its previous signature. */
  entitlements?: PlistDict;
}

export type SignPackageRequest = AndroidSignRequest | IosSignRequest;

/** Settings every signing run shares; serialisable (the thread pool receives them once). */
export interface SigningSettings {
  /**
   * CA certificates (DER or PEM file bytes: SIGNET_APPLE_CA_DIR, `--ca-dir`) completing chains
   * besides Apple's CAs shipped with Signet (cms/apple-ca).
   */
  caCertificates?: Bytes[];
  /** Threads signing Mach-O files within one iOS re-sign; 0 = in-process (engine default otherwise). */
  machOThreads?: number;
  /** Clock for expiry checks and signing time (tests fix it for deterministic output). */
  now?: Date;
  signingTime?: Date;
}

export interface SignEnv extends SigningSettings {
  signal?: AbortSignal;
  /**
   * Android: read the signed app's identity (package, label, versions) back from the output for
   * `summary.app` (default true). `signet sign` prints none of it and skips the read (~60-110 ms
   * of CPU on a 190 MiB APK, bench/apk.ts); its summary's app fields are then null.
   */
  describeApp?: boolean;
  /** Opens a key file (default: the engine's loadIdentity here; the service passes its keystore thread). */
  loadIdentity?: (bytes: Buffer, options: LoadIdentityOptions) => Promise<Identity>;
}

export interface SignedIdentity {
  subject: string;
  commonName: string | null;
  teamId: string | null;
  sha256: string;
  notAfter: Date;
  expired: boolean;
  /** Subjects of the certificates carried above the leaf (iOS: up to Apple's root). */
  chain: string[];
}

/** Which profile signed which bundle (iOS). */
export interface SignedBundle {
  path: string;
  bundleId: string;
  applicationIdentifier: string;
  profile: { id: string | null; name: string; uuid: string; type: string; expiresAt: string };
  capabilities: string[];
}

/** An entitlement the bundle's profile did not grant, left out of its signature. */
export interface SigningWarning {
  code: 'entitlement_left_out';
  message: string;
  bundleId: string;
  entitlement: string;
  reason: DropReason;
}

export interface SignSummary {
  platform: Platform;
  app: { bundleId: string | null; name: string | null; version: string | null; build: string | null };
  identity: SignedIdentity;
  bundles: SignedBundle[];
  warnings: SigningWarning[];
  /** What the verifier checked on the output, one line each (schemes, or one per bundle). */
  verification: string[];
  android?: {
    schemes: ApkSchemes;
    signatureAlgorithm: string;
    minSdk: number;
    /** The lowest API level the output was verified for (v2+ only: FIRST_V2_SDK at least). */
    verifiedFromSdk: number;
    /** The signing certificate as apksigner describes it. */
    certificate: { sha256: string; subject: string; notAfter: Date; expired: boolean };
  };
  ios?: { entries: ResignResult['entries']; bundles: ResignedBundle[]; signer: string | null };
}
