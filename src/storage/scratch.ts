// Temporary files with an owner. Every process keeps its scratch under one folder of its own,
// `<root>/<host>-<pid>-<random>/`, holding an `owner.json` marker (host, boot id, pid, the pid's
// start time); each upload or task attempt works in a sub-folder that it removes on every path.
// A process killed with SIGKILL cannot clean up, so start-up and a periodic sweep remove the
// folders of owners that are provably dead, whatever their age: same host, and either another
// boot (the boot id changed) or no process with that pid and start time. Folders of other hosts
// (a data dir shared over the network) are never touched: their liveness cannot be proven here.
import { randomBytes } from 'node:crypto';
import { promises as fs, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const MARKER = 'owner.json';
/** Entries without a marker (older releases' temp files, a folder whose marker was never written). */
const UNMARKED_GRACE_MS = 60 * 60 * 1000;

interface OwnerMarker {
  host: string;
  bootId: string | null;
  pid: number;
  /** /proc/<pid>/stat starttime (clock ticks since boot): tells a reused pid from the owner. */
  pidStart: string | null;
  createdAt: string;
}

function bootId(): string | null {
  try {
    return readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
  } catch {
    return null;
  }
}

function processStart(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Field 22; the command name (field 2) may hold spaces, so count from its closing parenthesis.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? null;
  } catch {
    return null;
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Whether the marker's process is certainly gone (false when it may be alive or is elsewhere). */
function provablyDead(marker: OwnerMarker): boolean {
  if (marker.host !== os.hostname()) return false;
  const boot = bootId();
  if (boot !== null && marker.bootId !== null && marker.bootId !== boot) return true;
  if (!alive(marker.pid)) return true;
  const start = processStart(marker.pid);
  return start !== null && marker.pidStart !== null && start !== marker.pidStart;
}

export class ProcessScratch {
  readonly dir: string;

  private constructor(dir: string) {
    this.dir = dir;
  }

  /** Creates this process's folder under `root` (0700) with its owner marker. */
  static async open(root: string): Promise<ProcessScratch> {
    const dir = path.join(root, `${os.hostname().replace(/[^\w.-]/g, '_')}-${process.pid}-${randomBytes(4).toString('hex')}`);
    await fs.mkdir(dir, { recursive: true, mode: 0o700 });
    const marker: OwnerMarker = { host: os.hostname(), bootId: bootId(), pid: process.pid, pidStart: processStart(process.pid), createdAt: new Date().toISOString() };
    await fs.writeFile(path.join(dir, MARKER), JSON.stringify(marker), { mode: 0o600 });
    return new ProcessScratch(dir);
  }

  /** A fresh folder for one owner (an upload, a task attempt); the caller removes it when done. */
  async folder(label: string): Promise<string> {
    const dir = path.join(this.dir, `${label.replace(/[^\w.-]/g, '_')}-${randomBytes(4).toString('hex')}`);
    await fs.mkdir(dir, { recursive: true, mode: 0o700 });
    return dir;
  }

  /** Runs `fn` in a fresh folder and removes it afterwards, whatever `fn` did. */
  async within<T>(label: string, fn: (dir: string) => Promise<T>): Promise<T> {
    const dir = await this.folder(label);
    try {
      return await fn(dir);
    } finally {
      await fs.rm(dir, { recursive: true, force: true });
    }
  }

  /** Removes this process's folder (graceful shutdown). */
  async close(): Promise<void> {
    await fs.rm(this.dir, { recursive: true, force: true });
  }
}

/**
 * Removes what dead processes left under `root`: folders whose owner is provably dead, and
 * unmarked entries older than an hour. Returns the bytes freed.
 */
export async function sweepDeadOwners(root: string, now = Date.now()): Promise<number> {
  let names: string[];
  try {
    names = await fs.readdir(root);
  } catch {
    return 0;
  }
  let freed = 0;
  for (const name of names) {
    const entry = path.join(root, name);
    const marker = await fs.readFile(path.join(entry, MARKER), 'utf8').then(
      (text) => JSON.parse(text) as OwnerMarker,
      () => null,
    );
    let remove: boolean;
    if (marker !== null) {
      remove = provablyDead(marker);
    } else {
      const stat = await fs.stat(entry).catch(() => null);
      remove = stat !== null && now - stat.mtimeMs > UNMARKED_GRACE_MS;
    }
    if (!remove) continue;
    freed += await sizeOf(entry);
    await fs.rm(entry, { recursive: true, force: true });
  }
  return freed;
}

async function sizeOf(entry: string): Promise<number> {
  const stat = await fs.lstat(entry).catch(() => null);
  if (stat === null) return 0;
  if (!stat.isDirectory()) return stat.size;
  let total = 0;
  for (const name of await fs.readdir(entry).catch(() => [] as string[])) total += await sizeOf(path.join(entry, name));
  return total;
}
