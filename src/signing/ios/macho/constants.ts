// Mach-O constants used by the signer, from <mach-o/loader.h>, <mach-o/fat.h> and <mach/machine.h>.

export const MH_MAGIC = 0xfeedface;
export const MH_MAGIC_64 = 0xfeedfacf;
export const MH_CIGAM = 0xcefaedfe;
export const MH_CIGAM_64 = 0xcffaedfe;
export const FAT_MAGIC = 0xcafebabe;
export const FAT_MAGIC_64 = 0xcafebabf;

/** Java class files share 0xcafebabe, followed by a class-file version (major ≥ 45); fat files hold a handful of slices. */
export const MAX_FAT_ARCHS = 32;

export const CPU_ARCH_ABI64 = 0x01000000;
export const CPU_ARCH_ABI64_32 = 0x02000000;
export const CPU_TYPE_X86 = 7;
export const CPU_TYPE_X86_64 = CPU_TYPE_X86 | CPU_ARCH_ABI64;
export const CPU_TYPE_ARM = 12;
export const CPU_TYPE_ARM64 = CPU_TYPE_ARM | CPU_ARCH_ABI64;
export const CPU_TYPE_ARM64_32 = CPU_TYPE_ARM | CPU_ARCH_ABI64_32;
export const CPU_TYPE_POWERPC = 18;
export const CPU_TYPE_POWERPC64 = CPU_TYPE_POWERPC | CPU_ARCH_ABI64;
export const CPU_SUBTYPE_MASK = 0xff000000;
export const CPU_SUBTYPE_ARM64E = 2;
export const CPU_SUBTYPE_ARM_V7 = 9;
export const CPU_SUBTYPE_ARM_V7S = 11;
export const CPU_SUBTYPE_ARM_V7K = 12;

export const MH_EXECUTE = 0x2;
export const MH_DYLIB = 0x6;
export const MH_BUNDLE = 0x8;
export const MH_DSYM = 0xa;

export const LC_REQ_DYLD = 0x80000000;
export const LC_SEGMENT = 0x1;
export const LC_SYMTAB = 0x2;
export const LC_UUID = 0x1b;
export const LC_SEGMENT_64 = 0x19;
export const LC_CODE_SIGNATURE = 0x1d;
export const LC_ENCRYPTION_INFO = 0x21;
export const LC_VERSION_MIN_MACOSX = 0x24;
export const LC_VERSION_MIN_IPHONEOS = 0x25;
export const LC_ENCRYPTION_INFO_64 = 0x2c;
export const LC_VERSION_MIN_TVOS = 0x2f;
export const LC_VERSION_MIN_WATCHOS = 0x30;
export const LC_BUILD_VERSION = 0x32;

export const PLATFORM_MACOS = 1;
export const PLATFORM_IOS = 2;
export const PLATFORM_TVOS = 3;
export const PLATFORM_WATCHOS = 4;
export const PLATFORM_BRIDGEOS = 5;
export const PLATFORM_MACCATALYST = 6;
export const PLATFORM_IOSSIMULATOR = 7;
export const PLATFORM_TVOSSIMULATOR = 8;
export const PLATFORM_WATCHOSSIMULATOR = 9;
export const PLATFORM_DRIVERKIT = 10;
export const PLATFORM_VISIONOS = 11;
export const PLATFORM_VISIONOSSIMULATOR = 12;

/** Size of linkedit_data_command (LC_CODE_SIGNATURE). */
export const LINKEDIT_DATA_COMMAND_SIZE = 16;

/** Human name of a cputype/cpusubtype pair, for messages and reports. */
export function archName(cputype: number, cpusubtype: number): string {
  const sub = cpusubtype & ~CPU_SUBTYPE_MASK;
  switch (cputype) {
    case CPU_TYPE_ARM64:
      return sub === CPU_SUBTYPE_ARM64E ? 'arm64e' : 'arm64';
    case CPU_TYPE_ARM64_32:
      return 'arm64_32';
    case CPU_TYPE_ARM:
      if (sub === CPU_SUBTYPE_ARM_V7) return 'armv7';
      if (sub === CPU_SUBTYPE_ARM_V7S) return 'armv7s';
      if (sub === CPU_SUBTYPE_ARM_V7K) return 'armv7k';
      return `arm(${sub})`;
    case CPU_TYPE_X86_64:
      return 'x86_64';
    case CPU_TYPE_X86:
      return 'i386';
    case CPU_TYPE_POWERPC:
      return 'ppc';
    case CPU_TYPE_POWERPC64:
      return 'ppc64';
    default:
      return `cpu(${cputype >>> 0}/${sub})`;
  }
}

/** VM page size the kernel maps this CPU with: __LINKEDIT.vmsize is rounded to it (arm64 16 KiB). */
export function segmentPageSize(cputype: number): number {
  return cputype === CPU_TYPE_ARM64 || cputype === CPU_TYPE_ARM64_32 ? 0x4000 : 0x1000;
}
