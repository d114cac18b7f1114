// Default signing identifier when the caller gives none (Security DiskRep::canonicalIdentifier,
// Signer::prepare and Signer::uniqueName, MachORep::identificationFor).
import { createHash } from 'node:crypto';
import { headerSize, sizeOfCommands, uuid } from '../macho/inspect.ts';
import type { MachOSlice } from '../macho/types.ts';

/** Basename without its extension (unless the extension is a version number), trailing version parts trimmed. */
export function canonicalIdentifier(fileName: string): string {
  let s = fileName.slice(fileName.lastIndexOf('/') + 1);
  const dot = s.lastIndexOf('.');
  if (dot > 0 && !/[0-9]/.test(s[dot + 1] ?? '')) s = s.slice(0, dot);
  // "foo.2.3" → "foo.2": drop numeric components beyond the first after the base name.
  for (;;) {
    const parts = s.split('.');
    if (parts.length > 2 && /^[0-9]+$/.test(parts[parts.length - 1]!)) s = parts.slice(0, -1).join('.');
    else break;
  }
  return s;
}

/**
 * MachORep::identificationFor: "UUID" + LC_UUID bytes, else SHA-1 of the load-command area.
 * Apple uses the host's preferred slice of a fat file; we take the first slice, which is
 * deterministic (it is what an Intel host picks for the usual x86_64-first fat files).
 */
export function identification(slice: MachOSlice): Buffer {
  const id = uuid(slice);
  if (id) return Buffer.concat([Buffer.from('UUID', 'latin1'), id]);
  const start = headerSize(slice);
  return createHash('sha1').update(slice.data.subarray(start, start + sizeOfCommands(slice))).digest();
}

/**
 * Signer::prepare: the canonical file name; for an ad-hoc signature of a name without a dot,
 * "-" + hex(identification) is appended so unrelated ad-hoc binaries do not share an identifier.
 */
export function defaultIdentifier(fileName: string, firstSlice: MachOSlice, adhoc: boolean): string {
  const base = canonicalIdentifier(fileName);
  if (!base.includes('.') && adhoc) return `${base}-${identification(firstSlice).toString('hex')}`;
  return base;
}
