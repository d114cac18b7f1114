// `signet serve` tells the person at the terminal where a phone can reach it: the listener's
// port on each non-loopback interface address, on stderr (stdout stays JSON log lines), and that
// install links need SIGNET_PUBLIC_URL set to such an address.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { networkInterfaces } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { describe, it } from 'node:test';
import { reachabilityNotice, reachableUrls } from '../../src/main/reachable-addresses.ts';
import { repoRoot } from '../support/fixtures.ts';
import { freshDataDir } from '../support/server.ts';

const INTERFACES = {
  lo: [{ address: '127.0.0.1', family: 'IPv4', internal: true }, { address: '::1', family: 'IPv6', internal: true }],
  wlan0: [{ address: '192.168.1.23', family: 'IPv4', internal: false }, { address: 'fe80::1c2b:3dff:fe4e:5f60', family: 'IPv6', internal: false }, { address: '2001:db8::23', family: 'IPv6', internal: false }],
  docker0: [{ address: '172.17.0.1', family: 'IPv4', internal: false }],
} as unknown as NodeJS.Dict<import('node:os').NetworkInterfaceInfo[]>;

describe('reachable addresses', () => {
  it('lists every non-loopback address for a listener on all interfaces', () => {
    assert.deepEqual(reachableUrls({ host: '0.0.0.0', port: 8080, tls: false }, INTERFACES), ['http://192.168.1.23:8080', 'http://172.17.0.1:8080']);
    assert.deepEqual(reachableUrls({ host: '::', port: 8443, tls: true }, INTERFACES), ['https://192.168.1.23:8443', 'https://172.17.0.1:8443', 'https://[2001:db8::23]:8443'], 'no link-local IPv6');
    assert.deepEqual(reachableUrls({ host: '192.168.1.23', port: 8080, tls: false }, INTERFACES), ['http://192.168.1.23:8080']);
    assert.deepEqual(reachableUrls({ host: '127.0.0.1', port: 8080, tls: false }, INTERFACES), []);
  });

  it('says when install links cannot work from a phone', () => {
    const local = reachabilityNotice({ host: '0.0.0.0', port: 8080, tls: false }, 'http://localhost:8080', ['http://192.168.1.23:8080']);
    assert.match(local, /^ {2}http:\/\/192\.168\.1\.23:8080$/m);
    assert.match(local, /set SIGNET_PUBLIC_URL to an address above/);
    const set = reachabilityNotice({ host: '0.0.0.0', port: 8443, tls: true }, 'https://192.168.1.23:8443', ['https://192.168.1.23:8443']);
    assert.ok(!set.includes('cannot open'));
    assert.match(reachabilityNotice({ host: '127.0.0.1', port: 8080, tls: false }, 'http://localhost:8080', []), /this machine only/);
  });

  it('signet serve prints them on stderr, not in the JSON log', async () => {
    const child = spawn(path.join(repoRoot, 'bin/signet'), ['serve'], {
      cwd: repoRoot,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', SIGNET_DATA_DIR: freshDataDir('serve-addresses'), SIGNET_PORT: '0', SIGNET_HOST: '0.0.0.0' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const stdout: string[] = [];
    const stderr: string[] = [];
    createInterface({ input: child.stdout }).on('line', (line) => stdout.push(line));
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    try {
      await new Promise<void>((resolve, reject) => {
        createInterface({ input: child.stderr }).on('line', (line) => {
          stderr.push(line);
          if (line.startsWith('Install links and QR codes use')) resolve();
        });
        exited.then(() => reject(new Error(`exited early: ${stderr.join('\n')}`)));
      });
      const port = /listening on port (\d+)/.exec(stderr.join('\n'))?.[1];
      assert.ok(port, stderr.join('\n'));
      const expected = Object.values(networkInterfaces()).flat().filter((i) => i && !i.internal && i.family === 'IPv4').map((i) => `  http://${i!.address}:${port}`);
      for (const line of expected) assert.ok(stderr.includes(line), `${line} in:\n${stderr.join('\n')}`);
      assert.ok(!stdout.some((line) => /listening on port|same network|Install links and QR codes/.test(line)), 'not on stdout, the JSON log stream');
    } finally {
      child.kill('SIGTERM');
      await exited;
    }
  });
});
