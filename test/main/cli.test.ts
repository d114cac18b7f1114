// The `signet` entry point loads only the command module being run: every command still works
// and documents its options, and the top-level help loads no command module at all.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { describe, it } from 'node:test';
import { repoRoot } from '../support/fixtures.ts';

// A module hook that reports, at exit, which files under src/main/commands/ were loaded.
const tracer = `data:text/javascript,${encodeURIComponent(`
import { registerHooks } from 'node:module';
const loaded = new Set();
registerHooks({ resolve(specifier, context, next) {
  const result = next(specifier, context);
  const match = /\\/src\\/main\\/commands\\/([^/]+)\\.ts$/.exec(result.url);
  if (match) loaded.add(match[1]);
  return result;
} });
process.on('exit', () => process.stderr.write('LOADED ' + [...loaded].sort().join(',') + '\\n'));
`)}`;

function signet(...args: string[]): { status: number | null; stdout: string; stderr: string; loaded: string[] } {
  const result = spawnSync(process.execPath, ['--import', tracer, path.join(repoRoot, 'src/main/cli.ts'), ...args], { cwd: repoRoot, encoding: 'utf8' });
  const line = /^LOADED (.*)$/m.exec(result.stderr)?.[1] ?? '';
  return { status: result.status, stdout: result.stdout, stderr: result.stderr, loaded: line === '' ? [] : line.split(',') };
}

describe('signet command line', () => {
  it('lists every command group without importing any of them', () => {
    const help = signet('--help');
    assert.equal(help.status, 0, help.stderr);
    for (const name of ['codesign', 'inspect', 'keys', 'serve', 'sign', 'verify', 'worker']) assert.match(help.stdout, new RegExp(`^  ${name} `, 'm'));
    assert.deepEqual(help.loaded, []);
  });

  it('imports only the command that runs, with its full options', () => {
    const sign = signet('sign', '--help');
    assert.equal(sign.status, 0, sign.stderr);
    assert.match(sign.stdout, /--keystore <file>/);
    assert.ok(sign.loaded.includes('sign'));
    assert.ok(!sign.loaded.includes('serve') && !sign.loaded.includes('keys'), `loaded: ${sign.loaded.join(', ')}`);
    const keys = signet('help', 'keys');
    assert.equal(keys.status, 0, keys.stderr);
    assert.match(keys.stdout, /create/);
    assert.match(keys.stdout, /revoke/);
    assert.deepEqual(keys.loaded, ['keys']);
  });

  it('runs a command through the lazy path and keeps its exit status', () => {
    // verify of a file that does not exist: the command's own error, one line, exit 1.
    const verify = signet('verify', path.join(repoRoot, 'test-output', 'no-such-file.apk'));
    assert.equal(verify.status, 1);
    assert.match(verify.stderr, /^signet: .*no-such-file\.apk.*\(invalid_package\)$/m);
  });

  it('rejects an unknown command with the list of commands', () => {
    const unknown = signet('sing');
    assert.equal(unknown.status, 1);
    assert.match(unknown.stderr, /unknown command 'sing'/);
    assert.deepEqual(unknown.loaded, []);
  });
});
