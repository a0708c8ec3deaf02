// `memgate serve` as a child process on a free loopback port: started, its URL read from stdout,
// stopped with a signal; its stderr (one line per request) kept for assertions.
import { type ChildProcess, spawn } from "node:child_process";
import { BIN } from "./cli.ts";

export interface ServeProcess {
  url: string;
  child: ChildProcess;
  stderr(): string;
  /** Sends the signal and resolves with the exit code once the process has ended. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

export interface ServeStartOptions {
  /** Another build's bin/memgate.js (a bench comparing builds); default this checkout's. */
  bin?: string;
  /** Node's own flags for the server process (a bench profiling it: --cpu-prof, --prof). */
  nodeArgs?: readonly string[];
}

export function startServe(
  args: string[],
  env: Record<string, string> = {},
  options: ServeStartOptions = {},
): Promise<ServeProcess> {
  const bin = options.bin ?? BIN;
  const child = spawn(process.execPath, [...(options.nodeArgs ?? []), bin, "serve", "--port", "0", ...args], {
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stderr?.on("data", (chunk) => {
    stderr += String(chunk);
  });
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`memgate serve did not print its URL within 30 s: ${stderr}`));
    }, 30_000);
    const early = (code: number | null) => {
      clearTimeout(timer);
      reject(new Error(`memgate serve exited with ${code} before listening: ${stderr}`));
    };
    child.once("exit", early);
    child.stdout?.on("data", (chunk) => {
      stdout += String(chunk);
      const match = /listening on (http:\/\/\S+)/.exec(stdout);
      if (!match?.[1]) return;
      clearTimeout(timer);
      child.off("exit", early);
      resolve({
        url: match[1],
        child,
        stderr: () => stderr,
        stop: async (signal = "SIGTERM") => {
          child.kill(signal);
          return exited;
        },
      });
    });
  });
}
