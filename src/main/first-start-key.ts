// Where the first-start API key goes: never into the JSON log stream (stdout), which container
// log collectors keep forever. On a terminal it is printed on stderr; without one (a container,
// a service manager) it is written to a 0600 file in the data dir and stderr only says where.
import { writeFileSync } from 'node:fs';
import path from 'node:path';

export const FIRST_START_KEY_FILE = 'first-start-api-key.txt';

export function announceFirstStartKey(key: string, dataDir: string, stderr: NodeJS.WriteStream = process.stderr): void {
  if (stderr.isTTY) {
    stderr.write(`Created account "default". Its API key, shown only this once:\n${key}\n`);
    return;
  }
  const file = path.join(dataDir, FIRST_START_KEY_FILE);
  writeFileSync(file, `${key}\n`, { mode: 0o600, flag: 'wx' });
  stderr.write(`Created account "default". Its API key is in ${file} (mode 0600); keep it elsewhere and delete the file.\n`);
}
