// Builds test .ipa files: from a fixture .app folder (filtered), or a generated app whose Mach-O
// files come from clang + ld64.lld (test/support/macho-build.ts) with a framework, a loose dylib,
// an app extension, a symlink and localized resources. The archives are made by Info-ZIP's `zip`
// (symlinks stored as links with -y), not by src/signing/zip, so the re-signer reads a
// third-party encoding.
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, readdirSync, rmSync, statSync, symlinkSync, writeFileSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parseSuperBlob } from '../../src/signing/ios/codesign/super-blob.ts';
import { codeSignatureCommand } from '../../src/signing/ios/macho/inspect.ts';
import { parseMachO } from '../../src/signing/ios/macho/parse.ts';
import { testOutputDir } from './fixtures.ts';
import { buildThin } from './macho-build.ts';

/** Zips `root/Payload` (and anything else in `root`) into `out`, keeping symlinks and modes. */
export function zipFolder(root: string, out: string, options: { store?: boolean } = {}): Buffer {
  rmSync(out, { force: true });
  const args = ['-qry', ...(options.store ? ['-0'] : []), out, ...readdirSync(root).sort()];
  const result = spawnSync('zip', args, { cwd: root, encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`zip failed: ${result.stderr}`);
  return readFileSync(out);
}

/**
 * An .ipa of a fixture .app folder. `exclude` lists path prefixes (relative to the .app) left
 * out — e.g. the repository files the isign fixture keeps inside its bundles.
 */
export function ipaFromApp(appDir: string, name: string, exclude: readonly string[] = []): { path: string; bytes: Buffer } {
  const work = testOutputDir('ios-app', name);
  rmSync(work, { recursive: true, force: true });
  const target = path.join(work, 'root', 'Payload', path.basename(appDir));
  cpSync(appDir, target, {
    recursive: true,
    verbatimSymlinks: true,
    filter: (src) => {
      const rel = path.relative(appDir, src).split(path.sep).join('/');
      return !exclude.some((prefix) => rel === prefix || rel.startsWith(`${prefix}/`) || (prefix.startsWith('*') && rel.endsWith(prefix.slice(1))));
    },
  });
  const out = path.join(work, `${name}.ipa`);
  return { path: out, bytes: zipFolder(path.join(work, 'root'), out) };
}

export interface GeneratedApp {
  /** The .ipa file. */
  path: string;
  bytes: Buffer;
  bundleId: string;
  extensionId: string;
  /** Zip names of the Mach-O files in the app. */
  machO: string[];
}

function infoPlist(entries: Record<string, string | string[]>, extra = ''): string {
  const body = Object.entries(entries)
    .map(([k, v]) => `\t<key>${k}</key>\n${Array.isArray(v) ? `\t<array>${v.map((s) => `<string>${s}</string>`).join('')}</array>` : `\t<string>${v}</string>`}`)
    .join('\n');
  return `<?xml version="1.0" encoding="UTF-8"?>\n<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">\n<plist version="1.0">\n<dict>\n${body}\n${extra}</dict>\n</plist>\n`;
}

/**
 * Payload/Signet.app with: main executable (arm64), Frameworks/Kit.framework (dylib + Info.plist
 * + a symlinked resource), Frameworks/libhelper.dylib (loose), PlugIns/Widget.appex (own
 * executable and bundle id), en.lproj + Base.lproj resources, a symlink in the app root and a
 * storyboard-like folder with its own Info.plist (not a bundle). `omit` leaves files out;
 * `fillerBytes` adds an incompressible resource of that size.
 */
export function generatedApp(name = 'generated', options: { bundleId?: string; store?: boolean; watch?: boolean; omit?: readonly string[]; fillerBytes?: number } = {}): GeneratedApp {
  const bundleId = options.bundleId ?? 'com.signet.generated';
  const work = testOutputDir('ios-app', name);
  rmSync(work, { recursive: true, force: true });
  const app = path.join(work, 'root', 'Payload', 'Signet.app');
  const write = (rel: string, data: string | Buffer, mode?: number): void => {
    const file = path.join(app, rel);
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, data);
    if (mode !== undefined) spawnSync('chmod', [mode.toString(8), file]);
  };
  const exe = buildThin({ arch: 'arm64', kind: 'executable', minOS: '14.0' });
  const dylib = buildThin({ arch: 'arm64', kind: 'dylib', minOS: '14.0' });
  write('Info.plist', infoPlist({ CFBundleIdentifier: bundleId, CFBundleExecutable: 'Signet', CFBundleName: 'Signet', CFBundlePackageType: 'APPL', CFBundleShortVersionString: '1.0', CFBundleVersion: '7', MinimumOSVersion: '14.0' }));
  write('Signet', exe, 0o755);
  write('PkgInfo', 'APPL????');
  write('en.lproj/Localizable.strings', '"hello" = "Hello";\n');
  write('fr.lproj/Localizable.strings', '"hello" = "Bonjour";\n');
  write('Base.lproj/Main.storyboardc/Info.plist', infoPlist({ UIStoryboardDesignatedEntryPointIdentifier: 'main' }));
  write('Base.lproj/Main.storyboardc/main.nib', Buffer.alloc(300, 7));
  write('assets/data.bin', Buffer.from(Array.from({ length: 5000 }, (_, i) => (i * 31) & 0xff)));
  symlinkSync('assets/data.bin', path.join(app, 'data-link.bin'));
  if (options.fillerBytes) {
    // A large resource that does not compress (a package big enough to need many range reads).
    const filler = Buffer.alloc(options.fillerBytes);
    let x = 2463534242; // xorshift32
    for (let i = 0; i < filler.length; i += 1) {
      x ^= x << 13;
      x ^= x >>> 17;
      x ^= x << 5;
      filler[i] = x & 0xff;
    }
    write('assets/filler.bin', filler);
  }
  write('Frameworks/Kit.framework/Info.plist', infoPlist({ CFBundleIdentifier: 'com.signet.kit', CFBundleExecutable: 'Kit', CFBundlePackageType: 'FMWK', CFBundleShortVersionString: '3.1' }));
  write('Frameworks/Kit.framework/Kit', dylib, 0o755);
  write('Frameworks/Kit.framework/Resources/theme.json', '{"accent":"#ff6600"}\n');
  symlinkSync('Resources/theme.json', path.join(app, 'Frameworks/Kit.framework/theme.json'));
  write('Frameworks/libhelper.dylib', dylib, 0o755);
  const extensionId = `${bundleId}.widget`;
  write(
    'PlugIns/Widget.appex/Info.plist',
    infoPlist({ CFBundleIdentifier: extensionId, CFBundleExecutable: 'Widget', CFBundlePackageType: 'XPC!', CFBundleShortVersionString: '1.0', MinimumOSVersion: '14.0' }, '\t<key>NSExtension</key>\n\t<dict>\n\t\t<key>NSExtensionPointIdentifier</key>\n\t\t<string>com.apple.widgetkit-extension</string>\n\t</dict>\n'),
  );
  write('PlugIns/Widget.appex/Widget', exe, 0o755);
  write('PlugIns/Widget.appex/en.lproj/Widget.strings', '"title" = "Widget";\n');
  const extra: string[] = [];
  if (options.watch === true) {
    // A watch app (own bundle id and profile, names its iPhone app) and an XPC service nested in
    // the framework: three levels of bundles.
    write('Watch/SignetWatch.app/Info.plist', infoPlist({ CFBundleIdentifier: `${bundleId}.watchkitapp`, CFBundleExecutable: 'SignetWatch', CFBundlePackageType: 'APPL', CFBundleShortVersionString: '1.0', WKCompanionAppBundleIdentifier: bundleId }));
    write('Watch/SignetWatch.app/SignetWatch', exe, 0o755);
    write('Frameworks/Kit.framework/XPCServices/Helper.xpc/Info.plist', infoPlist({ CFBundleIdentifier: 'com.signet.kit.helper', CFBundleExecutable: 'Helper', CFBundlePackageType: 'XPC!' }));
    write('Frameworks/Kit.framework/XPCServices/Helper.xpc/Helper', exe, 0o755);
    extra.push('Watch/SignetWatch.app/SignetWatch', 'Frameworks/Kit.framework/XPCServices/Helper.xpc/Helper');
  }
  writeFileSync(path.join(work, 'root', 'iTunesMetadata.plist'), infoPlist({ itemName: 'Signet' }));
  mkdirSync(path.join(work, 'root', 'SwiftSupport', 'iphoneos'), { recursive: true });
  writeFileSync(path.join(work, 'root', 'SwiftSupport', 'iphoneos', 'README'), 'kept untouched\n');
  // Files left out of the archive (paths relative to the app), to make broken variants.
  for (const rel of options.omit ?? []) rmSync(path.join(app, rel));
  const out = path.join(work, `${name}.ipa`);
  const bytes = zipFolder(path.join(work, 'root'), out, { store: options.store ?? false });
  const machO = ['Signet', 'Frameworks/Kit.framework/Kit', 'Frameworks/libhelper.dylib', 'PlugIns/Widget.appex/Widget', ...extra]
    .filter((p) => !(options.omit ?? []).includes(p))
    .map((p) => `Payload/Signet.app/${p}`);
  return { path: out, bytes, bundleId, extensionId, machO };
}

/** Size of a file (for bench and memory checks). */
export function fileSize(file: string): number {
  return statSync(file).size;
}

// ---- independent oracles ----------------------------------------------------------------------

/**
 * Checks every bundle's seal with code that shares nothing with Signet: Info-ZIP `unzip`
 * extracts the .ipa, Python's plistlib reads each `_CodeSignature/CodeResources` and hashlib
 * hashes the files. Every file must be sealed in files2 with its SHA-256 (symlinks by target),
 * except the main executable, `_CodeSignature/` and the files Apple's rules2 omit (Info.plist and
 * PkgInfo at the bundle root, .DS_Store); every sealed entry must exist. Returns the problems
 * and the number of files checked.
 */
export function pythonSealCheck(ipa: string, name: string): { problems: string[]; checked: number; bundles: number } {
  const dir = testOutputDir('ios-app', `${name}-extracted`);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const unzip = spawnSync('unzip', ['-q', ipa, '-d', dir], { encoding: 'utf8' });
  if (unzip.status !== 0) throw new Error(`unzip failed: ${unzip.stderr}`);
  const script = String.raw`
import hashlib, json, os, plistlib, sys
root = sys.argv[1]
problems, checked, bundles = [], 0, 0
for here, dirs, files in os.walk(root):
    cr = os.path.join(here, '_CodeSignature', 'CodeResources')
    if not os.path.isfile(cr):
        continue
    bundles += 1
    with open(cr, 'rb') as f: seal = plistlib.load(f)
    with open(os.path.join(here, 'Info.plist'), 'rb') as f: info = plistlib.load(f)
    main = info.get('CFBundleExecutable')
    files2 = seal['files2']
    seen = set()
    for sub, _, names in os.walk(here):
        for n in names + [d for d in os.listdir(sub) if os.path.islink(os.path.join(sub, d)) and os.path.isdir(os.path.join(sub, d))]:
            full = os.path.join(sub, n)
            rel = os.path.relpath(full, here).replace(os.sep, '/')
            if rel.startswith('_CodeSignature/') or rel == main: continue
            if rel in ('Info.plist', 'PkgInfo') or rel.endswith('.DS_Store') or rel.split('/')[-1] == '.DS_Store': continue
            seen.add(rel)
            entry = files2.get(rel)
            if entry is None:
                problems.append('%s: %s unsealed' % (here, rel)); continue
            checked += 1
            if os.path.islink(full):
                if entry.get('symlink') != os.readlink(full): problems.append('%s: %s symlink differs' % (here, rel))
            else:
                with open(full, 'rb') as f: digest = hashlib.sha256(f.read()).digest()
                if entry.get('hash2') != digest: problems.append('%s: %s hash2 differs' % (here, rel))
    for rel in files2:
        if rel not in seen and not files2[rel].get('optional'): problems.append('%s: %s sealed but missing' % (here, rel))
print(json.dumps({'problems': problems, 'checked': checked, 'bundles': bundles}))
`;
  const run = spawnSync('python3', ['-c', script, dir], { encoding: 'utf8' });
  if (run.status !== 0) throw new Error(`python seal check failed: ${run.stderr}`);
  return JSON.parse(run.stdout) as { problems: string[]; checked: number; bundles: number };
}

/** Extracts every file of an .ipa with Info-ZIP `unzip` and returns the folder. */
export function unzipIpa(ipa: string, name: string): string {
  const dir = testOutputDir('ios-app', `${name}-unzipped`);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const unzip = spawnSync('unzip', ['-q', ipa, '-d', dir], { encoding: 'utf8' });
  if (unzip.status !== 0) throw new Error(`unzip failed: ${unzip.stderr}`);
  return dir;
}

/**
 * `openssl cms -verify` of every slice's CMS over its CodeDirectory, this time with the chain:
 * the certificates in the CMS must lead to `rootPem` (the test CA). Returns the failures.
 */
export function opensslVerifyChain(bytes: Buffer, rootPem: string, name: string): string[] {
  const dir = testOutputDir('ios-app', `chain-${name}`);
  mkdirSync(dir, { recursive: true });
  const root = path.join(dir, 'root.pem');
  writeFileSync(root, rootPem);
  const file = parseMachO(bytes);
  const failures: string[] = [];
  (file.kind === 'thin' ? [file.slice] : file.slices).forEach((slice, i) => {
    const command = codeSignatureCommand(slice);
    if (command === undefined) {
      failures.push(`slice ${i}: unsigned`);
      return;
    }
    const entries = parseSuperBlob(slice.data.subarray(command.dataoff, command.dataoff + command.datasize));
    const cd = path.join(dir, `cd-${i}.bin`);
    const sig = path.join(dir, `sig-${i}.der`);
    writeFileSync(cd, entries.find((e) => e.type === 0)!.blob);
    writeFileSync(sig, entries.find((e) => e.type === 0x10000)!.blob.subarray(8));
    const run = spawnSync('openssl', ['cms', '-verify', '-binary', '-inform', 'DER', '-in', sig, '-content', cd, '-CAfile', root, '-purpose', 'any', '-out', '/dev/null'], { encoding: 'utf8' });
    if (run.status !== 0) failures.push(`slice ${i}: ${run.stderr.trim()}`);
  });
  return failures;
}
