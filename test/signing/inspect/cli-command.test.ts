// `signet inspect FILE [--json]` (src/main/commands/inspect.ts), run as a child process with
// only this command registered, so the test does not depend on the server's modules.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, it } from 'node:test';
import { needsSharedFixtures, repoRoot, sharedFixture, testOutputDir } from '../../support/fixtures.ts';

const commandUrl = pathToFileURL(path.join(repoRoot, 'src/main/commands/inspect.ts')).href;
// Written under test-output/ (inside the repo), so 'commander' resolves from node_modules.
const script = `import { Command } from 'commander';
const { register } = await import(${JSON.stringify(commandUrl)});
const program = new Command('signet').exitOverride();
register(program);
try { await program.parseAsync(process.argv); } catch (e) { process.stderr.write(e.code + ' ' + (e.details?.reason ?? '') + ': ' + e.message + '\\n'); process.exitCode = 1; }`;

const scriptFile = path.join(testOutputDir('inspect-cli'), 'signet-inspect.mjs');

function signetInspect(...args: string[]): { status: number | null; stdout: string; stderr: string } {
  mkdirSync(path.dirname(scriptFile), { recursive: true });
  writeFileSync(scriptFile, script);
  // A script file (not `node -e`) so argv has the usual [node, script, ...args] shape; the child
  // must not inherit the test runner's NODE_TEST_CONTEXT.
  const env = { ...process.env, NODE_TEST_CONTEXT: undefined };
  const run = spawnSync(process.execPath, [scriptFile, 'inspect', ...args], { cwd: repoRoot, encoding: 'utf8', env, timeout: 30_000 });
  return { status: run.status, stdout: run.stdout, stderr: run.stderr };
}

describe('signet inspect', needsSharedFixtures(), () => {
  it('prints an APK in words and as JSON', () => {
    const apk = sharedFixture('android/apksig/golden/original.apk')!;
    const text = signetInspect(apk);
    assert.equal(text.status, 0, text.stderr);
    assert.match(text.stdout, /^Platform\s+Android$/m);
    assert.match(text.stdout, /^Package\s+android\.appsecurity\.cts\.tinyapp$/m);
    assert.match(text.stdout, /^Label\s+Tiny App for CTS$/m);
    assert.match(text.stdout, /^Version\s+1\.0 \(versionCode 10\)$/m);
    assert.match(text.stdout, /^Min SDK\s+23$/m);
    assert.match(text.stdout, /^Icon\s+none — the manifest declares no application or launcher icon$/m);
    const json = signetInspect(apk, '--json');
    assert.equal(json.status, 0, json.stderr);
    const parsed = JSON.parse(json.stdout) as Record<string, unknown>;
    assert.deepEqual(
      [parsed.platform, parsed.bundle_id, parsed.name, parsed.version, parsed.build, parsed.min_sdk, parsed.target_sdk, parsed.icon],
      ['android', 'android.appsecurity.cts.tinyapp', 'Tiny App for CTS', '1.0', '10', 23, 23, null],
    );
  });

  it('prints an .ipa and refuses a non-app with its reason', () => {
    const text = signetInspect(sharedFixture('ios/fastlane/ipas/very-capable-app.ipa')!);
    assert.equal(text.status, 0, text.stderr);
    assert.match(text.stdout, /^Bundle ID\s+org\.fastlane\.very-capable-app$/m);
    assert.match(text.stdout, /^Minimum iOS\s+11\.2$/m);
    const refused = signetInspect(sharedFixture('ios/isign/NotAnApp.ipa')!, '--json');
    assert.equal(refused.status, 1);
    assert.equal(refused.stdout, '');
    assert.match(refused.stderr, /^invalid_package no_app: /);
    const missing = signetInspect(path.join(repoRoot, 'test-output', 'no-such-file.apk'));
    assert.equal(missing.status, 1);
    assert.match(missing.stderr, /cannot open .*no-such-file\.apk/);
  });
});
