// The arrows of GUIDE.md, checked on the real import graph of src/: the engines import nothing
// outside src/signing, folders never import each other in a circle, no folder imports one from a
// layer above it, and no file anywhere in src/ sits in an import circle.
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { cycles, readImportGraph, violations, type ImportEdge } from './import-graph.ts';

const SRC = fileURLToPath(new URL('../../src/', import.meta.url));
const edges = readImportGraph(SRC);
const exists = (key: string) => existsSync(path.join(SRC, key));
const listSources = (root: string): string[] =>
  readdirSync(root, { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.ts'))
    .map((file) => file.split(path.sep).join('/'));

describe('import graph of src/', () => {
  it('reads the graph (known arrows are found, every target exists)', () => {
    const has = (from: string, to: string) => edges.some((e) => e.from === from && e.to === to);
    assert.ok(edges.length > 1000, `only ${edges.length} imports read`);
    assert.ok(has('main/api.ts', 'http/app.ts'), 'static import');
    assert.ok(has('queue/open-job-queue.ts', 'queue/graphile-job-queue.ts'), 'dynamic import()');
    assert.ok(has('services/signer-pool.ts', 'services/signer-thread.ts'), 'worker-thread module URL');
    assert.ok(has('signing/package/refuse.ts', 'signing/package/invalid-package.ts'), 'type-only import');
  });

  it('keeps the layers: signing imports only itself, no folder imports a layer above, no folder circles', () => {
    assert.deepEqual(violations(edges, exists), []);
  });

  it('keeps the two engines apart: nothing under signing/ios reaches signing/android, nor the reverse', () => {
    const reach = (prefix: string): Set<string> => {
      const seen = new Set(edges.filter((e) => e.from.startsWith(prefix)).map((e) => e.from));
      const queue = [...seen];
      while (queue.length > 0) {
        const file = queue.shift()!;
        for (const e of edges) if (e.from === file && !seen.has(e.to)) (seen.add(e.to), queue.push(e.to));
      }
      return seen;
    };
    assert.deepEqual([...reach('signing/ios/')].filter((f) => f.startsWith('signing/android/')), []);
    assert.deepEqual([...reach('signing/android/')].filter((f) => f.startsWith('signing/ios/')), []);
  });

  it('defines the platform union once (src/signing/platform.ts), everyone else imports it', () => {
    const defining = listSources(SRC).filter((file) => /(['"])(ios|android)\1\s*\|\s*(['"])(ios|android)\3/.test(readFileSync(path.join(SRC, file), 'utf8')));
    assert.deepEqual(defining, ['signing/platform.ts']);
  });

  it('has no import circle between files', () => {
    const files = new Set(edges.flatMap((e) => [e.from, e.to]));
    assert.deepEqual(cycles(files, edges.map((e) => [e.from, e.to] as const)), []);
  });

  it('catches each kind of violation (the rules can fail)', () => {
    const bad: ImportEdge[] = [
      { from: 'signing/zip/reader.ts', to: 'errors.ts' },
      { from: 'db/schema.ts', to: 'services/tasks.ts' },
      { from: 'services/tasks.ts', to: 'super-signature/device-flow.ts' },
      { from: 'super-signature/device-flow.ts', to: 'services/tasks.ts' },
      { from: 'http/app.ts', to: '../console/dist' },
    ];
    const found = violations(bad, () => true).join('\n');
    assert.match(found, /signing\/zip\/reader\.ts imports errors\.ts: src\/signing imports nothing outside itself/);
    assert.match(found, /db \(layer 3\) may not import services \(layer 2/);
    assert.match(found, /circle: services ⇄ super-signature/);
    assert.match(found, /http\/app\.ts reaches outside src\//);
    assert.deepEqual(cycles(['a', 'b', 'c'], [['a', 'b'], ['b', 'c'], ['c', 'a']]), [['a', 'b', 'c']]);
  });
});
