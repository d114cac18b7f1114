// Exit codes are the CLI's contract with pipelines (documented in the README):
// 0 succeeded, 1 the task failed or the server refused the request, 2 usage, 3 authentication or
// permission, 4 network or server unavailable after retries (or the wait timed out).
export const EXIT = { ok: 0, failed: 1, usage: 2, auth: 3, unavailable: 4 } as const;
export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

export class CliError extends Error {
  readonly exitCode: ExitCode;
  /** A stable code: the server's catalogue code, or one of the CLI's own. */
  readonly code: string;
  constructor(exitCode: ExitCode, code: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.exitCode = exitCode;
    this.code = code;
  }
}

export class UsageError extends CliError {
  constructor(message: string) {
    super(EXIT.usage, 'usage', message);
  }
}

/** An error answer of the API: 401/403 are authentication (exit 3), anything else a refusal (exit 1). */
export class ApiError extends CliError {
  readonly status: number;
  constructor(status: number, code: string, message: string) {
    super(status === 401 || status === 403 ? EXIT.auth : EXIT.failed, code, message);
    this.status = status;
  }
}

export class UnavailableError extends CliError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(EXIT.unavailable, 'unavailable', message, options);
  }
}
