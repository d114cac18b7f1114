// Range validation shared by the stores, so both answer a bad range with the same error.
import { AppError } from '../errors.ts';
import type { ReadOptions } from './blob-store.ts';

/** Inclusive [start, end] within a blob of `size` bytes; `end` past the blob is clamped as in RFC 9110 §14.1.2. */
export function resolveRange(size: number, options: ReadOptions): { start: number; end: number } | null {
  if (options.start === undefined && options.end === undefined) return null;
  const start = options.start ?? 0;
  const end = Math.min(options.end ?? size - 1, size - 1);
  if (!Number.isSafeInteger(start) || !Number.isSafeInteger(end) || start < 0 || start >= size || end < start) {
    throw new AppError('range_not_satisfiable', `bytes ${start}-${options.end ?? ''} are outside the ${size}-byte file`, {
      details: { size },
    });
  }
  return { start, end };
}
