// External attributes (APPNOTE 4.4.15) -> Unix mode, directory and symlink flags, and back.
import { DOS_DIRECTORY, HOST_OSX, HOST_UNIX, S_IFDIR, S_IFLNK, S_IFMT } from './format.ts';

export interface EntryKind {
  unixMode: number | null;
  isDirectory: boolean;
  isSymlink: boolean;
}

/**
 * Info-ZIP convention: when "version made by" names Unix (3) or OS X (19) as the host
 * (APPNOTE 4.4.2), the upper 16 bits of the external attributes are the st_mode. A zero mode
 * means "not recorded". A trailing "/" (APPNOTE 4.3.8) or the MS-DOS directory bit also mark
 * directories.
 */
export function entryKind(name: string, versionMadeBy: number, externalAttributes: number): EntryKind {
  const host = versionMadeBy >>> 8;
  const mode = externalAttributes >>> 16;
  const unixMode = (host === HOST_UNIX || host === HOST_OSX) && mode !== 0 ? mode : null;
  const type = unixMode === null ? 0 : unixMode & S_IFMT;
  const isSymlink = type === S_IFLNK;
  const isDirectory = !isSymlink && (name.endsWith('/') || type === S_IFDIR || (externalAttributes & DOS_DIRECTORY) !== 0);
  return { unixMode, isDirectory, isSymlink };
}

/** External attributes for a Unix mode, with the MS-DOS directory bit set for directories. */
export function externalAttributesForMode(mode: number): number {
  const dos = (mode & S_IFMT) === S_IFDIR ? DOS_DIRECTORY : 0;
  return ((mode & 0xffff) << 16 | dos) >>> 0;
}
