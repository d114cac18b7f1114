// What the re-signer's jobs share (resign-ipa.ts schedules them, bundle-output.ts builds their
// output): the parsed app, its plans, the background hashing and the options.
import type { ZipReader, ZipWriter } from '../../zip/index.ts';
import type { BundleNode, IpaLayout } from '../bundle/index.ts';
import type { ProvisioningProfile } from '../profile/index.ts';
import type { MachOSignerPool } from './macho-pool.ts';
import type { ResignedBundle, ResignOptions } from './options.ts';
import type { InfoPlan } from './overrides.ts';
import type { PathIndex } from './path-index.ts';
import type { BackgroundScan, FileRecord } from './scan.ts';

/**
 * A unit of output: entries to write, in order, once the job's turn comes. A `streamed` entry is
 * signed while it is written, so its digests exist only once it has been written.
 */
export type Output = Array<{ name: string; streamed?: boolean; write: (writer: ZipWriter) => Promise<void> }>;

export interface Context {
  zip: ZipReader;
  layout: IpaLayout;
  infos: Map<BundleNode, InfoPlan>;
  profiles: Map<BundleNode, ProvisioningProfile>;
  records: Map<string, FileRecord>;
  /** Every name that gets a record: the app's files and each bundle's CodeResources and profile. */
  sealable: PathIndex;
  scan: BackgroundScan;
  options: ResignOptions;
  /** Aborted by the caller or when any part of the pipeline fails. */
  signal: AbortSignal;
  signingTime: Date;
  pool: MachOSignerPool;
  reports: Map<BundleNode, ResignedBundle>;
  /** Size from which Mach-O files are signed streaming; Infinity when the sink cannot patch headers. */
  streamAbove: number;
  /** Names of the entries copied raw from the input, for the proof. */
  copiedNames: Set<string>;
  /** Mach-O files found not signable, copied as resources. */
  unsigned: Set<string>;
}
