// Blob key layout and validation. Keys are built here and only here, so the layout is visible in
// one place and every store can rely on keys being safe path fragments.
import { AppError } from '../errors.ts';

/** The uploaded package behind a file_key. */
export function uploadBlobKey(fileKey: string): string {
  return assertBlobKey(`uploads/${fileKey}`);
}

/**
 * The signed artifact of one signing RUN of a task. Runs of one task can overlap (a lease expires
 * while the first run still finishes); with one key per task the losing run's upload could
 * replace the winner's artifact after the winner recorded its sha256. So each run writes its own
 * key, and a run that loses TaskRepository.finish deletes only its own.
 */
export function artifactBlobKey(taskId: string, runId: string, extension: 'ipa' | 'apk'): string {
  return assertBlobKey(`artifacts/${taskId}/${runId}/signed.${extension}`);
}

// Segments of letters, digits and `._-`, no empty, `.` or `..` segment, no leading `/`: such a key
// can neither escape the disk store's root nor mean different things to different S3 servers.
const SEGMENT = /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,127}$/;

/** Returns `key` if it is a valid blob key, else throws AppError `invalid_request`. */
export function assertBlobKey(key: string): string {
  const segments = key.split('/');
  const valid =
    key.length <= 512 && segments.length <= 8 && segments.every((s) => SEGMENT.test(s) && s !== '.' && s !== '..');
  if (!valid) throw new AppError('invalid_request', `invalid blob key "${key.slice(0, 80)}"`);
  return key;
}
