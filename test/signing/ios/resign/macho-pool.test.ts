// The Mach-O signing pool: a job signed on a worker thread (input and output buffers transferred,
// not copied) gives exactly the bytes of the same job signed in-process; a job that brings its
// input's CRC-32 gets the signed file's derived from it; the OrderedGate hands out slots in
// ticket order whatever order they are asked in.
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { crc32 } from 'node:zlib';
import { plistDict, plistString } from '../../../../src/signing/plist/index.ts';
import { resultChunks, type MachOJob } from '../../../../src/signing/ios/resign/macho-job.ts';
import { inProcessPool, workerPool } from '../../../../src/signing/ios/resign/macho-pool.ts';
import { OrderedGate } from '../../../../src/signing/ios/resign/ordered-gate.ts';
import { verifyMachO } from '../../../../src/signing/ios/codesign/index.ts';
import { buildFatFile, buildThin, needsToolchain } from '../../../support/macho-build.ts';
import { testPki } from '../../../support/pki.ts';

describe('Mach-O signing pool', needsToolchain(), () => {
  it('signs identically on a worker thread and in-process, transferring the buffers', async () => {
    const exe = buildThin({ arch: 'arm64', kind: 'executable', minOS: '14.0' });
    const job = (bytes: Buffer): MachOJob => ({
      bytes,
      name: 'Payload/A.app/A',
      identifier: 'com.example.pool',
      isMainExecutable: true,
      entitlements: plistDict([['application-identifier', plistString(`${testPki().teamId}.com.example.pool`)]]),
      infoPlist: { sha1: Buffer.alloc(20, 1), sha256: Buffer.alloc(32, 2) },
      codeResources: { sha1: Buffer.alloc(20, 3), sha256: Buffer.alloc(32, 4) },
      identity: testPki().leaf,
      signingTime: new Date('2026-01-01T00:00:00Z'),
    });
    const local = inProcessPool();
    const signed = await local.sign(job(Buffer.from(exe)));
    const expected = Buffer.concat(resultChunks(signed));
    // The whole-file digests (taken off-thread in-process, in the worker there) are the signed file's.
    const digests = { sha1: createHash('sha1').update(expected).digest(), sha256: createHash('sha256').update(expected).digest() };
    assert.deepEqual({ sha1: Buffer.from(signed.sha1), sha256: Buffer.from(signed.sha256) }, digests);
    const pool = workerPool(2);
    try {
      const input = Buffer.from(Uint8Array.prototype.slice.call(exe).buffer);
      const [a, b] = await Promise.all([pool.sign(job(input)), pool.sign(job(Buffer.from(Uint8Array.prototype.slice.call(exe).buffer)))]);
      assert.equal(input.buffer.byteLength, 0, 'the input was transferred, not copied');
      assert.ok(Buffer.concat(resultChunks(a)).equals(expected));
      assert.ok(Buffer.concat(resultChunks(b)).equals(expected));
      assert.deepEqual({ sha1: Buffer.from(a.sha1), sha256: Buffer.from(a.sha256) }, digests);
      assert.equal(a.identifier, 'com.example.pool');
      const report = verifyMachO(expected, {});
      assert.equal(report.slices[0]!.identifier, 'com.example.pool');
    } finally {
      await pool.close();
    }
  });

  it("derives the signed file's CRC-32 from the input's for a thin file, and computes it for a fat one", async () => {
    const job = (bytes: Buffer, crc: number | undefined): MachOJob => ({
      bytes,
      name: 'Payload/A.app/Frameworks/F.framework/F',
      identifier: undefined,
      isMainExecutable: false,
      entitlements: undefined,
      infoPlist: undefined,
      codeResources: undefined,
      identity: testPki().leaf,
      signingTime: new Date('2026-01-01T00:00:00Z'),
      ...(crc === undefined ? {} : { crc32: crc }),
    });
    const pool = inProcessPool();
    // 256 KiB of code in a __blob section, so that the kept run is large beside the header and signature.
    const blobFile = path.join(mkdtempSync(path.join(tmpdir(), 'signet-crc-')), 'blob');
    writeFileSync(blobFile, randomBytes(256 * 1024));
    const thin = buildThin({ arch: 'arm64', kind: 'dylib', minOS: '14.0', blobFile, linkerSigned: true });
    const fat = buildFatFile([thin, buildThin({ arch: 'x86_64', kind: 'dylib', minOS: '14.0', blobFile })]);
    rmSync(path.dirname(blobFile), { recursive: true });
    for (const file of [thin, fat]) {
      const plain = await pool.sign(job(Buffer.from(file), undefined));
      const derived = await pool.sign(job(Buffer.from(file), crc32(file)));
      const signed = Buffer.concat(resultChunks(derived));
      assert.ok(signed.equals(Buffer.concat(resultChunks(plain))));
      assert.equal(derived.crc32, crc32(signed));
      assert.equal(plain.crc32, crc32(signed));
      // A wrong input CRC-32 shows which was used: derived for the thin file's kept code, whose
      // bytes are not read again; the fat file's, computed from its bytes, is still right.
      const misled = await pool.sign(job(Buffer.from(file), (crc32(file) ^ 1) >>> 0));
      if (file === thin) assert.notEqual(misled.crc32, crc32(signed));
      else assert.equal(misled.crc32, crc32(signed));
    }
  });

  it('OrderedGate grants slots in ticket order and never more than its limit', async () => {
    const gate = new OrderedGate(2);
    const granted: number[] = [];
    const waits = [3, 1, 0, 2].map((ticket) => gate.acquire(ticket).then(() => granted.push(ticket)));
    // (Reactions may run in either order within one turn; which tickets hold a slot is what counts.)
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(granted.toSorted(), [0, 1]);
    gate.release();
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(granted.toSorted(), [0, 1, 2]);
    gate.release();
    await Promise.all(waits);
    assert.deepEqual(granted.toSorted(), [0, 1, 2, 3]);
  });
});
