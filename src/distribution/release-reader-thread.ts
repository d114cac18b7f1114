// Runs inside a ReleaseReader thread: reads one signed package's facts (release-facts.ts) from a
// local file and returns them as plain data (class identities do not survive structured cloning).
import { errorCodeOf } from '../errors.ts';
import { FileSource } from '../signing/data-source.ts';
import { readReleaseFacts, type ReleaseFacts } from './release-facts.ts';

export type ReleaseReaderOutcome = { ok: true; facts: ReleaseFacts } | { ok: false; code: string | null; message: string };

export default async function read(path: string): Promise<ReleaseReaderOutcome> {
  try {
    const source = await FileSource.open(path);
    try {
      return { ok: true, facts: await readReleaseFacts(source) };
    } finally {
      await source.close();
    }
  } catch (error) {
    return { ok: false, code: errorCodeOf(error), message: error instanceof Error ? error.message : String(error) };
  }
}
