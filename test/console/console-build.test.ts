// The console's build and how the server serves it: the first page's JavaScript and CSS stay
// under 250 KB gzipped, the committed API types match the server's OpenAPI document, the
// server's list of console pages matches the router's, and serving the console shadows nothing
// (API, install links, docs and health checks keep answering as before).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { gzipSync } from 'node:zlib';
import { CONSOLE_PAGES } from '../../src/http/console-static.ts';
import { generateSchema, SCHEMA_FILE } from '../../scripts/console-api.ts';
import { repoRoot, testOutputDir } from '../support/fixtures.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

const FIRST_PAGE_BUDGET = 250 * 1024;

interface ManifestChunk {
  file: string;
  imports?: string[];
  css?: string[];
  isEntry?: boolean;
}

/** Builds the current sources into test-output (the served console/dist may be older). */
function build(): { dir: string; manifest: Record<string, ManifestChunk> } {
  const dir = testOutputDir('console-build');
  const vite = path.join(repoRoot, 'node_modules', 'vite', 'bin', 'vite.js');
  const result = spawnSync(process.execPath, [vite, 'build', '--outDir', dir, '--emptyOutDir', '--logLevel', 'error'], { cwd: path.join(repoRoot, 'console'), encoding: 'utf8' });
  assert.equal(result.status, 0, result.stderr);
  return { dir, manifest: JSON.parse(readFileSync(path.join(dir, '.vite', 'manifest.json'), 'utf8')) };
}

/** Every file a chunk loads before it runs: itself, its static imports and their CSS. */
function closure(manifest: Record<string, ManifestChunk>, keys: string[]): Set<string> {
  const files = new Set<string>();
  const seen = new Set<string>();
  const visit = (key: string) => {
    if (seen.has(key)) return;
    seen.add(key);
    const chunk = manifest[key];
    assert.ok(chunk, `manifest has ${key}`);
    files.add(chunk.file);
    for (const css of chunk.css ?? []) files.add(css);
    for (const imported of chunk.imports ?? []) visit(imported);
  };
  keys.forEach(visit);
  return files;
}

it('keeps the first page (sign-in) under 250 KB of gzipped JavaScript and CSS', () => {
  const { dir, manifest } = build();
  const files = closure(manifest, ['index.html', 'src/pages/SignInPage.vue']);
  const sizes = [...files].map((file) => ({ file, gzip: gzipSync(readFileSync(path.join(dir, file)), { level: 9 }).length }));
  const total = sizes.reduce((sum, s) => sum + s.gzip, 0);
  console.log(`console first page: ${(total / 1024).toFixed(1)} KB gzipped in ${files.size} files (budget ${FIRST_PAGE_BUDGET / 1024} KB)`);
  assert.ok(total < FIRST_PAGE_BUDGET, `first page is ${total} bytes gzipped: ${JSON.stringify(sizes)}`);
  assert.ok([...files].some((f) => f.endsWith('.css')) && [...files].some((f) => f.endsWith('.js')));
});

it('has API types generated from the current OpenAPI document (regenerate: npm run api:console)', async () => {
  assert.equal(readFileSync(SCHEMA_FILE, 'utf8'), await generateSchema(), 'console/src/api/schema.d.ts is stale: run npm run api:console');
});

it("serves exactly the router's pages", () => {
  const router = readFileSync(path.join(repoRoot, 'console', 'src', 'router.ts'), 'utf8');
  const paths = [...router.matchAll(/^\s+\{ path: '([^']+)'/gm)].map((m) => m[1]!);
  assert.deepEqual([...paths].sort(), [...CONSOLE_PAGES].sort());
});

describe('serving the console', () => {
  let server: TestServer;
  let bare: TestServer;
  before(async () => {
    server = await startTestServer({ name: 'console-static' });
    bare = await startTestServer({ name: 'console-absent', overrides: { consoleDir: null } });
  });
  after(async () => {
    await server.close();
    await bare.close();
  });

  it('answers its pages with index.html and its assets with long-lived caching', async () => {
    for (const page of ['/', '/sign-in', '/setup', '/apps', '/apps/app_123', '/tasks/tsk_1', '/settings/developer']) {
      const response = await fetch(`${server.url}${page}`);
      assert.equal(response.status, 200, page);
      assert.match(response.headers.get('content-type') ?? '', /text\/html/);
      assert.equal(response.headers.get('cache-control'), 'no-cache');
      const html = await response.text();
      assert.match(html, /<div id="app">/);
      const asset = /src="(\/assets\/[^"]+\.js)"/.exec(html)?.[1];
      assert.ok(asset);
      const js = await fetch(`${server.url}${asset}`);
      assert.equal(js.status, 200);
      assert.match(js.headers.get('content-type') ?? '', /javascript/);
      assert.match(js.headers.get('cache-control') ?? '', /immutable/);
    }
    assert.equal((await fetch(`${server.url}/assets/nope.js`)).status, 404);
    assert.equal((await fetch(`${server.url}/assets/..%2f..%2fpackage.json`)).status, 404);
  });

  it('shadows nothing: the API, docs, health and unknown paths answer as before', async () => {
    const api = await fetch(`${server.url}/v1/nope`);
    assert.equal(api.status, 404);
    assert.equal((await api.json()).error, 'not_found');
    assert.equal((await fetch(`${server.url}/v1/tasks`)).status, 401);
    assert.equal((await fetch(`${server.url}/healthz`)).status, 200);
    assert.match((await fetch(`${server.url}/docs`).then((r) => r.text())), /Signet API/);
    const unknown = await fetch(`${server.url}/not-a-console-page`);
    assert.equal(unknown.status, 404);
    assert.equal((await unknown.json()).error, 'not_found');
    assert.equal((await fetch(`${server.url}/d/doesnotexist`)).status, 404);
  });

  it('says clearly when the console is not built', async () => {
    const response = await fetch(`${bare.url}/`);
    assert.equal(response.status, 503);
    const body = await response.json();
    assert.equal(body.error, 'service_unavailable');
    assert.match(body.message, /npm run build:console/);
    assert.equal((await fetch(`${bare.url}/healthz`)).status, 200);
  });
});
