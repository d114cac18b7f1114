// Third-party test material lives in ../shared/fixtures beside the checkout and is read from
// there, never copied into the repo. Tests that need it are skipped with a printed notice when the
// folder is absent (CI always has it).
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const sharedDir = path.resolve(repoRoot, '..', 'shared', 'fixtures');

/** Absolute path of a file under ../shared/fixtures, or null (with a notice) when the corpus is absent. */
export function sharedFixture(relative: string): string | null {
  if (!existsSync(sharedDir)) {
    noticeOnce();
    return null;
  }
  return path.join(sharedDir, relative);
}

/**
 * `{ skip }` option for node:test: skips with a reason when the shared corpus is absent, or when
 * the named part of it is (a group added to the corpus later than the checkout's machine got it).
 */
export function needsSharedFixtures(part?: string): { skip: string | false } {
  if (!existsSync(sharedDir)) {
    noticeOnce();
    return { skip: 'shared fixtures folder (../shared/fixtures) not present' };
  }
  if (part !== undefined && !existsSync(path.join(sharedDir, part))) {
    const reason = `shared fixture group ../shared/fixtures/${part} not present`;
    console.log(`NOTICE: ${reason}; the tests that read it are skipped.`);
    return { skip: reason };
  }
  return { skip: false };
}

let noticed = false;
function noticeOnce(): void {
  if (noticed) return;
  noticed = true;
  console.log(`NOTICE: ${sharedDir} is absent; tests that read the third-party fixture corpus are skipped.`);
}

/** Per-test output folder (screenshots, generated files) under test-output/, ignored by git. */
export function testOutputDir(...parts: string[]): string {
  return path.join(repoRoot, 'test-output', ...parts);
}
