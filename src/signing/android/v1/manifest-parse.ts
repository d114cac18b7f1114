// Reading JAR manifests and signature files the way java.util.jar.Manifest does (which is what
// apksig uses for the input manifest's main section and what V1SchemeVerifier parses): lines end
// in CRLF, LF or CR; a line starting with a space continues the previous one; "Name: value"
// headers; sections are separated by empty lines. Attribute names compare case-insensitively.
import { SigningError } from '../../errors.ts';

export interface ManifestSection {
  /** Attributes in file order; names keep their original case. */
  readonly attributes: readonly (readonly [string, string])[];
  /** The section's exact bytes, from its first line through the ending empty line (if any). */
  readonly bytes: Buffer;
}

export interface ParsedManifest {
  readonly main: ManifestSection;
  /** Individual sections in file order, with their "Name" value. */
  readonly sections: readonly (ManifestSection & { readonly name: string })[];
}

export function getAttribute(section: ManifestSection, name: string): string | undefined {
  const lower = name.toLowerCase();
  let value: string | undefined;
  // java.util.jar.Attributes: a repeated name keeps the last value.
  for (const [key, v] of section.attributes) if (key.toLowerCase() === lower) value = v;
  return value;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

export function parseManifest(bytes: Buffer, what: string): ParsedManifest {
  const fail = (message: string): never => {
    throw new SigningError('apk_signature_invalid', `${what}: ${message}`);
  };
  const sections: { attributes: [string, string][]; start: number; end: number }[] = [];
  let current: { attributes: [string, string][]; start: number; end: number } | null = null;
  let pendingLine: Buffer[] | null = null;
  let position = 0;
  const finishLine = (): void => {
    if (pendingLine === null || current === null) return;
    let text: string;
    try {
      text = utf8.decode(Buffer.concat(pendingLine));
    } catch {
      fail('a header is not valid UTF-8');
    }
    const colon = text!.indexOf(': ');
    if (colon <= 0) fail(`invalid header line ${JSON.stringify(text!.slice(0, 80))}`);
    current.attributes.push([text!.slice(0, colon), text!.slice(colon + 2)]);
    pendingLine = null;
  };
  while (position < bytes.length) {
    let end = position;
    while (end < bytes.length && bytes[end] !== 0x0d && bytes[end] !== 0x0a) end++;
    const line = bytes.subarray(position, end);
    let next = end;
    if (next < bytes.length && bytes[next] === 0x0d) next++;
    if (next < bytes.length && bytes[next] === 0x0a && (next === end || bytes[end] === 0x0d)) next++;
    if (line.length === 0) {
      // An empty line ends the section (or separates blank lines between sections).
      finishLine();
      if (current !== null) {
        current.end = next;
        sections.push(current);
        current = null;
      } else if (sections.length === 0) {
        // An empty main section.
        sections.push({ attributes: [], start: position, end: next });
      }
    } else if (line[0] === 0x20) {
      if (pendingLine === null) fail('a continuation line has nothing to continue');
      pendingLine!.push(line.subarray(1));
    } else {
      finishLine();
      if (current === null) current = { attributes: [], start: position, end: next };
      pendingLine = [line];
    }
    position = next;
  }
  finishLine();
  if (current !== null) {
    current.end = bytes.length;
    sections.push(current);
  }
  const toSection = (s: { attributes: [string, string][]; start: number; end: number }): ManifestSection => ({
    attributes: s.attributes,
    bytes: bytes.subarray(s.start, s.end),
  });
  const [main, ...rest] = sections;
  const parsed: ParsedManifest = {
    main: main === undefined ? { attributes: [], bytes: Buffer.alloc(0) } : toSection(main),
    sections: rest.map((section) => {
      const result = toSection(section);
      const name = getAttribute(result, 'Name');
      if (name === undefined) fail('an individual section has no Name attribute');
      return { ...result, name: name! };
    }),
  };
  return parsed;
}
