// A DataSource read through a MessagePort: the bytes of the served source, errors passed back,
// pending reads failed on close.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { MessageChannel } from 'node:worker_threads';
import { BufferSource } from '../../src/signing/data-source.ts';
import { PortSource, serveSource } from '../../src/storage/source-port.ts';

it('reads the served source through the port, and reports its errors', async () => {
  const bytes = Buffer.from(Array.from({ length: 5000 }, (_, i) => i & 0xff));
  const { port1, port2 } = new MessageChannel();
  serveSource(new BufferSource(bytes), port1);
  const source = new PortSource(bytes.length, port2);
  try {
    const reads = await Promise.all([source.read(0, 10), source.read(4990, 10), source.read(1000, 3000)]);
    assert.deepEqual(reads, [bytes.subarray(0, 10), bytes.subarray(4990), bytes.subarray(1000, 4000)]);
    await assert.rejects(source.read(4999, 2), RangeError);
    // A source that fails: the error's message comes back.
    const failing = new MessageChannel();
    serveSource({ size: 10, read: async () => { throw new Error('S3 answered 503'); }, close: async () => {} }, failing.port1);
    const remote = new PortSource(10, failing.port2);
    await assert.rejects(remote.read(0, 1), /S3 answered 503/);
    failing.port1.close();
    await remote.close();
  } finally {
    port1.close();
    await source.close();
  }
});
