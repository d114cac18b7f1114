// The level-9 raw deflate must be Java's Deflater(9, nowrap) byte for byte (that is what makes
// apksigner-identical META-INF files possible) and must always inflate back to its input.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { inflateRawSync } from 'node:zlib';
import { zlibDeflateRawLevel9 } from '../../../src/signing/android/v1/zlib-deflate.ts';
import { testOutputDir } from '../../support/fixtures.ts';

function manifestLike(entries: number): Buffer {
  const lines: string[] = ['Manifest-Version: 1.0\r\n\r\n'];
  for (let i = 0; i < entries; i++) {
    lines.push(`Name: res/drawable-${['mdpi', 'hdpi', 'xhdpi'][i % 3]}/icon_${i}.png\r\nSHA-256-Digest: ${createHash('sha256').update(String(i)).digest('base64')}\r\n\r\n`);
  }
  return Buffer.from(lines.join(''));
}

const inputs: [string, Buffer][] = [
  ['empty', Buffer.alloc(0)],
  ['one byte', Buffer.from('x')],
  ['short text', Buffer.from('Signature-Version: 1.0\r\nCreated-By: 1.0 (Android)\r\n\r\n')],
  ['random 100 KiB (stored blocks)', randomBytes(100 * 1024)],
  ['repetitive 300 KiB', Buffer.from('abcabcabd'.repeat(34_000))],
  // > 64 KiB so the window slides, and > 16383 symbols so blocks are flushed mid-stream.
  ['large manifest (1.1 MB)', manifestLike(11_000)],
];

describe('zlibDeflateRawLevel9', () => {
  it('inflates back to its input', () => {
    for (const [name, data] of inputs) assert.ok(inflateRawSync(zlibDeflateRawLevel9(data)).equals(data), name);
  });

  const java = existsSync('/usr/bin/java') ? false : 'java is not installed';
  it('equals java.util.zip.Deflater(9, true) output', { skip: java }, () => {
    const dir = testOutputDir('signing', 'android', 'deflate');
    mkdirSync(dir, { recursive: true });
    const program = path.join(dir, 'Deflate.java');
    writeFileSync(program, `import java.nio.file.*; import java.util.zip.Deflater;
public class Deflate { public static void main(String[] a) throws Exception {
  for (int i = 0; i < a.length; i += 2) { byte[] in = Files.readAllBytes(Path.of(a[i])); Deflater d = new Deflater(9, true);
    d.setInput(in); d.finish(); java.io.ByteArrayOutputStream o = new java.io.ByteArrayOutputStream(); byte[] b = new byte[65536];
    while (!d.finished()) o.write(b, 0, d.deflate(b)); Files.write(Path.of(a[i + 1]), o.toByteArray()); } } }`);
    const args: string[] = [];
    inputs.forEach(([, data], i) => {
      writeFileSync(path.join(dir, `in${i}`), data);
      args.push(path.join(dir, `in${i}`), path.join(dir, `out${i}`));
    });
    execFileSync('java', [program, ...args], { timeout: 60_000 });
    inputs.forEach(([name, data], i) => {
      assert.ok(zlibDeflateRawLevel9(data).equals(readFileSync(path.join(dir, `out${i}`))), name);
    });
  });
});
