// Builds the JavaScript bin/signet runs: src/ bundled by rolldown into dist/server/<build>/, one
// entry for the command and one per worker thread, with the few packages `signet sign` loads at
// start-up. Run by `npm ci` (prepare) and by `npm test` before the tests, so that the tests run it
// too.
//
// Why: Node runs the TypeScript sources directly, resolving, stripping and compiling each of
// some 300 files as it loads them (the compile cache keeps the compiled code, the rest is done
// again at every start). Bundled, `signet sign` measured, in alternating runs of 8 against the
// sources: bench:ipa's random app 1.226 against 1.257 s and 1.93 against 1.99 s of CPU, bench:apk's
// APK 1.003 against 1.017 s and 1.56 against 1.585 s; `signet verify` of a small APK 0.110 against
// 0.127 s. bin/signet runs the bundle only while it is fresh (scripts/server-bundle.mjs: the size
// and modification time of every file it was built from, recorded here in sources.json), and the
// sources otherwise.
//
// `new URL('./x', import.meta.url)` in a bundled module would resolve against the build's folder:
// the plugin below points each at the worker's own entry in the bundle, or else at the file in
// src/ it names (Apple's CA certificates, the SQL migrations, the console's build).
import { closeSync, fstatSync, openSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build, type Plugin } from 'rolldown';
import { currentServerBuild, SERVER_BUNDLE_DIR, SOURCES_FILE } from './server-bundle.mjs';

const root = fileURLToPath(new URL('../', import.meta.url));
const serverDir = path.join(root, SERVER_BUNDLE_DIR);

/** Entry name → source: the command, and each module a thread runs (the URLs that name them). */
const ENTRIES: Record<string, string> = {
  cli: 'src/main/cli.ts',
  'digest-worker': 'src/signing/android/sign/digest-worker.ts',
  'scan-worker': 'src/signing/ios/resign/scan-worker.ts',
  'macho-worker': 'src/signing/ios/resign/macho-worker.ts',
  'signer-thread': 'src/services/signer-thread.ts',
  'keystore-thread': 'src/services/keystore-thread.ts',
  'release-reader-thread': 'src/distribution/release-reader-thread.ts',
};

// Packages bundled along: those `signet sign` loads before it signs, which nothing outside src/
// imports (one copy in the process either way), and the helpers rolldown's own transform may
// call (@oxc-project/runtime, which rolldown supplies: a tagged template holding "</script>" is
// rewritten with one). Every other package stays an import from node_modules, as before:
// native ones must, and the server's gain nothing measurable.
const BUNDLED_PACKAGES = /^(pkijs|asn1js|node-forge|commander|jose|@noble\/hashes|bytestreamjs|pvtsutils|pvutils|tslib|@oxc-project\/runtime)(\/|$)/;

const MODULE_URL = /new URL\((['"])(\.{1,2}\/[^'"]*)\1, import\.meta\.url\)/g;

/**
 * Rewrites `new URL('./…', import.meta.url)` for the bundle's folder (see above). A URL naming a
 * TypeScript module that is not one of ENTRIES fails the build: a thread started from it would
 * run the sources beside the bundle.
 */
function moduleUrls(outDir: string): Plugin {
  const entryOf = new Map(Object.entries(ENTRIES).map(([name, source]) => [path.join(root, source), name]));
  return {
    name: 'signet-module-urls',
    transform(code, id) {
      if (!id.startsWith(path.join(root, 'src', path.sep)) || !code.includes('import.meta.url')) return null;
      const rewritten = code.replace(MODULE_URL, (_match, _quote: string, relative: string) => {
        const target = path.resolve(path.dirname(id), relative);
        const entry = entryOf.get(target);
        if (entry === undefined && target.endsWith('.ts')) this.error(`${path.relative(root, id)} names the module ${relative} by URL: add it to ENTRIES in scripts/build-server.ts`);
        let href = entry === undefined ? path.relative(outDir, target).split(path.sep).join('/') : `./${entry}.mjs`;
        if (relative.endsWith('/') && !href.endsWith('/')) href += '/';
        return `new URL(${JSON.stringify(href)}, import.meta.url)`;
      });
      return rewritten === code ? null : { code: rewritten };
    },
  };
}

/**
 * Reads each file of the repository the bundle is built from and notes its size and
 * modification time from the same open file, so that what sources.json records is what was
 * bundled even when a file is saved during the build.
 */
function stampedSources(stamps: Map<string, [number, number]>): Plugin {
  return {
    name: 'signet-stamped-sources',
    load(id) {
      if (!id.startsWith(root) || !path.isAbsolute(id)) return null;
      const fd = openSync(id, 'r');
      try {
        const stat = fstatSync(fd);
        stamps.set(id, [stat.size, stat.mtimeMs]);
        return readFileSync(fd, 'utf8');
      } finally {
        closeSync(fd);
      }
    },
  };
}

/**
 * A new build in a folder of its own, then the record naming it (see scripts/server-bundle.mjs
 * for the layout); builds older than the one it replaces are removed.
 */
export async function buildServer(): Promise<void> {
  const previous = currentServerBuild(pathToFileURL(root))?.build;
  const name = `build-${Date.now().toString(36)}`;
  const outDir = path.join(serverDir, name);
  const stamps = new Map<string, [number, number]>();
  const output = await build({
    input: Object.fromEntries(Object.entries(ENTRIES).map(([name, source]) => [name, path.join(root, source)])),
    platform: 'node',
    external: (id) => !id.startsWith('.') && !path.isAbsolute(id) && !BUNDLED_PACKAGES.test(id),
    plugins: [moduleUrls(outDir), stampedSources(stamps)],
    output: { dir: outDir, format: 'esm', entryFileNames: '[name].mjs', chunkFileNames: 'chunk-[hash].mjs' },
    write: true,
  });
  const files = new Set<string>();
  for (const chunk of output.output) if (chunk.type === 'chunk') for (const id of chunk.moduleIds) if (stamps.has(id)) files.add(id);
  const sources = Object.fromEntries([...files].sort().map((file) => [path.relative(root, file).split(path.sep).join('/'), stamps.get(file)!]));
  const record = path.join(serverDir, SOURCES_FILE);
  writeFileSync(`${record}.tmp`, `${JSON.stringify({ build: name, sources })}\n`);
  renameSync(`${record}.tmp`, record);
  pruneServerBuilds(serverDir, [name, ...(previous === undefined ? [] : [previous])]);
}

/** Removes the builds in `dir` but those named in `keep` (the new one and the one it replaces). */
export function pruneServerBuilds(dir: string, keep: readonly string[]): void {
  for (const entry of readdirSync(dir)) {
    if (entry.startsWith('build-') && !keep.includes(entry)) rmSync(path.join(dir, entry), { recursive: true, force: true });
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await buildServer();
