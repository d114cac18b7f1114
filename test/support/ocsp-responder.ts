// A real OCSP responder for tests: `openssl ocsp` serving an index file (the `openssl ca`
// database format) for the test intermediate, signing with a delegated responder certificate.
// The port is chosen free before the certificates that name it are issued. The process is killed
// by close() and, as a safety net, when the test process exits: tests must still call close() in
// an after/finally hook.
import { spawn, type ChildProcess } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { issueTestIdentity, testPki, type TestIdentity } from './pki.ts';

/** A TCP port nothing listens on right now (bound to 0, read, released). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

export interface IndexEntry {
  identity: TestIdentity;
  /** Revocation time; absent: valid. */
  revokedAt?: Date;
}

export interface TestOcspResponder {
  url: string;
  port: number;
  /** Issuer of the certificates this responder answers for (the test intermediate). */
  issuer: TestIdentity;
  /** Rewrites the index and restarts the responder on the same port (openssl reads it at start). */
  setIndex(entries: IndexEntry[]): Promise<void>;
  close(): Promise<void>;
}

const live = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of live) child.kill('SIGKILL');
});

function opensslDate(date: Date): string {
  return date.toISOString().replace(/[-:T]/g, '').slice(2, 14) + 'Z';
}

function indexLine({ identity, revokedAt }: IndexEntry): string {
  const cert = new X509Certificate(identity.certificate);
  const subject = '/' + cert.subject.split('\n').filter(Boolean).join('/');
  const expiry = opensslDate(new Date(cert.validTo));
  return [revokedAt ? 'R' : 'V', expiry, revokedAt ? `${opensslDate(revokedAt)},keyCompromise` : '', cert.serialNumber.toUpperCase(), 'unknown', subject].join('\t');
}

/** Starts a responder on a free port. `url` is what certificates' AIA should name. */
export async function startOcspResponder(options: { port?: number; nextUpdateMinutes?: number } = {}): Promise<TestOcspResponder> {
  const pki = testPki();
  const port = options.port ?? (await freePort());
  const url = `http://127.0.0.1:${port}`;
  const dir = mkdtempSync(path.join(tmpdir(), 'signet-ocsp-'));
  const far = new Date(Date.now() + 365 * 86400_000);
  const responder = issueTestIdentity('ocspResponder', { issuer: pki.intermediate, commonName: 'Signet Test OCSP Responder', notBefore: new Date(Date.now() - 86400_000), notAfter: far, extendedKeyUsage: '1.3.6.1.5.5.7.3.9' });
  const file = (name: string, data: string | Buffer) => {
    const full = path.join(dir, name);
    writeFileSync(full, data);
    return full;
  };
  const caFile = file('ca.pem', pki.intermediate.certificatePem);
  const rsigner = file('rsigner.pem', responder.certificatePem);
  const rkey = file('rsigner.key', responder.privateKeyPem);
  const index = path.join(dir, 'index.txt');
  writeFileSync(index, '');
  let child: ChildProcess | null = null;

  const start = async (): Promise<void> => {
    const args = ['ocsp', '-index', index, '-CA', caFile, '-rsigner', rsigner, '-rkey', rkey, '-port', String(port), '-nmin', String(options.nextUpdateMinutes ?? 60)];
    const proc = spawn('openssl', args, { stdio: ['ignore', 'pipe', 'pipe'] });
    live.add(proc);
    proc.once('exit', () => live.delete(proc));
    child = proc;
    proc.stdout!.on('data', (c: Buffer) => process.env.OCSP_DEBUG && process.stderr.write(c));
    proc.stderr!.on('data', (c: Buffer) => process.env.OCSP_DEBUG && process.stderr.write(c));
    // Ready once it says so (a probing connection would hold the single-threaded responder).
    let said = '';
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`openssl ocsp did not start listening: ${said}`)), 10_000);
      const listen = (chunk: Buffer) => {
        said += chunk.toString();
        if (/waiting for OCSP client connections/.test(said)) {
          clearTimeout(timer);
          resolve();
        }
      };
      proc.stdout!.on('data', listen);
      proc.stderr!.on('data', listen);
      proc.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`openssl ocsp exited with ${code}: ${said}`));
      });
    });
  };
  const stop = async (): Promise<void> => {
    const proc = child;
    child = null;
    if (proc === null || proc.exitCode !== null || proc.signalCode !== null) return;
    const exited = new Promise((resolve) => proc.once('exit', resolve));
    proc.kill('SIGKILL');
    await exited;
  };

  try {
    await start();
  } catch (error) {
    await stop();
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  return {
    url,
    port,
    issuer: pki.intermediate,
    async setIndex(entries) {
      writeFileSync(index, entries.map(indexLine).join('\n') + (entries.length > 0 ? '\n' : ''));
      await stop();
      await start();
    },
    async close() {
      await stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
