// The baseline for bench/upload.ts: the least an upload endpoint can do. node:http + busboy,
// the file part piped through SHA-256 into a file, answering {size, sha256}. No framework, no
// auth, no validation. Prints `BARE_URL <url>` once listening.
import { createHash } from 'node:crypto';
import { createWriteStream, mkdirSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import busboy from 'busboy';

const dir = process.argv[2] ?? '.';
mkdirSync(dir, { recursive: true });
let counter = 0;

const server = http.createServer((request, response) => {
  const parser = busboy({ headers: request.headers });
  parser.on('file', (_name, file) => {
    const target = path.join(dir, `upload-${(counter += 1)}.bin`);
    const hash = createHash('sha256');
    let size = 0;
    const tap = new Transform({
      transform(chunk: Buffer, _encoding, done) {
        hash.update(chunk);
        size += chunk.length;
        done(null, chunk);
      },
    });
    pipeline(file, tap, createWriteStream(target)).then(
      () => {
        response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ size, sha256: hash.digest('hex') }));
        rmSync(target, { force: true });
      },
      (error: Error) => response.writeHead(500).end(error.message),
    );
  });
  request.pipe(parser);
});
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`BARE_URL http://127.0.0.1:${(server.address() as AddressInfo).port}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
