import { cpus } from "node:os";
import { performance } from "node:perf_hooks";

/**
 * How loaded this process's serving thread and the machine were over a span: what a worker that
 * shares the machine with requests asks before it takes the CPU again.
 */
export interface LoadReading {
  /** The share of the span this thread's event loop was busy (0 to 1). */
  servingBusy: number;
  /** How many cores, on average, were idle over the span. */
  idleCores: number;
}

/** Starts a measure now; the function it returns reads the span since then. */
export type LoadMeter = () => () => LoadReading;

/** This thread's event-loop utilisation and the machine's idle time (the kernel's, per core). */
export const measureLoad: LoadMeter = () => {
  const loop = performance.eventLoopUtilization();
  const startedAt = performance.now();
  const idleBefore = idleMs();
  return () => ({
    servingBusy: performance.eventLoopUtilization(loop).utilization,
    idleCores: (idleMs() - idleBefore) / Math.max(1, performance.now() - startedAt),
  });
};

function idleMs(): number {
  let idle = 0;
  for (const core of cpus()) idle += core.times.idle;
  return idle;
}
