// Whether bin/signet may run the bundle that scripts/build-server.ts made: only while every file
// it was built from still has the size and modification time it had then. An edited or
// checked-out tree runs from the sources instead, as it always could; so a stale bundle never
// runs. Plain JavaScript: bin/signet imports it before any TypeScript loads.
//
// Layout: each build goes to a folder of its own, dist/server/<build>/, and dist/server/
// sources.json (written last, by rename) names the current one with the files it was built from.
// A rebuild never changes the files of the build before it, which a running `signet serve` may
// still import from (its lazily loaded modules and its worker threads' entries).
import { readFileSync, statSync } from 'node:fs';

/** Where the builds and the record of the current one live, under the repository root. */
export const SERVER_BUNDLE_DIR = 'dist/server/';
export const SOURCES_FILE = 'sources.json';

/** The current build's record: its folder's name and, per source file, [size, mtimeMs]; null when unreadable. */
export function currentServerBuild(root) {
  try {
    const record = JSON.parse(readFileSync(new URL(SOURCES_FILE, new URL(SERVER_BUNDLE_DIR, root)), 'utf8'));
    return typeof record.build === 'string' && typeof record.sources === 'object' && record.sources !== null ? record : null;
  } catch {
    return null;
  }
}

/** The current build's entry URL, or null when there is none or a file it was built from has changed. */
export function freshServerBundle(root) {
  const record = currentServerBuild(root);
  if (record === null) return null;
  for (const [file, [size, mtimeMs]] of Object.entries(record.sources)) {
    let stat;
    try {
      stat = statSync(new URL(file, root));
    } catch {
      return null;
    }
    if (stat.size !== size || stat.mtimeMs !== mtimeMs) return null;
  }
  return new URL(`${record.build}/cli.mjs`, new URL(SERVER_BUNDLE_DIR, root));
}
