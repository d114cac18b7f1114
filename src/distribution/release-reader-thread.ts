// Runs inside a ReleaseReader thread: reads one signed package's facts (release-facts.ts) through
// a port to the caller's DataSource and returns them as plain data (class identities do not
// survive structured cloning).
import { errorCodeOf } from '../errors.ts';
import type { MessagePort } from 'node:worker_threads';
import { PortSource } from '../storage/source-port.ts';
import { readReleaseFacts, type ReleaseFacts } from './release-facts.ts';

export type ReleaseReaderOutcome = { ok: true; facts: ReleaseFacts } | { ok: false; code: string | null; message: string };

export default async function read(task: { size: number; port: MessagePort }): Promise<ReleaseReaderOutcome> {
  try {
    const source = new PortSource(task.size, task.port);
    try {
      return { ok: true, facts: await readReleaseFacts(source) };
    } finally {
      await source.close();
    }
  } catch (error) {
    return { ok: false, code: errorCodeOf(error), message: error instanceof Error ? error.message : String(error) };
  }
}
