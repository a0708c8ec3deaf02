import { InputError } from "#ports/errors.ts";

/** The version `memgate --version` prints and the MCP server announces. */
export const MEMGATE_VERSION = "0.1.0";

/** Exit codes of CONTRACT §5. */
export const EXIT = {
  ok: 0,
  rejected: 1,
  badInput: 2,
  /** The store or an engine failed (unreachable, throttled past its retries, unexpected): safe to retry. */
  engineFailed: 3,
  publishRefused: 4,
  generationFailed: 5,
} as const;

/** Where a command writes: stdout for results, stderr for progress and errors. Injected for tests. */
export interface Io {
  out(text: string): void;
  err(text: string): void;
}

export const processIo: Io = {
  out: (text) => process.stdout.write(text.endsWith("\n") ? text : `${text}\n`),
  err: (text) => process.stderr.write(text.endsWith("\n") ? text : `${text}\n`),
};

/** A usage mistake: bad input (exit 2) shown with the command's usage line. */
export class UsageError extends InputError {
  constructor(message: string) {
    super(message);
    this.name = "UsageError";
  }
}
