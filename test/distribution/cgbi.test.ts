import assert from 'node:assert/strict';
import { test } from 'node:test';
import { PNG } from 'pngjs';
import { isCgbiPng, normalizePng, pngSize } from '../../src/distribution/cgbi.ts';
import { encodeCgbi } from '../support/cgbi.ts';

function gradient(width: number, height: number): Buffer {
  const rgba = Buffer.alloc(width * height * 4);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const i = (y * width + x) * 4;
      rgba[i] = (x * 7) & 0xff;
      rgba[i + 1] = (y * 11) & 0xff;
      rgba[i + 2] = (x * y) & 0xff;
      rgba[i + 3] = x % 13 === 0 ? 0 : x % 3 === 0 ? 128 : 255; // transparent, half and opaque pixels
    }
  }
  return rgba;
}

test('a CgBI icon becomes a PNG that a standard decoder reads, with the original colours', () => {
  const width = 60, height = 45;
  const rgba = gradient(width, height);
  const cgbi = encodeCgbi(width, height, rgba);
  assert.equal(isCgbiPng(cgbi), true);
  assert.throws(() => PNG.sync.read(cgbi), 'the crushed PNG itself is unreadable by standard decoders');

  const png = normalizePng(cgbi);
  assert.equal(isCgbiPng(png), false);
  assert.deepEqual(pngSize(png), { width, height });
  const decoded = PNG.sync.read(png);
  assert.equal(decoded.width, width);
  for (let i = 0; i < width * height; i++) {
    const a = rgba[i * 4 + 3]!;
    assert.equal(decoded.data[i * 4 + 3], a, `alpha of pixel ${i}`);
    if (a === 0) continue;
    // Premultiplication loses precision at low alpha: allow the rounding error it implies.
    const tolerance = Math.ceil(255 / a);
    for (let c = 0; c < 3; c++) {
      assert.ok(Math.abs(decoded.data[i * 4 + c]! - rgba[i * 4 + c]!) <= tolerance, `channel ${c} of pixel ${i}`);
    }
  }
});

test('a standard PNG passes through unchanged', () => {
  const png = new PNG({ width: 4, height: 4 });
  png.data.fill(200);
  const bytes = PNG.sync.write(png);
  assert.equal(normalizePng(bytes), bytes);
});

test('broken icons are refused with icon_invalid, never a crash', () => {
  const cgbi = encodeCgbi(8, 8, gradient(8, 8));
  const cases = [Buffer.from('not a png'), cgbi.subarray(0, 40), Buffer.concat([cgbi.subarray(0, 60), Buffer.alloc(20)])];
  for (let i = 0; i < 300; i++) {
    const copy = Buffer.from(cgbi);
    const at = 8 + ((i * 7919) % (copy.length - 8));
    copy[at] = copy[at]! ^ (1 + (i % 255));
    cases.push(copy);
  }
  for (const input of cases) {
    try {
      normalizePng(input);
    } catch (error) {
      assert.equal((error as { code?: string }).code, 'icon_invalid', String(error));
    }
  }
});
