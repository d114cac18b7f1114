// Device enrollments: one per UDID-capture visit. Downloading the request profile creates an
// enrollment bound to the install link, whose single-use challenge (only its SHA-256 is stored)
// goes into the profile and the callback URL; the device's signed answer must echo it. The
// answer is stored and the device job queued in one transaction, and the device is sent back to
// the install page with a 301 carrying the enrollment id (distribution-protocols.md §3.1.4): the
// id, not the UDID, is what the page, the manifest and the download use from then on.
import { createHash, randomBytes } from 'node:crypto';
import type { Db } from '../db/database.ts';
import type { EnrollmentRow, SuperBuildRow } from '../db/super-tables.ts';
import { AppError } from '../errors.ts';
import { Readable } from 'node:stream';
import type { JobQueue } from '../queue/job-queue.ts';
import type { BlobStore } from '../storage/blob-store.ts';
import type { Release } from '../distribution/service.ts';
import { buildProfileServiceRequest } from './mobileconfig.ts';
import type { ProfileSigner } from './profile-signer.ts';

/** iOS keeps a downloaded profile 8 minutes; the user may take longer in Settings (§3.4 item 4). */
export const ENROLLMENT_TTL_MS = 30 * 60_000;

export interface EnrollmentServiceOptions {
  db: Db;
  queue: JobQueue;
  /** Public base URL, read on use. */
  baseUrl: string;
  signer: ProfileSigner | null;
  blobs: BlobStore;
  ttlMs?: number;
}

export interface EnrollmentStatus {
  enrollment: EnrollmentRow;
  build: SuperBuildRow | null;
}

const ENROLLMENT_ID = /^enr_[0-9A-Za-z]{22}$/;
const hash = (challenge: string) => createHash('sha256').update(challenge).digest('hex');

export class EnrollmentService {
  readonly #options: EnrollmentServiceOptions;

  constructor(options: EnrollmentServiceOptions) {
    this.#options = options;
  }

  /** True when a release is distributed per device (cert_type "super"). */
  isSuper(release: Release): boolean {
    return release.task.cert_type === 'super';
  }

  /** A fresh, signed (when a signer is configured) request profile for this link. */
  async requestProfile(release: Release, appName: string, organization: string | null): Promise<{ bytes: Buffer; signed: boolean }> {
    const challenge = randomBytes(24).toString('base64url');
    await this.#options.db.repos.superSignature.createEnrollment({
      distributionId: release.distribution.id,
      challengeHash: hash(challenge),
      expiresAt: new Date(Date.now() + (this.#options.ttlMs ?? ENROLLMENT_TTL_MS)),
    });
    const slug = release.distribution.slug;
    const payload = buildProfileServiceRequest({
      callbackUrl: `${this.#options.baseUrl}/d/${slug}/udid?challenge=${challenge}`,
      challenge,
      appName,
      organization: organization ?? 'Signet',
      identifier: `dev.signet.udid.${slug}`,
    });
    const signer = this.#options.signer;
    return signer ? { bytes: signer.sign(payload), signed: true } : { bytes: payload, signed: false };
  }

  /**
   * Takes the device's signed answer; returns the install page URL to 301 to. Replaying the same
   * device's answer returns the same URL; another device cannot reuse a challenge.
   */
  async receive(release: Release, queryChallenge: string | undefined, body: Buffer): Promise<string> {
    // The CMS reader loads with the first device answer, not at server start.
    const { readDeviceResponse } = await import('./device-response.ts');
    const attributes = readDeviceResponse(body);
    if (queryChallenge === undefined || queryChallenge !== attributes.challenge) {
      throw new AppError('udid_challenge_invalid', 'The challenge in the URL does not match the one the device signed.');
    }
    const repo = this.#options.db.repos.superSignature;
    const enrollment = await repo.findEnrollmentByChallenge(hash(attributes.challenge));
    if (!enrollment || enrollment.distribution_id !== release.distribution.id) throw new AppError('udid_challenge_invalid');
    const location = `${this.#options.baseUrl}/d/${release.distribution.slug}?enrollment=${enrollment.id}`;
    if (enrollment.udid !== null) {
      if (enrollment.udid === attributes.udid) return location;
      throw new AppError('udid_challenge_invalid', 'This enrollment was already used by another device; download the profile again.');
    }
    if (Date.parse(enrollment.expires_at) <= Date.now()) throw new AppError('udid_challenge_invalid', 'The profile was downloaded too long ago; download it again.');
    const started = await this.#options.db.transaction(async (tx) => {
      const row = await tx.repos.superSignature.updateEnrollment(
        enrollment.id,
        { udid: attributes.udid, product: attributes.product, osVersion: attributes.version, deviceName: attributes.deviceName, state: 'queued' },
        ['awaiting_device'],
      );
      if (row) await this.#options.queue.enqueue('super_device', { enrollmentId: enrollment.id }, { transaction: tx.kysely, jobKey: `super_device:${enrollment.id}`, maxAttempts: 3 });
      return row;
    });
    if (!started) {
      // A concurrent POST of the same answer won the compare-and-set.
      const now = await repo.findEnrollment(enrollment.id);
      if (now?.udid !== attributes.udid) throw new AppError('udid_challenge_invalid');
    }
    return location;
  }

  /** The enrollment named in the page URL, if it belongs to this release. */
  async status(release: Release, enrollmentId: string | undefined): Promise<EnrollmentStatus | null> {
    if (enrollmentId === undefined || !ENROLLMENT_ID.test(enrollmentId)) return null;
    const repo = this.#options.db.repos.superSignature;
    const enrollment = await repo.findEnrollment(enrollmentId);
    if (!enrollment || enrollment.distribution_id !== release.distribution.id) return null;
    const build = enrollment.build_id ? await repo.findBuild(enrollment.build_id) : null;
    if (enrollment.state === 'ready' && build !== null && (await repo.findProfile(build.profile_id))?.retired_at) {
      return this.#remake(enrollment);
    }
    return { enrollment, build };
  }

  /**
   * The device's build was signed with a distribution certificate its developer account has
   * since replaced (certificate rotation): this request queues a new one, made like the first
   * (new profiles naming the new certificate); the page shows its progress meanwhile.
   */
  async #remake(enrollment: EnrollmentRow): Promise<EnrollmentStatus> {
    const requeued = await this.#options.db.transaction(async (tx) => {
      const row = await tx.repos.superSignature.updateEnrollment(enrollment.id, { state: 'queued', buildId: null, error: null }, ['ready']);
      if (row) await this.#options.queue.enqueue('super_device', { enrollmentId: enrollment.id }, { transaction: tx.kysely, jobKey: `super_device:${enrollment.id}:${enrollment.build_id}`, maxAttempts: 3 });
      return row;
    });
    // Another request requeued it first: show where it is now.
    const now = requeued ?? (await this.#options.db.repos.superSignature.findEnrollment(enrollment.id)) ?? enrollment;
    return { enrollment: now, build: now.build_id ? await this.#options.db.repos.superSignature.findBuild(now.build_id) : null };
  }

  /**
   * The release as one device sees it: the task's artifact replaced by the device's build, and
   * how to read that build (an incremental build is its shared blob followed by its part). A
   * super release without a ready build for this enrollment has nothing to install yet.
   */
  async personalize(release: Release, enrollmentId: string | undefined): Promise<{ release: Release; open: ArtifactOpener | null }> {
    if (!this.isSuper(release)) return { release, open: null };
    const status = await this.status(release, enrollmentId);
    const build = status?.build;
    if (!build || build.state !== 'ready' || build.artifact_blob_key === null || build.artifact_size === null) {
      throw new AppError('artifact_not_ready', 'This device has no build yet: open the install page on the device and register it first.');
    }
    const personal: Release = { ...release, task: { ...release.task, artifact_blob_key: build.artifact_blob_key, artifact_size: build.artifact_size, artifact_sha256: build.artifact_sha256 } };
    const { blobs } = this.#options;
    const partKey = build.artifact_blob_key;
    const shared = build.shared_blob_key === null || build.shared_size === null ? null : { key: build.shared_blob_key, size: build.shared_size };
    if (shared === null) return { release: personal, open: (range) => blobs.get(partKey, range ?? {}) };
    const total = build.artifact_size;
    return {
      release: personal,
      open: async (range) => {
        const start = range?.start ?? 0;
        const end = range?.end ?? total - 1;
        const pieces: Array<() => Promise<Readable>> = [];
        if (start < shared.size) pieces.push(() => blobs.get(shared.key, { start, end: Math.min(end, shared.size - 1) }));
        if (end >= shared.size) pieces.push(() => blobs.get(partKey, { start: Math.max(0, start - shared.size), end: end - shared.size }));
        return Readable.from(
          (async function* () {
            for (const piece of pieces) yield* await piece();
          })(),
          { objectMode: false },
        );
      },
    };
  }
}

/** Reads a device build, whole or an inclusive byte range. */
export type ArtifactOpener = (range: { start: number; end: number } | null) => Promise<Readable>;
