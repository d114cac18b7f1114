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

/** `{ skip }` option for node:test: skips with a reason when the shared corpus is absent. */
export function needsSharedFixtures(): { skip: string | false } {
  if (existsSync(sharedDir)) return { skip: false };
  noticeOnce();
  return { skip: 'shared fixtures folder (../shared/fixtures) not present' };
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
