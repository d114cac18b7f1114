// "Every error code in the catalogue is produced by at least one test": each code must appear
// as a quoted string in some test file other than this one and the README table test (which
// restate the whole catalogue). A code nobody asserts is a code nobody knows still works.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { it } from 'node:test';
import { ERROR_CATALOGUE } from '../../src/errors.ts';
import { repoRoot } from '../support/fixtures.ts';

const SELF = new Set(['test/http/catalogue-coverage.test.ts']);

function testFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) return testFiles(full);
    return name.endsWith('.test.ts') ? [full] : [];
  });
}

it('has a test asserting every catalogue code', () => {
  const sources = testFiles(path.join(repoRoot, 'test'))
    .filter((file) => !SELF.has(path.relative(repoRoot, file)))
    .map((file) => readFileSync(file, 'utf8'))
    .join('\n');
  const missing = Object.keys(ERROR_CATALOGUE).filter((code) => !new RegExp(`['"\`]${code}['"\`]`).test(sources));
  assert.deepEqual(missing, [], `no test mentions: ${missing.join(', ')}`);
});
