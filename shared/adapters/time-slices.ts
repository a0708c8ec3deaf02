import type { Pause } from "#ports/time.ts";

/** How long work runs before it lets the thread's other work run: well under a request's budget. */
export const SLICE_MS = 8;

let sliceStarted = performance.now();

/**
 * The pause of a thread that serves many requests (`memgate serve`, `memgate mcp`): once the work
 * that called it has run SLICE_MS since the thread last let others run, it waits for the event
 * loop's next turn (timers and sockets first), so a /healthz or a plain append waits at most a
 * slice behind the largest request. One slice per thread (a module's state is per thread), shared
 * by every piece of work on it.
 */
export const pauseBetweenSlices: Pause = async () => {
  if (performance.now() - sliceStarted < SLICE_MS) return;
  await new Promise<void>((resolve) => setImmediate(resolve));
  sliceStarted = performance.now();
};
