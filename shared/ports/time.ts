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
