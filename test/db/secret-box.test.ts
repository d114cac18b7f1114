import assert from 'node:assert/strict';
import { chmod, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import { loadMasterKey, parseMasterKey, SecretBox } from '../../src/db/secret-box.ts';
import { ConfigError } from '../../src/config.ts';
import { AppError } from '../../src/errors.ts';

const isCode = (code: string) => (error: unknown) => error instanceof AppError && error.code === code;

describe('SecretBox', () => {
  const box = new SecretBox(Buffer.alloc(32, 7));

  test('seals with a fresh nonce each time and opens under the same context', () => {
    const a = box.seal('private key', 'ctx');
    const b = box.seal('private key', 'ctx');
    assert.notEqual(a, b);
    assert.equal(box.openString(a, 'ctx'), 'private key');
    assert.deepEqual(box.open(box.seal(Buffer.from([0, 255, 1]), 'bin'), 'bin'), Buffer.from([0, 255, 1]));
    assert.equal(box.openString(box.seal('', 'empty'), 'empty'), '');
  });

  test('refuses another context, another key, tampering and garbage', () => {
    const sealed = box.seal('secret', 'certificates.password:crt_1');
    assert.throws(() => box.open(sealed, 'certificates.password:crt_2'), isCode('internal_error'));
    assert.throws(() => new SecretBox(Buffer.alloc(32, 8)).open(sealed, 'certificates.password:crt_1'), isCode('internal_error'));
    const raw = Buffer.from(sealed, 'base64');
    raw[raw.length - 1]! ^= 1;
    assert.throws(() => box.open(raw.toString('base64'), 'certificates.password:crt_1'), isCode('internal_error'));
    assert.throws(() => box.open('AAAA', 'x'), isCode('internal_error'));
    assert.throws(() => new SecretBox(Buffer.alloc(16)), isCode('internal_error'));
  });
});

describe('master key', () => {
  const dirs: string[] = [];
  const tempDir = async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'signet-key-'));
    dirs.push(dir);
    return dir;
  };
  after(() => Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true }))));

  test('SIGNET_MASTER_KEY accepts 32 bytes as hex or base64 and nothing else', () => {
    assert.deepEqual(parseMasterKey('ab'.repeat(32)), Buffer.alloc(32, 0xab));
    assert.deepEqual(parseMasterKey(Buffer.alloc(32, 3).toString('base64')), Buffer.alloc(32, 3));
    assert.deepEqual(parseMasterKey(Buffer.alloc(32, 0xfb).toString('base64url')), Buffer.alloc(32, 0xfb));
    for (const bad of ['', 'ab'.repeat(31), Buffer.alloc(16).toString('base64'), 'not a key!']) {
      assert.throws(() => parseMasterKey(bad), ConfigError, bad);
    }
  });

  test('without SIGNET_MASTER_KEY a 0600 key file is created once and reused', async () => {
    const dataDir = path.join(await tempDir(), 'nested', 'data');
    const [first, second] = await Promise.all([loadMasterKey({ masterKey: null, dataDir }), loadMasterKey({ masterKey: null, dataDir })]);
    assert.deepEqual(first, second, 'concurrent first starts agree on one key');
    assert.equal((await stat(path.join(dataDir, 'master.key'))).mode & 0o777, 0o600);
    assert.deepEqual(await loadMasterKey({ masterKey: null, dataDir }), first);
    assert.equal(first.length, 32);
  });

  test('an existing key file readable by others is refused', async () => {
    const dataDir = await tempDir();
    const file = path.join(dataDir, 'master.key');
    await writeFile(file, Buffer.alloc(32, 1).toString('base64'), { mode: 0o644 });
    await chmod(file, 0o644);
    await assert.rejects(loadMasterKey({ masterKey: null, dataDir }), /chmod 600/);
    await chmod(file, 0o600);
    assert.deepEqual(await loadMasterKey({ masterKey: null, dataDir }), Buffer.alloc(32, 1));
    await writeFile(file, 'garbage');
    await assert.rejects(loadMasterKey({ masterKey: null, dataDir }), /valid 32-byte key/);
    assert.equal((await readFile(file, 'utf8')), 'garbage', 'a bad key file is never overwritten');
  });
});
