/**
 * The time port: the use cases never read the clock themselves, they are handed one. Distinct from
 * the event log's `Clock` (ports/event-log.ts), which is a subject's high-water mark and epoch, not
 * time. Invariant: time only stamps records for people (`createdAt`) and measures durations; no
 * decision about what is valid, published or served depends on it.
 */

/** The wall clock (`() => new Date()` in every entry point): stamps artifacts and records. */
export type TimeSource = () => Date;

/** Milliseconds from an arbitrary origin that never goes back (`performance.now`): durations only. */
export type Stopwatch = () => number;

/**
 * Lets the other work of this thread run (a server's other requests) once the caller has run for a
 * slice: a long loop calls it between items, so no request holds the thread for long. Resolves at
 * once otherwise. It changes when work is done, never what it computes.
 */
export type Pause = () => Promise<void>;

/** Never lets anything else run: a process serving one request at a time (a Lambda), or a test. */
export const neverPause: Pause = () => Promise.resolve();

/** `items.map(map)`, pausing before each item: the loop every large request runs on a serving thread. */
export async function mapWithPauses<T, U>(
  items: readonly T[],
  pause: Pause,
  map: (item: T, index: number) => U,
): Promise<U[]> {
  const mapped: U[] = [];
  for (const [index, item] of items.entries()) {
    await pause();
    mapped.push(map(item, index));
  }
  return mapped;
}
