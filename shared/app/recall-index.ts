import MiniSearch from "minisearch";
import { z } from "zod";
import type { ChecklistEntry, GateContext } from "#domain/gate/index.ts";
import type { ConsolidationOutput, MemoryEvent } from "#domain/schemas.ts";
import { parseStrictJsonPaced } from "#domain/strict-json.ts";
import type { Pause } from "#ports/time.ts";

/**
 * What recall needs of an artifact beyond its body, built once when the artifact is generated and
 * stored write-once beside it: which claims keep must-preserve items (as the gate judged them:
 * they come first under a token budget) and a full-text index of the cold layer (the `coldRefs`
 * and every other valid input no claim or pending item derives from) with its size, so a recall
 * says how many inputs stay cold, and one with `query` searches the index and never scans the log.
 */
export const RecallIndex = z.object({
  version: z.literal(1),
  /** Indexes into `claims` of the claims that keep a must-preserve item, in claim order. */
  mustPreserveClaims: z.array(z.number().int().nonnegative()),
  /** MiniSearch's serialised index over the cold events' text (ids are event ids). */
  cold: z.string(),
  /**
   * How many valid inputs no claim or pending item derives from (the cold layer, all of it in
   * `cold`); absent in indexes built before it was counted.
   */
  coldInputs: z.number().int().nonnegative().optional(),
});
export type RecallIndex = z.infer<typeof RecallIndex>;

const SEARCH_OPTIONS = {
  idField: "eventId",
  fields: ["text", "keys"],
  // A fifth of a word's letters may differ, at most two: a long word's fuzzy walk over the terms
  // grows with its edit distance (a 256-character query of long words took tens of milliseconds).
  searchOptions: { prefix: true, fuzzy: 0.2, maxFuzzy: 2, combineWith: "AND" as const },
};

/**
 * Builds the index of a gate-passed candidate from the context and the checklist of the very check
 * that passed it (the gate is not run again).
 */
export function buildRecallIndex(
  context: GateContext,
  body: ConsolidationOutput,
  checklist: readonly ChecklistEntry[],
): RecallIndex {
  const mustPreserveClaims = new Set<number>();
  for (const { keptBy } of checklist) {
    const match = keptBy === null ? null : /^claims\[(\d+)\]/.exec(keptBy);
    if (match?.[1] !== undefined) mustPreserveClaims.add(Number(match[1]));
  }
  const byId = new Map<string, MemoryEvent>(
    context.selection.validInputs.map((event) => [event.eventId, event]),
  );
  const search = new MiniSearch(SEARCH_OPTIONS);
  const seen = new Set<string>();
  const uncited = uncitedInputs(body, context.selection.validInputs);
  for (const id of [...body.coldRefs, ...uncited.map((event) => event.eventId)]) {
    const event = byId.get(id);
    if (!event || seen.has(id)) continue;
    seen.add(id);
    search.add({
      eventId: id,
      text: event.text ?? "",
      keys: (event.assertions ?? []).map((a) => `${a.key} ${a.scope}`).join(" "),
    });
  }
  return {
    version: 1,
    mustPreserveClaims: [...mustPreserveClaims].sort((a, b) => a - b),
    cold: JSON.stringify(search),
    coldInputs: uncited.length,
  };
}

/** The valid inputs no claim or pending item of `body` derives from (CONTRACT §2: the cold layer). */
export function uncitedInputs<E extends MemoryEvent>(
  body: ConsolidationOutput,
  validInputs: readonly E[],
): E[] {
  const cited = new Set([...body.claims, ...body.pending].flatMap((item) => item.derivedFrom));
  return validInputs.filter((event) => !cited.has(event.eventId));
}

/** The cold layer's search, loaded from the index (once per artifact: see `ServedArtifacts`). */
export function loadColdSearch(index: RecallIndex): MiniSearch {
  return MiniSearch.loadJSON(index.cold, SEARCH_OPTIONS);
}

/**
 * `loadColdSearch` a step at a time (`pause` between the serialised index's parts, MiniSearch
 * yielding between its terms), for a serving thread: the same search. A serialised index it
 * cannot read is loaded whole, so it fails with MiniSearch's own error.
 */
export async function loadColdSearchPaced(index: RecallIndex, pause: Pause): Promise<MiniSearch> {
  const parsed = await parseStrictJsonPaced(index.cold, pause);
  if (!parsed.ok) return loadColdSearch(index);
  return MiniSearch.loadJSAsync(parsed.value as Parameters<typeof MiniSearch.loadJSAsync>[0], SEARCH_OPTIONS);
}

/**
 * The cold events matching `query`, best first, at most `limit` event ids: one query word at a
 * time, pausing between words (a serving thread's other requests run there). The events
 * every word matches, ranked by the sum of each word's score, as MiniSearch combines words with
 * AND (its final score multiplies that sum by the number of words, which changes no order). A
 * word no cold event matches ends the search.
 */
export async function searchColdPaced(
  search: MiniSearch,
  query: string,
  limit: number,
  pause: Pause,
): Promise<string[]> {
  const words = (MiniSearch.getDefault("tokenize") as (text: string) => string[])(query).filter(
    (word) => word !== "",
  );
  let matched: Map<string, number> | null = null;
  for (const word of words) {
    await pause();
    const scores = new Map<string, number>();
    for (const hit of search.search(word)) {
      const id = String(hit.id);
      if (matched === null) scores.set(id, hit.score);
      else {
        const before = matched.get(id);
        if (before !== undefined) scores.set(id, before + hit.score);
      }
    }
    matched = scores;
    if (matched.size === 0) return [];
  }
  return [...(matched ?? new Map<string, number>())]
    .sort((a, b) => b[1] - a[1])
    .slice(0, limit)
    .map(([id]) => id);
}
