// Writing JAR manifests and signature files exactly as apksig does (ManifestWriter,
// SignatureFileWriter): CRLF line ends, lines of at most 70 UTF-8 bytes, continuation lines
// starting with one space and carrying up to 69 more bytes (split on bytes, as the JAR
// specification allows), sections ended by an empty line, attributes sorted by name in Java
// String order (UTF-16 code units, which is JavaScript's default sort).
const CRLF = Buffer.from('\r\n', 'latin1');
// JAR File Specification "Line length: No line may be longer than 72 bytes (not characters),
// in its UTF8-encoded form" - apksig ManifestWriter.MAX_LINE_LENGTH keeps 2 bytes for CRLF.
const MAX_LINE_LENGTH = 70;

export type Attribute = readonly [name: string, value: string];

function writeLine(parts: Buffer[], line: string): void {
  const bytes = Buffer.from(line, 'utf8');
  let offset = 0;
  let first = true;
  while (offset < bytes.length) {
    const length = Math.min(bytes.length - offset, first ? MAX_LINE_LENGTH : MAX_LINE_LENGTH - 1);
    if (!first) parts.push(CRLF, Buffer.from(' ', 'latin1'));
    parts.push(bytes.subarray(offset, offset + length));
    offset += length;
    first = false;
  }
  parts.push(CRLF);
}

function sortByName(attributes: readonly Attribute[]): Attribute[] {
  return [...attributes].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

/**
 * apksig ManifestWriter.writeMainSection / SignatureFileWriter.writeMainSection: the version
 * attribute first, then the others sorted by name, then the empty line.
 */
export function mainSection(versionName: string, versionValue: string, others: readonly Attribute[]): Buffer {
  const parts: Buffer[] = [];
  writeLine(parts, `${versionName}: ${versionValue}`);
  for (const [name, value] of sortByName(others)) writeLine(parts, `${name}: ${value}`);
  parts.push(CRLF);
  return Buffer.concat(parts);
}

/** apksig ManifestWriter.writeIndividualSection: "Name: <entry>", sorted attributes, empty line. */
export function individualSection(name: string, attributes: readonly Attribute[]): Buffer {
  return mainSection('Name', name, attributes);
}

export const SECTION_DELIMITER = CRLF;
