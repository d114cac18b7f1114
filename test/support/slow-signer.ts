// TEST-ONLY signers, wired exclusively by test/support/serve-entry.ts (never by src/main): they
// let service tests exercise the task lifecycle before and independently of the real engines.
// - slow: waits SIGNET_TEST_SIGN_MS (honouring the abort signal), then copies the input as the
//   "artifact" (read through the DataSource like the engines: range GETs on S3). Used to keep
//   tasks in flight for the crash test.
// - failing: throws a catalogue error, to see a task fail with an engine's code.
import { open, writeFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { SigningError } from '../../src/signing/errors.ts';
import type { DataSource } from '../../src/signing/data-source.ts';
import type { Platform, SignRequest, SignResult, Signer } from '../../src/services/signer.ts';

export function slowCopySigner(platform: Platform, delayMs: number): Signer {
  return {
    platform,
    certTypes: ['enterprise'],
    async sign(request: SignRequest): Promise<SignResult> {
      await sleep(delayMs, undefined, { signal: request.signal });
      await copySource(request.input, request.outputPath);
      return { app: { bundleId: null, name: null, version: null, build: null }, verification: ['test-only copy'] };
    },
  };
}

/** Writes half of the input as its output, then waits: a run caught mid-write leaves a partial file. */
export function writingSigner(platform: Platform, delayMs: number): Signer {
  return {
    platform,
    certTypes: ['enterprise'],
    async sign(request: SignRequest): Promise<SignResult> {
      await writeFile(request.outputPath, await request.input.read(0, request.input.size >> 1));
      await writeFile(`${request.outputPath}.scratch`, Buffer.alloc(1024 * 1024, 1));
      await sleep(delayMs, undefined, { signal: request.signal });
      await copySource(request.input, request.outputPath);
      return { app: { bundleId: null, name: null, version: null, build: null }, verification: ['test-only copy'] };
    },
  };
}

export function failingSigner(platform: Platform): Signer {
  return {
    platform,
    certTypes: ['enterprise'],
    async sign(): Promise<SignResult> {
      throw new SigningError('apk_invalid', 'test signer: refusing this package');
    },
  };
}

/** Throws a plain Error (an engine bug, not a verdict): the task fails signing_failed at once, not retried. */
export function crashingSigner(platform: Platform): Signer {
  return {
    platform,
    certTypes: ['enterprise'],
    async sign(): Promise<SignResult> {
      throw new TypeError('test signer: unexpected internal failure');
    },
  };
}

/** Fails like a full disk on its first `failures` runs (a machine problem, retried), then copies. */
export function flakySigner(platform: Platform, failures = 1): Signer {
  let left = failures;
  return {
    platform,
    certTypes: ['enterprise'],
    async sign(request: SignRequest): Promise<SignResult> {
      if (left > 0) {
        left -= 1;
        throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC', errno: -28, syscall: 'write' });
      }
      await copySource(request.input, request.outputPath);
      return { app: { bundleId: null, name: null, version: null, build: null }, verification: ['test-only copy'] };
    },
  };
}

/** Kills its own process mid-task, like an OOM kill: the run is lost and counts as an attempt. */
export function killingSigner(platform: Platform): Signer {
  return {
    platform,
    certTypes: ['enterprise'],
    async sign(): Promise<SignResult> {
      process.kill(process.pid, 'SIGKILL');
      return new Promise<never>(() => {});
    },
  };
}

/** The package name that makes judgingSigner fail a task (found in the APK's bytes, UTF-8 or UTF-16). */
export const FAILING_PACKAGE = 'com.example.mustfail';

/**
 * Waits `delayMs`, then copies the input as the artifact, unless the package names
 * FAILING_PACKAGE: then it fails with the engine code apk_invalid. Lets one server show both a
 * succeeding and a failing task.
 */
export function judgingSigner(platform: Platform, delayMs: number): Signer {
  return {
    platform,
    certTypes: ['enterprise'],
    async sign(request: SignRequest): Promise<SignResult> {
      await sleep(delayMs, undefined, { signal: request.signal });
      const input = await request.input.read(0, request.input.size);
      if (input.includes(Buffer.from(FAILING_PACKAGE, 'utf16le')) || input.includes(Buffer.from(FAILING_PACKAGE))) {
        throw new SigningError('apk_invalid', `test signer: ${FAILING_PACKAGE} is refused`);
      }
      await copySource(request.input, request.outputPath);
      return { app: { bundleId: null, name: null, version: null, build: null }, verification: ['test-only copy'] };
    },
  };
}

/** Copies `source` into the file `target` in 1 MiB reads. */
async function copySource(source: DataSource, target: string): Promise<void> {
  const file = await open(target, 'w');
  try {
    for (let offset = 0; offset < source.size; offset += 1 << 20) await file.write(await source.read(offset, Math.min(1 << 20, source.size - offset)));
  } finally {
    await file.close();
  }
}
