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

/**
 * A log of many lines a second (`memgate serve`'s request log): the lines logged in one pass of
 * the microtask queue go out in one write, one system call instead of one per line. The write is a
 * microtask queued by the pass's first line, so it runs before anything the code that logged a
 * line does after its next `await`: a request's line is out before its answer is sent, as when
 * each line was written at once.
 */
export function batchedLines(write: (text: string) => void): (line: string) => void {
  let pending: string[] = [];
  const flush = () => {
    const lines = pending;
    pending = [];
    write(`${lines.join("\n")}\n`);
  };
  return (line) => {
    if (pending.length === 0) queueMicrotask(flush);
    pending.push(line);
  };
}

/** A usage mistake: bad input (exit 2) shown with the command's usage line. */
export class UsageError extends InputError {
  constructor(message: string) {
    super(message);
    this.name = "UsageError";
  }
}

/**
 * A word a POSIX shell reads back as `text`, for a command the output suggests: bare when it holds
 * only characters no shell treats specially, else in single quotes (a `'` as `'\''`), or as `$'…'`
 * when it holds U+2028 or U+2029, which no line of recall's text may hold (bash, zsh and ksh read
 * the escapes).
 */
export function shellWord(text: string): string {
  if (/^[A-Za-z0-9_@%+=:,./-]+$/.test(text)) return text;
  if (/[\u2028\u2029]/.test(text))
    return `$'${text.replace(/[\\']/g, (c) => `\\${c}`).replace(/[\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16)}`)}'`;
  return `'${text.replaceAll("'", "'\\''")}'`;
}
