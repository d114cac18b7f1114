// DataSink implementations (src/signing/data-sink.ts), used by the zip writer.
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { FileSink, MemorySink } from '../../../src/signing/data-sink.ts';
import { testOutputDir } from '../../support/fixtures.ts';

test('FileSink coalesces small writes, passes large ones through, and patches in place', async () => {
  const dir = testOutputDir('zip', 'sink');
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, 'out.bin');
  const sink = await FileSink.create(file, { bufferSize: 16 });
  const memory = new MemorySink();
  const writes = [Buffer.from('abc'), Buffer.alloc(40, 1), Buffer.from('defghijklmnop'), Buffer.from('q')];
  for (const data of writes) {
    await sink.write(data);
    await memory.write(data);
  }
  assert.equal(sink.position, 57);
  await sink.writeAt(1, Buffer.from('ZZ'));
  await memory.writeAt(1, Buffer.from('ZZ'));
  await sink.writeAt(50, Buffer.from('YY')); // still in the pending buffer before writeAt flushes
  await memory.writeAt(50, Buffer.from('YY'));
  await sink.write(Buffer.from('end'));
  await memory.write(Buffer.from('end'));
  await sink.close();
  await sink.close();
  assert.ok(readFileSync(file).equals(memory.toBuffer()));
  assert.equal(memory.toBuffer().subarray(0, 3).toString(), 'aZZ');
});

test('FileSink writes a write of half its buffer or more at once, without copying it', async () => {
  const dir = testOutputDir('zip', 'sink-large');
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, 'out.bin');
  const sink = await FileSink.create(file, { bufferSize: 16 });
  await sink.write(Buffer.from('ab'));
  await sink.write(Buffer.alloc(8, 'c'));
  // Both are in the file before close: the small one flushed ahead of the large one.
  assert.equal(readFileSync(file).toString(), 'abcccccccc');
  await sink.write(Buffer.alloc(16, 'd'));
  assert.equal(readFileSync(file).length, 26);
  await sink.close();
});

test('overwrites must stay inside what was written', async () => {
  const memory = new MemorySink();
  await memory.write(Buffer.from('1234'));
  await assert.rejects(memory.writeAt(3, Buffer.from('ab')), RangeError);
  await assert.rejects(memory.writeAt(-1, Buffer.from('a')), RangeError);
});

test("MemorySink does not alias the caller's buffers", async () => {
  const memory = new MemorySink();
  const data = Buffer.from('abc');
  await memory.write(data);
  data.write('x');
  assert.equal(memory.toBuffer().toString(), 'abc');
});
