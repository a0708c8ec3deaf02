/**
 * The cold layer of a summary (CONTRACT §2): the valid inputs none of its claims and pending items
 * derives from. They stay searchable and are never restated.
 */

/** What a summary's cold layer is judged from: its claims and pending items, each with its sources. */
export interface CitingParts {
  claims: ReadonlyArray<{ derivedFrom: readonly string[] }>;
  pending: ReadonlyArray<{ derivedFrom: readonly string[] }>;
}

/** The inputs the claims and pending items derive from (the others are the cold layer). */
export function citedIds(parts: CitingParts): Set<string> {
  return new Set([...parts.claims, ...parts.pending].flatMap((item) => item.derivedFrom));
}

/** The valid inputs no claim or pending item derives from, in their order: the cold layer. */
export function uncitedInputs<E extends { eventId: string }>(
  parts: CitingParts,
  validInputs: readonly E[],
): E[] {
  const cited = citedIds(parts);
  return validInputs.filter((event) => !cited.has(event.eventId));
}
