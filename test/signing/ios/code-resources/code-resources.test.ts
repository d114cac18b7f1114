// CodeResources: byte-for-byte reproduction of Apple's output (fastlane very-capable-app, Xcode
// 2018), the iOS rule semantics, parse round trip, and the seal check's findings.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { BufferSource } from '../../../../src/signing/data-source.ts';
import { buildCodeResources, checkSeal, parseCodeResources, RuleMatcher, IOS_RULES2, IOS_RULES, type BundleFile } from '../../../../src/signing/ios/code-resources/index.ts';
import { ZipReader } from '../../../../src/signing/zip/index.ts';
import { needsSharedFixtures, sharedFixture } from '../../../support/fixtures.ts';

const file = (path: string, content: string | Buffer): BundleFile => ({
  kind: 'file',
  path,
  sha1: createHash('sha1').update(content).digest(),
  sha256: createHash('sha256').update(content).digest(),
});

describe('CodeResources', () => {
  it('reproduces Apple\'s CodeResources of very-capable-app byte for byte', needsSharedFixtures(), async () => {
    const zip = await ZipReader.open(new BufferSource(readFileSync(sharedFixture('ios/fastlane/ipas/very-capable-app.ipa')!)));
    const dir = 'Payload/very-capable-app.app/';
    const files: BundleFile[] = [];
    for (const entry of zip.entries) {
      if (!entry.name.startsWith(dir) || entry.isDirectory) continue;
      files.push(file(entry.name.slice(dir.length), await zip.readEntry(entry, 1 << 22)));
    }
    const original = await zip.readEntry(zip.getEntry(`${dir}_CodeSignature/CodeResources`)!, 1 << 20);
    // That app's digest set has SHA-1 (min iOS 11.2 signed in 2018), so files2 carries hash + hash2.
    const built = buildCodeResources(files, { mainExecutable: 'very-capable-app', sha1: true });
    assert.equal(built.bytes.toString(), original.toString());
    assert.equal(built.sealed.length, 7);
  });

  it('applies the iOS rules: omitted, optional and weighted paths, symlinks, exclusions', () => {
    const files = [
      file('Info.plist', 'info'),
      file('PkgInfo', 'APPL????'),
      file('App', 'main exe'),
      file('_CodeSignature/CodeResources', 'old'),
      file('en.lproj/Localizable.strings', 'en'),
      file('en.lproj/locversion.plist', 'v'),
      file('Base.lproj/Main.nib', 'nib'),
      file('sub/.DS_Store', 'finder'),
      file('Frameworks/F.framework/F', 'framework exe'),
      file('Frameworks/F.framework/_CodeSignature/CodeResources', 'nested seal'),
      { kind: 'symlink', path: 'link', target: 'Base.lproj/Main.nib' } as BundleFile,
    ];
    const built = buildCodeResources(files, { mainExecutable: 'App', sha1: false });
    const seal = parseCodeResources(built.bytes);
    assert.deepEqual([...seal.files2.keys()].sort(), ['Base.lproj/Main.nib', 'Frameworks/F.framework/F', 'Frameworks/F.framework/_CodeSignature/CodeResources', 'en.lproj/Localizable.strings', 'link']);
    // V1 keeps Info.plist, PkgInfo and .DS_Store (no omit rule there), never symlinks.
    assert.deepEqual([...seal.files.keys()].sort(), ['Base.lproj/Main.nib', 'Frameworks/F.framework/F', 'Frameworks/F.framework/_CodeSignature/CodeResources', 'Info.plist', 'PkgInfo', 'en.lproj/Localizable.strings', 'sub/.DS_Store']);
    assert.deepEqual(seal.files2.get('en.lproj/Localizable.strings'), { kind: 'file', sha256: files[4]!.kind === 'file' ? files[4]!.sha256 : undefined, optional: true });
    assert.equal(seal.files2.get('Base.lproj/Main.nib')!.optional, false, 'Base.lproj is not optional (weight 1010)');
    assert.deepEqual(seal.files2.get('link'), { kind: 'symlink', target: 'Base.lproj/Main.nib', optional: false });
    const entry = seal.files2.get('Frameworks/F.framework/F')!;
    assert.ok(entry.kind === 'file' && entry.sha1 === undefined, 'no SHA-1 when the digest set has none');
    assert.deepEqual(checkSeal(seal, files, { mainExecutable: 'App' }), []);
    // Parsing then rebuilding from the parsed rules gives the same rules.
    assert.deepEqual(seal.rules2.map((r) => [r.pattern, r.weight, r.omit, r.optional, r.nested]).sort(), IOS_RULES2.map((r) => [r.pattern, r.weight, r.omit, r.optional, r.nested]).sort());
    assert.equal(seal.rules.length, IOS_RULES.length);
  });

  it('an omit rule wins a weight tie (Info.plist vs ^, both 20)', () => {
    const v2 = new RuleMatcher(IOS_RULES2);
    assert.equal(v2.match('Info.plist')?.omit, true);
    assert.equal(v2.match('Sub.bundle/Info.plist')?.omit, false);
    assert.equal(v2.match('PlugIns/X.appex/X')?.nested, false, '^ (20) outweighs nested (10)');
  });

  it('reports missing, modified, unsealed and retargeted files', () => {
    const files = [file('a.txt', 'a'), file('b.txt', 'b'), { kind: 'symlink', path: 'l', target: 'a.txt' } as BundleFile];
    const seal = parseCodeResources(buildCodeResources(files, { mainExecutable: undefined, sha1: true }).bytes);
    const now: BundleFile[] = [file('a.txt', 'A!'), file('c.txt', 'c'), { kind: 'symlink', path: 'l', target: 'c.txt' }];
    assert.deepEqual(checkSeal(seal, now, { mainExecutable: undefined }), [
      { path: 'a.txt', problem: 'modified' },
      { path: 'b.txt', problem: 'missing' },
      { path: 'l', problem: 'symlink_changed' },
      { path: 'c.txt', problem: 'unsealed' },
    ]);
  });

  it('reads legacy seals (files2 as bare SHA-1 data, Xcode 7) and nested code entries', () => {
    const sha1 = createHash('sha1').update('x').digest();
    const xml = `<?xml version="1.0" encoding="UTF-8"?><plist version="1.0"><dict><key>files</key><dict/><key>files2</key><dict>
      <key>x</key><data>${sha1.toString('base64')}</data>
      <key>Nested.app</key><dict><key>cdhash</key><data>${Buffer.alloc(20, 1).toString('base64')}</data><key>requirement</key><string>identifier "n"</string></dict>
      </dict><key>rules</key><dict/><key>rules2</key><dict><key>^.*</key><true/></dict></dict></plist>`;
    const seal = parseCodeResources(Buffer.from(xml));
    assert.deepEqual(seal.files2.get('x'), { kind: 'file', sha1, optional: false });
    assert.deepEqual(seal.files2.get('Nested.app'), { kind: 'nested', cdhash: Buffer.alloc(20, 1), requirement: 'identifier "n"', optional: false });
    assert.deepEqual(checkSeal(seal, [file('x', 'x')], { mainExecutable: undefined, nestedCdhash: (p) => (p === 'Nested.app' ? Buffer.alloc(32, 1) : undefined) }), []);
    assert.deepEqual(checkSeal(seal, [file('x', 'x')], { mainExecutable: undefined, nestedCdhash: () => Buffer.alloc(20, 2) }), [{ path: 'Nested.app', problem: 'nested_changed' }]);
  });
});
