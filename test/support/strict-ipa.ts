// An independent strict check of a signed .ipa, sharing no code with Signet: Info-ZIP `unzip`
// extracts it; Python reads each bundle's Info.plist, walks its executable's load commands to
// LC_CODE_SIGNATURE and the SuperBlob (Apple's cs_blobs.h layout: big-endian magic 0xfade0cc0,
// index of (type, offset); slot 0 CodeDirectory, slot 5 XML entitlements 0xfade7171, slot
// 0x10000 CMS wrapper 0xfade0b01) and hands the CMS to `openssl cms -verify` with the test root
// as the only trust anchor (the chain must lead there); each embedded.mobileprovision is
// verified the same way and its plist read with plistlib. The resource seals are checked by
// pythonSealCheck (ios-app.ts). Returns, per provisioned bundle, what the device would see.
import { spawnSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { testOutputDir } from './fixtures.ts';
import { pythonSealCheck } from './ios-app.ts';

export interface StrictBundle {
  /** Relative to Payload/, e.g. "Signet.app/PlugIns/Widget.appex". */
  path: string;
  bundleId: string;
  entitlements: Record<string, unknown> | null;
  profile: { uuid: string; name: string; applicationIdentifier: string; entitlements: Record<string, unknown> } | null;
}

export interface StrictReport {
  problems: string[];
  bundles: StrictBundle[];
}

const SCRIPT = String.raw`
import json, os, plistlib, struct, subprocess, sys
root, ca, work = sys.argv[1], sys.argv[2], sys.argv[3]
problems, bundles = [], []

def first_slice(data):
    magic = struct.unpack('>I', data[:4])[0]
    if magic in (0xcafebabe, 0xcafebabf):
        n = struct.unpack('>I', data[4:8])[0]
        if magic == 0xcafebabe:
            off, size = struct.unpack('>II', data[16:24])
        else:
            off, size = struct.unpack('>QQ', data[16:32])
        return data[off:off + size]
    return data

def code_signature(slice_):
    magic = struct.unpack('<I', slice_[:4])[0]
    if magic not in (0xfeedfacf, 0xfeedface):
        raise ValueError('not a little-endian Mach-O')
    ncmds = struct.unpack('<I', slice_[16:20])[0]
    at = 32 if magic == 0xfeedfacf else 28
    for _ in range(ncmds):
        cmd, size = struct.unpack('<II', slice_[at:at + 8])
        if cmd == 0x1d:
            off, length = struct.unpack('<II', slice_[at + 8:at + 16])
            return slice_[off:off + length]
        at += size
    return None

def blobs(sb):
    magic, length, count = struct.unpack('>III', sb[:12])
    if magic != 0xfade0cc0:
        raise ValueError('bad SuperBlob magic %x' % magic)
    out = {}
    for i in range(count):
        typ, off = struct.unpack('>II', sb[12 + 8 * i:20 + 8 * i])
        bmagic, blen = struct.unpack('>II', sb[off:off + 8])
        out[typ] = (bmagic, sb[off:off + blen])
    return out

def cms_verify(der, content, name):
    sig = os.path.join(work, name + '.der')
    with open(sig, 'wb') as f: f.write(der)
    args = ['openssl', 'cms', '-verify', '-binary', '-inform', 'DER', '-in', sig, '-CAfile', ca, '-purpose', 'any']
    if content is not None:
        cd = os.path.join(work, name + '.cd')
        with open(cd, 'wb') as f: f.write(content)
        args += ['-content', cd]
    run = subprocess.run(args, capture_output=True)
    return run.returncode == 0, run.stdout, run.stderr.decode().strip()

n = 0
for here, dirs, files in os.walk(root):
    if 'Info.plist' not in files: continue
    with open(os.path.join(here, 'Info.plist'), 'rb') as f: info = plistlib.load(f)
    exe = info.get('CFBundleExecutable')
    if not exe or not os.path.isfile(os.path.join(here, exe)): continue
    rel = os.path.relpath(here, os.path.join(root, 'Payload')).replace(os.sep, '/')
    with open(os.path.join(here, exe), 'rb') as f: sb = code_signature(first_slice(f.read()))
    if sb is None:
        problems.append('%s: unsigned' % rel); continue
    b = blobs(sb)
    n += 1
    if 0x10000 not in b or 0 not in b:
        problems.append('%s: no CMS signature' % rel); continue
    ok, _, err = cms_verify(b[0x10000][1][8:], b[0][1], 'sig%d' % n)
    if not ok: problems.append('%s: openssl cms -verify of the code signature: %s' % (rel, err))
    entitlements = None
    if 5 in b:
        if b[5][0] != 0xfade7171: problems.append('%s: entitlements blob magic %x' % (rel, b[5][0]))
        else: entitlements = plistlib.loads(b[5][1][8:])
    profile = None
    prov = os.path.join(here, 'embedded.mobileprovision')
    if os.path.isfile(prov):
        with open(prov, 'rb') as f: der = f.read()
        ok, content, err = cms_verify(der, None, 'prof%d' % n)
        if not ok: problems.append('%s: openssl cms -verify of embedded.mobileprovision: %s' % (rel, err))
        else:
            p = plistlib.loads(content)
            profile = {'uuid': p['UUID'], 'name': p['Name'], 'applicationIdentifier': p['Entitlements']['application-identifier'], 'entitlements': p['Entitlements']}
    if entitlements is None and profile is None: continue
    bundles.append({'path': rel, 'bundleId': info.get('CFBundleIdentifier'), 'entitlements': entitlements, 'profile': profile})
print(json.dumps({'problems': problems, 'bundles': bundles}, default=str))
`;

export function strictIpaCheck(ipa: string, rootPem: string, name: string): StrictReport {
  const dir = testOutputDir('strict-ipa', name);
  rmSync(dir, { recursive: true, force: true });
  const extracted = path.join(dir, 'x');
  const work = path.join(dir, 'work');
  mkdirSync(extracted, { recursive: true });
  mkdirSync(work, { recursive: true });
  const unzip = spawnSync('unzip', ['-q', ipa, '-d', extracted], { encoding: 'utf8' });
  if (unzip.status !== 0) throw new Error(`unzip failed: ${unzip.stderr}`);
  const ca = path.join(dir, 'root.pem');
  writeFileSync(ca, rootPem);
  const run = spawnSync('python3', ['-c', SCRIPT, extracted, ca, work], { encoding: 'utf8' });
  if (run.status !== 0) throw new Error(`strict check failed: ${run.stderr}`);
  const report = JSON.parse(run.stdout) as StrictReport;
  const seal = pythonSealCheck(ipa, `${name}-seal`);
  return { problems: [...report.problems, ...seal.problems], bundles: report.bundles };
}
