import { execFile } from "node:child_process";
import { join } from "node:path";

export const BIN = join(import.meta.dirname, "../bin/memgate.js");

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Runs the real memgate executable; resolves with its exit code (or killing signal) and output. */
export function memgate(
  args: string[],
  options: { env?: Record<string, string>; input?: string } = {},
): Promise<CliResult> {
  return new Promise((resolve) => {
    const child = execFile(
      process.execPath,
      [BIN, ...args],
      { env: { ...process.env, ...options.env }, maxBuffer: 64 * 1024 * 1024 },
      (error, stdout, stderr) => {
        const failed = error as (Error & { code?: number | string; signal?: NodeJS.Signals }) | null;
        resolve({
          code: failed ? (typeof failed.code === "number" ? failed.code : null) : 0,
          signal: failed?.signal ?? null,
          stdout,
          stderr,
        });
      },
    );
    if (options.input !== undefined) child.stdin?.end(options.input);
  });
}
