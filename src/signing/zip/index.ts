// Signet's zip layer: a validating reader over a DataSource and a raw-copying, aligning writer
// over a DataSink (src/signing/data-sink.ts). Format rules and sources: SPECIFICATION.md.
//
// Reader
//   const zip = await ZipReader.open(source, { limits?: Partial<ZipLimits>, discarded?: (name) => boolean });
//                                             validates everything up front; entries the caller drops
//                                             unread get lighter checks (entry.tolerated, entry.unreadable)
//   await ZipReader.readNames(source)         the entries' names only (structure checked), local headers unread
//   zip.entries: readonly ZipEntry[]          central directory order
//   zip.entriesInFileOrder(): ZipEntry[]      local header order (apksig copy order)
//   zip.getEntry(name): ZipEntry | undefined
//   zip.geometry: ZipGeometry                 CD offset/size, EOCD offset+bytes, comment, entriesEnd,
//                                             bytesBeforeCentralDirectory (APK Signing Block room)
//   zip.rawChunks(entry, chunkSize?)          AsyncGenerator<Buffer> of stored bytes (raw copy)
//   zip.openRawStream(entry): Readable
//   zip.contentChunks(entry)                  AsyncGenerator<Buffer>, inflated; CRC/size/bomb checked
//   zip.openContentStream(entry): Readable
//   zip.readEntry(entry, maxBytes = 32 MiB): Promise<Buffer>   small files (plists, manifests)
//   zip.readSymlinkTarget(entry): Promise<string>    zip_unsafe_entry if it escapes the archive root
//   ZipEntry: name, nameBytes, method, flags, crc32, compressedSize, uncompressedSize,
//     localHeaderOffset, dataOffset, endOffset, dataDescriptorSize, unixMode, isDirectory, isSymlink,
//     dosTime, dosDate, versionMadeBy, externalAttributes, centralRecord, localHeader, localExtra, ...
//   The caller owns and closes the source.
//
// Writer
//   const w = new ZipWriter(sink, { allowZip64?: boolean /* false for APKs */, alignment?: { storedAlignment: 4, libraryPageAlignment: 16384 | 4096 } });
//   await w.addRaw(entry, reader, { alignment?: 'preserve' | 'force' | 'none', dataDescriptor?: 'drop' | 'keep' })
//       -> WrittenEntry. apksigner <= 34 parity: { alignment: 'preserve', dataDescriptor: 'keep' };
//          apksigner >= 35: { alignment: 'force', dataDescriptor: 'keep' }.
//   await w.addEntry(name, Buffer | AsyncIterable<Buffer>, { metadataFrom?: ZipEntry /* keep mode, time, host */,
//       method: 'stored' | 'deflate', level, unixMode,
//       externalAttributes, versionMadeBy, mtime | dosTime+dosDate, alignment, extra, forceZip64, size,
//       precompressed: { crc32, uncompressedSize } })   -> WrittenEntry
//   await w.writeBytes(buf) / w.copyBytes(source, offset, length)   bytes outside entries (apksig keeps gaps)
//   One-phase:  await w.finish({ order?, comment? }) -> ZipWriteResult
//   Two-phase (APK v2+ signing):
//     const plan = w.finishEntries({ order?: WrittenEntry[] /* CD order */, comment?: Buffer });
//     plan.entriesEnd, plan.centralDirectory, plan.endRecords(cdOffset)  // digest with cdOffset = block start
//     await w.writeTail(Buffer.concat([padding, signingBlock]))          // EOCD then points past the block
// Errors: SigningError zip_invalid | zip_unsafe_entry | zip_duplicate_entry |
//   zip_overlapping_entries | zip_bomb | zip_unsupported.
export { ZipReader, type ZipGeometry, type ZipOpenOptions } from './reader.ts';
export type { ZipEntry } from './entry.ts';
export type { CentralRecord } from './central-directory.ts';
export { DEFAULT_ZIP_LIMITS, type ZipLimits } from './limits.ts';
export { ZipWriter, type ZipWriterOptions, type RawCopyOptions, type WrittenEntry, type CentralDirectoryPlan, type ZipWriteResult } from './writer.ts';
export type { NewEntryOptions, NewEntryData } from './new-entry.ts';
export { DEFAULT_ALIGNMENT, alignedExtra, inputEntryAlignment, type AlignmentPolicy, type RawAlignmentMode } from './alignment.ts';
export { parseExtraFields, parseUnixExtras, declaredAndroidAlignment, type ExtraField, type UnixExtras } from './extra-fields.ts';
export { dosToDate, dateToDos, METHOD_STORED, METHOD_DEFLATED, EXTRA_ANDROID_ALIGNMENT, S_IFDIR, S_IFLNK, S_IFREG } from './format.ts';
export { entryKind, externalAttributesForMode } from './unix-mode.ts';
export { symlinkTargetIsContained } from './names.ts';
