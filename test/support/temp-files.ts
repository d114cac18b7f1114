// What a data dir holds in temporary files: the blob store's partial uploads (blobs/.tmp) and the
// scratch folders of uploads and task attempts (tmp/). Tests of crashes and slow clients assert
// these drop to zero.
import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';

export function tempFiles(dataDir: string): Array<{ path: string; size: number }> {
  const out: Array<{ path: string; size: number }> = [];
  const walk = (dir: string) => {
    let names: string[];
    try {
      names = readdirSync(dir);
    } catch {
      return;
    }
    for (const name of names) {
      const full = path.join(dir, name);
      const stat = statSync(full, { throwIfNoEntry: false });
      if (!stat) continue;
      if (stat.isDirectory()) walk(full);
      else out.push({ path: path.relative(dataDir, full), size: stat.size });
    }
  };
  walk(path.join(dataDir, 'blobs', '.tmp'));
  walk(path.join(dataDir, 'tmp'));
  return out;
}

/** Bytes of temporary data, not counting the small ownership markers of live processes. */
export function tempBytes(dataDir: string): number {
  return tempFiles(dataDir).filter((f) => !f.path.endsWith('owner.json')).reduce((sum, f) => sum + f.size, 0);
}
