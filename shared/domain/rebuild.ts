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
