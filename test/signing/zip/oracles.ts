// External tools that judge the writer's output: python3 zipfile, Info-ZIP unzip, zipalign.
// Each returns null when the tool is missing, so callers can skip with a reason.
import { execFileSync, spawnSync } from 'node:child_process';

function available(tool: string): boolean {
  return spawnSync('sh', ['-c', `command -v ${tool}`]).status === 0;
}

/** python3 zipfile: testzip() plus a listing of name, size, external attributes. */
export function pythonCheck(path: string): string | null {
  if (!available('python3')) return null;
  const script = [
    'import sys, zipfile',
    'z = zipfile.ZipFile(sys.argv[1])',
    'bad = z.testzip()',
    'if bad is not None: sys.exit("bad entry: " + bad)',
    'for i in z.infolist(): print(i.filename, i.file_size, oct(i.external_attr >> 16), i.create_system)',
  ].join('\n');
  return execFileSync('python3', ['-c', script, path], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
}

/** `unzip -tq`: throws when unzip reports an error. */
export function unzipTest(path: string): string | null {
  if (!available('unzip')) return null;
  return execFileSync('unzip', ['-tq', path], { encoding: 'utf8' });
}

/** `zipalign -c -p 4`: 4-byte alignment of stored entries, 4 KiB for stored .so. Throws on failure. */
export function zipalignCheck(path: string): string | null {
  if (!available('zipalign')) return null;
  return execFileSync('zipalign', ['-c', '-p', '4', path], { encoding: 'utf8' });
}
