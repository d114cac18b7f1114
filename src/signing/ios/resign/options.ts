// What the .ipa re-signer takes and returns.
import type { Identity } from '../../cms/index.ts';
import type { PlistDict } from '../../plist/index.ts';
import type { DropReason, ProvisioningProfile } from '../profile/index.ts';

export interface ResignOverrides {
  /** New CFBundleIdentifier of the main app; nested ids that start with the old one are re-prefixed. */
  bundleId?: string;
  /** New CFBundleDisplayName of the main app. */
  displayName?: string;
  /** New CFBundleShortVersionString of the app and its extensions (they must match). */
  version?: string;
}

export interface ResignOptions {
  identity: Identity;
  /** Candidate profiles; each provisioned bundle takes the best match for its bundle id. */
  profiles: readonly ProvisioningProfile[];
  /** Explicit profile per (final) bundle id, winning over matching (`--profile ID=FILE`). */
  profileByBundleId?: ReadonlyMap<string, ProvisioningProfile>;
  overrides?: ResignOverrides;
  /** Entitlements the main app asks for, instead of those of its previous signature. */
  entitlements?: PlistDict;
  /** CMS signingTime and the time of new zip entries; default now. Fix it for deterministic output. */
  signingTime?: Date;
  /** Clock for the expiry checks (default now). */
  now?: Date;
  /**
   * Threads for Mach-O signing; 0 signs in-process. Default: two threads for apps with at least
   * 256 MiB of code, in-process below (starting a worker costs more than it saves; resign-ipa.ts).
   */
  workers?: number;
  /**
   * Mach-O files of at least this many bytes (uncompressed) are signed in one streaming pass as
   * they are written, instead of in memory (default 8 MiB; Infinity: never). Only with a sink
   * that can patch headers (DataSink.writeAt). The signed files are the same either way.
   */
  streamAbove?: number;
  /**
   * Resources (uncompressed bytes) from which they are hashed on a thread of their own
   * (scan-thread.ts) rather than on the calling thread, when the input is a file (default 16 MiB;
   * Infinity: never). The records are the same either way.
   */
  scanThreadAbove?: number;
  /**
   * The caller verifies the output (verifyWritten): the scan thread, when there is one and the
   * sink is a file, reads the signed code back from it as it is written (read-back.ts), for the
   * verifier to check. Default false: nothing is read back.
   */
  readBackForVerification?: boolean;
  /** Deflate level of rewritten Mach-O files whose input entry was deflated (default 6). */
  compressionLevel?: number;
  signal?: AbortSignal;
}

export interface ResignedBundle {
  /** Path inside the .ipa, e.g. "Payload/A.app/PlugIns/W.appex/". */
  path: string;
  kind: string;
  bundleId: string;
  originalBundleId: string;
  profile?: { uuid: string; name: string; applicationIdentifier: string; expiresAt: string };
  entitlements?: PlistDict;
  /** Entitlements of the old signature the profile does not grant, left out. */
  droppedEntitlements: { key: string; reason: DropReason }[];
  /** Mach-O files signed in this bundle (main executable last). */
  code: { path: string; identifier: string; cdhashes: string[] }[];
  sealedFiles: number;
}

export interface ResignResult {
  app: { bundleId: string; name: string | null; version: string | null; build: string | null };
  bundles: ResignedBundle[];
  entries: { copied: number; rewritten: number; added: number; dropped: number };
  size: number;
}
