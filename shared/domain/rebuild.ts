/**
 * When a subject needs a rebuild (a fact of committed state, never of the process that appended):
 * it has events but no summary, its summary's epoch is not the clock's (a revocation,
 * supersession, new conflict or trust change since), or the tail its summary does not cover has
 * reached `rebuildAfterEvents`. Null when the summary is current enough.
 */
export function rebuildReason(
  clock: { highWater: number; inputEpoch: number },
  alias: { sourceEpoch: number; coversThrough: number } | null,
  rebuildAfterEvents: number,
): string | null {
  if (alias === null) return clock.highWater > 0 ? "events but no summary yet" : null;
  if (alias.sourceEpoch !== clock.inputEpoch)
    return `the sources changed (summary epoch ${alias.sourceEpoch}, clock ${clock.inputEpoch})`;
  const tail = clock.highWater - alias.coversThrough;
  if (tail >= rebuildAfterEvents)
    return `${tail} events since the summary (rebuild after ${rebuildAfterEvents})`;
  return null;
}

/**
 * Whether the published summary already is what consolidating this snapshot would make: it covers
 * exactly the snapshot's high-water mark at the snapshot's epoch, so its inputs (the valid events
 * through that mark under that epoch's policy and selector) are the snapshot's. A retried or
 * repeated consolidation of an unchanged subject then publishes nothing new.
 */
export function summaryCoversSnapshot(
  snapshot: { highWater: number; inputEpoch: number },
  alias: { sourceEpoch: number; coversThrough: number } | null,
): boolean {
  return (
    alias !== null && alias.coversThrough === snapshot.highWater && alias.sourceEpoch === snapshot.inputEpoch
  );
}
