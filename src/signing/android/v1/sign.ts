// JAR (v1) signing: MANIFEST.MF, <NAME>.SF and the signature block, byte for byte as apksig
// V1SchemeSigner.sign builds them. The PKCS#7 block itself comes from the CMS engine.
import { createHash } from 'node:crypto';
import { SigningError } from '../../errors.ts';
import { checkEntryNameForManifest, digestAttributeName, MANIFEST_ENTRY_NAME, type JarDigest } from './entries.ts';
import { individualSection, mainSection, SECTION_DELIMITER, type Attribute } from './manifest-build.ts';
import { getAttribute, parseManifest } from './manifest-parse.ts';

// apksig V1SchemeSigner: the Created-By of the .SF - the value apksigner passes, so outputs stay
// byte-identical.
const CREATED_BY = '1.0 (Android)';

export interface JarManifest {
  readonly bytes: Buffer;
  /** Each entry's individual section bytes, keyed by entry name (for the .SF digests). */
  readonly sections: ReadonlyMap<string, Buffer>;
}

/**
 * apksig V1SchemeSigner.generateManifestFile: the main section copies the input manifest's main
 * attributes (Manifest-Version first, others sorted; no Created-By of our own, since Signet did
 * not build the app), or just "Manifest-Version: 1.0" when there is no input manifest (what
 * apksigner 31 writes; verified against it); then one section per digested entry in name order.
 */
export function buildManifest(entryDigests: ReadonlyMap<string, Buffer>, digest: JarDigest, inputManifest: Buffer | null): JarManifest {
  let main: Buffer;
  if (inputManifest !== null) {
    const parsed = parseManifest(inputManifest, 'input META-INF/MANIFEST.MF');
    const version = getAttribute(parsed.main, 'Manifest-Version');
    if (version === undefined) {
      throw new SigningError('apk_invalid', 'the input META-INF/MANIFEST.MF has no Manifest-Version attribute in its main section');
    }
    // java.util.jar.Attributes: one value per case-insensitive name, the last one wins.
    const others = new Map<string, Attribute>();
    for (const [name, value] of parsed.main.attributes) {
      if (name.toLowerCase() !== 'manifest-version') others.set(name.toLowerCase(), [others.get(name.toLowerCase())?.[0] ?? name, value]);
    }
    main = mainSection('Manifest-Version', version, [...others.values()]);
  } else {
    main = mainSection('Manifest-Version', '1.0', []);
  }
  const names = [...entryDigests.keys()].sort();
  const parts = [main];
  const sections = new Map<string, Buffer>();
  const attributeName = digestAttributeName(digest);
  for (const name of names) {
    checkEntryNameForManifest(name);
    const section = individualSection(name, [[attributeName, entryDigests.get(name)!.toString('base64')]]);
    sections.set(name, section);
    parts.push(section);
  }
  return { bytes: Buffer.concat(parts), sections };
}

/**
 * apksig V1SchemeSigner.generateSignatureFile: Signature-Version, then sorted Created-By,
 * <digest>-Digest-Manifest and X-Android-APK-Signed (the v2+ stripping protection), then per
 * manifest section the digest of that section's bytes.
 */
export function buildSignatureFile(manifest: JarManifest, digest: JarDigest, apkSchemeIds: readonly number[]): Buffer {
  const hash = (data: Buffer): string => createHash(digest).update(data).digest('base64');
  const attributeName = digestAttributeName(digest);
  const attributes: Attribute[] = [['Created-By', CREATED_BY], [`${attributeName}-Manifest`, hash(manifest.bytes)]];
  if (apkSchemeIds.length > 0) attributes.push(['X-Android-APK-Signed', apkSchemeIds.join(', ')]);
  const parts = [mainSection('Signature-Version', '1.0', attributes)];
  for (const name of [...manifest.sections.keys()].sort()) {
    parts.push(individualSection(name, [[attributeName, hash(manifest.sections.get(name)!)]]));
  }
  let sf = Buffer.concat(parts);
  // apksig: java.util.jar on Android up to 1.6 fails on a .SF whose length is a non-zero multiple
  // of 1024 bytes; one extra CRLF avoids it.
  if (sf.length > 0 && sf.length % 1024 === 0) sf = Buffer.concat([sf, SECTION_DELIMITER]);
  return sf;
}

export interface V1File {
  readonly name: string;
  readonly data: Buffer;
}

/** The three files in apksig's output order: .SF, signature block, MANIFEST.MF. */
export function v1Files(signerName: string, blockExtension: string, manifest: JarManifest, sf: Buffer, signatureBlock: Buffer): V1File[] {
  return [
    { name: `META-INF/${signerName}.SF`, data: sf },
    { name: `META-INF/${signerName}.${blockExtension}`, data: signatureBlock },
    { name: MANIFEST_ENTRY_NAME, data: manifest.bytes },
  ];
}
