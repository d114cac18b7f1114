// Whether bin/signet may run the bundle that scripts/build-server.ts made (dist/server/): only
// while every file it was built from still has the size and modification time it had then. An
// edited, added-to or checked-out tree runs from the sources instead, as it always could; so a
// stale bundle never runs. Plain JavaScript: bin/signet imports it before any TypeScript loads.
import { readFileSync, statSync } from 'node:fs';

/** Where the bundle and its record of sources live, under the repository root. */
export const SERVER_BUNDLE_DIR = 'dist/server/';
export const SOURCES_FILE = 'sources.json';

/** The bundle's entry URL, or null when there is none or a file it was built from has changed. */
export function freshServerBundle(root) {
  const dir = new URL(SERVER_BUNDLE_DIR, root);
  let sources;
  try {
    sources = JSON.parse(readFileSync(new URL(SOURCES_FILE, dir), 'utf8'));
  } catch {
    return null;
  }
  for (const [file, [size, mtimeMs]] of Object.entries(sources)) {
    let stat;
    try {
      stat = statSync(new URL(file, root));
    } catch {
      return null;
    }
    if (stat.size !== size || stat.mtimeMs !== mtimeMs) return null;
  }
  return new URL('cli.mjs', dir);
}
