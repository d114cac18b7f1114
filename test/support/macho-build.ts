// Builds small Mach-O binaries at test time with clang + ld64.lld (LLVM 14 from Debian). Apple
// SDKs cannot be linked here, so the programs are libc-free (`-e _main`, no dylib imports), and
// the arm/x86 code is relocation-light because lld 14's armv7 support is partial. Fat files are
// assembled with our own fat builder (no lipo on Linux), using lipo's alignments.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { buildFat } from '../../src/signing/ios/macho/build.ts';
import { parseSlice } from '../../src/signing/ios/macho/parse.ts';
import { testOutputDir } from './fixtures.ts';

export type BuildArch = 'arm64' | 'arm64e' | 'x86_64' | 'armv7';

export interface MachOSpec {
  arch: BuildArch;
  kind: 'executable' | 'dylib';
  /** Minimum iOS version, e.g. "14.0" (x86_64 builds target the iOS simulator). */
  minOS?: string;
  /** Let the linker add its own ad-hoc signature (a binary that already has LC_CODE_SIGNATURE). */
  linkerSigned?: boolean;
  /** A file whose bytes go into a `__TEXT,__blob` section (to make big binaries). */
  blobFile?: string;
  /** Extra header padding for load commands (ld64 -headerpad). */
  headerPad?: number;
}

const LD = ['ld64.lld', 'ld64.lld-14'].find((name) => spawnSync('sh', ['-c', `command -v ${name}`]).status === 0);
const CLANG = spawnSync('sh', ['-c', 'command -v clang']).status === 0 ? 'clang' : undefined;

/** `{ skip }` for node:test when clang or ld64.lld is missing. */
export function needsToolchain(): { skip: string | false } {
  return CLANG && LD ? { skip: false } : { skip: 'clang and ld64.lld are needed to build Mach-O test binaries' };
}

const TRIPLES: Record<BuildArch, (min: string) => string> = {
  arm64: (min) => `arm64-apple-ios${min}`,
  arm64e: (min) => `arm64e-apple-ios${min}`,
  x86_64: (min) => `x86_64-apple-ios${min}-simulator`,
  armv7: (min) => `armv7-apple-ios${min}`,
};

// Code without relocations the lld 14 armv7 backend rejects.
const EXECUTABLE_SOURCE = 'int main(void) { return 42; }\n';
const DYLIB_SOURCE = 'int signet_helper(int x) { return x * 7; }\n';

/** Links one thin binary and returns its bytes (cached by spec under test-output/). */
export function buildThin(spec: MachOSpec): Buffer {
  if (!CLANG || !LD) throw new Error('clang/ld64.lld not available');
  const min = spec.minOS ?? (spec.arch === 'armv7' ? '9.0' : '14.0');
  const key = createHash('sha256').update(JSON.stringify({ ...spec, min, blob: spec.blobFile ? readFileSync(spec.blobFile).length : 0 })).digest('hex').slice(0, 16);
  const dir = testOutputDir('macho-build', key);
  const out = path.join(dir, spec.kind === 'dylib' ? 'libsignet.dylib' : 'signet-test');
  if (existsSync(out)) return readFileSync(out);
  mkdirSync(dir, { recursive: true });
  const source = path.join(dir, 'source.c');
  writeFileSync(source, spec.kind === 'dylib' ? DYLIB_SOURCE : EXECUTABLE_SOURCE);
  const object = path.join(dir, 'source.o');
  run(CLANG, ['-target', TRIPLES[spec.arch](min), '-O1', '-c', source, '-o', object]);
  const platform = spec.arch === 'x86_64' ? 'ios-simulator' : 'ios';
  const args = ['-arch', spec.arch, '-platform_version', platform, min, min, '-o', out, object];
  if (spec.kind === 'dylib') args.push('-dylib', '-install_name', '@rpath/libsignet.dylib');
  else args.push('-e', '_main');
  if (spec.linkerSigned) args.push('-adhoc_codesign');
  if (spec.blobFile) args.push('-sectcreate', '__TEXT', '__blob', spec.blobFile);
  if (spec.headerPad !== undefined) args.push('-headerpad', `0x${spec.headerPad.toString(16)}`);
  run(LD!, args);
  return readFileSync(out);
}

/** A fat file of thin binaries, each aligned as lipo aligns it (arm 2^14, x86 2^12). */
export function buildFatFile(thins: Buffer[], options: { fat64?: boolean } = {}): Buffer {
  return buildFat(
    options.fat64 ?? false,
    thins.map((bytes) => {
      const { header } = parseSlice(bytes);
      const isArm = (header.cputype & 0xff) === 12;
      return { arch: { cputype: header.cputype, cpusubtype: header.cpusubtype, offset: undefined, align: isArm ? 14 : 12, reserved: 0 }, bytes };
    }),
  );
}

function run(command: string, args: string[]): void {
  const result = spawnSync(command, args, { encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`${command} ${args.join(' ')} failed:\n${result.stderr}`);
}
