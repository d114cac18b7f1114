// The seam between the per-device flow and the iOS re-signer: sign an app for one ad-hoc profile
// with a developer account's distribution identity, verify the result, write it to outputPath.
// The input is a DataSource: the task's upload read where it is stored (BlobStore.openSource).
// src/main wires the real engine; without one, per-device builds fail with
// `super_signing_unavailable` (never with an unsigned or fake build).
import { AppError } from '../errors.ts';
import type { Identity } from '../signing/cms/index.ts';
import type { DataSource } from '../signing/data-source.ts';
import type { SuperAppPlan } from './capability-plan.ts';

export interface DeviceBuildRequest {
  /** The task's original upload, read where it is stored; the caller closes it. */
  input: DataSource;
  outputPath: string;
  p12: Buffer;
  password: string;
  /** The ad-hoc .mobileprovision files from App Store Connect: one per App ID of the plan. */
  profiles: Buffer[];
  signal?: AbortSignal;
}

export interface DeviceBuildResult {
  /** What the verifier checked, for logs. */
  verification: string[];
  /** 'full' when the whole app was re-signed, 'incremental' when only profile-dependent parts were. */
  mode: 'full' | 'incremental';
}

/** A super task's preparation: the whole app signed with the account's identity, before any device. */
export interface PrepareRequest {
  /** The task's original upload, read where it is stored; the caller closes it. */
  input: DataSource;
  outputPath: string;
  p12: Buffer;
  password: string;
  teamId: string;
  teamName: string;
  /** The App IDs the profiles are made for and what each bundle carries over. */
  plan: SuperAppPlan;
  signal?: AbortSignal;
}

export interface PrepareResult {
  app: { bundleId: string | null; name: string | null; version: string | null; build: string | null };
  verification: string[];
}

export interface DeviceBuildSigner {
  /** Whole-app re-sign for one device profile (the fallback of the incremental path). */
  sign(request: DeviceBuildRequest): Promise<DeviceBuildResult>;
  /** Whole-app re-sign with a template profile: the prepared build. */
  prepare(request: PrepareRequest): Promise<PrepareResult>;
  /** The account's signing identity with its chain completed (for the incremental path). */
  identity(p12: Buffer, password: string): Promise<Identity>;
}

const unavailable = (): never => {
  throw new AppError('super_signing_unavailable', 'Per-device re-signing of iOS apps is not available in this build of Signet (no iOS re-signing engine is wired).');
};

export const unavailableDeviceSigner: DeviceBuildSigner = {
  sign: async () => unavailable(),
  prepare: async () => unavailable(),
  identity: async () => unavailable(),
};
