// For DiskBlobStore.put: a pass-through that asks the kernel to write the file back while it is
// still arriving. put() opens its temp file
// with `flush: true` (fsync before close) so a crash cannot leave an empty blob; without early
// writeback all of a 2 GiB upload is still dirty in the page cache when the last byte arrives
// (Linux only starts background writeback at dirty_background_ratio, 10% of RAM), and that final
// fsync stalls the response for seconds. Syncing every `everyBytes` overlaps the disk writes with
// the network transfer, leaving the final fsync only the tail. Usage:
//   const sink = createWriteStream(temp, { flush: true });
//   await pipeline(body, meter.stream, earlyWriteback(sink), sink);
import { fdatasync } from 'node:fs';
import type { WriteStream } from 'node:fs';
import { Transform } from 'node:stream';

export function earlyWriteback(sink: WriteStream, everyBytes = 64 * 1024 * 1024): Transform {
  // fs.WriteStream has had `fd` (set once opened) forever; @types/node does not declare it.
  const fdOf = (): unknown => (sink as WriteStream & { fd?: number | null }).fd;
  let pending = 0;
  let inFlight = false;
  return new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      pending += chunk.length;
      // One sync at a time, never awaited: it must not slow the stream, only start the disk early.
      const fd = fdOf();
      if (pending >= everyBytes && !inFlight && typeof fd === 'number') {
        pending = 0;
        inFlight = true;
        fdatasync(fd, () => {
          inFlight = false; // errors (e.g. EBADF after an abort closed the file) change nothing here
        });
      }
      callback(null, chunk);
    },
  });
}
