// What the benches that run `memgate serve` measure it by: latency percentiles of a set of
// samples and the server process's CPU time.
import { readFileSync } from "node:fs";

export interface Latencies {
  count: number;
  perSecond: number;
  p50: number;
  p99: number;
  max: number;
  failed: number;
}

/** CPU milliseconds (user + system, all its threads) a process has used so far, from /proc (Linux; 0 elsewhere). */
export function cpuMs(pid: number | undefined): number {
  return ticksMs(`/proc/${pid}/stat`);
}

/** CPU milliseconds of a process's main thread alone (the one that answers `memgate serve`'s requests). */
export function mainThreadCpuMs(pid: number | undefined): number {
  return ticksMs(`/proc/${pid}/task/${pid}/stat`);
}

function ticksMs(statFile: string): number {
  try {
    const fields = readFileSync(statFile, "utf8").split(") ")[1]?.split(" ") ?? [];
    // utime and stime are fields 14 and 15 of stat, in clock ticks (100 per second on Linux).
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
  } catch {
    return 0;
  }
}

/** p50, p99 and max of latency samples (ms) taken over `seconds`, with how many failed. */
export function latencies(samples: number[], seconds: number, failed: number): Latencies {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
  return {
    count: sorted.length,
    perSecond: sorted.length / seconds,
    p50: at(0.5),
    p99: at(0.99),
    max: sorted[sorted.length - 1] ?? 0,
    failed,
  };
}

/** Milliseconds as the tables print them: one decimal under 10. */
export const ms = (value: number) => (value < 10 ? value.toFixed(1) : value.toFixed(0));
