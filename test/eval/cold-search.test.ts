import { describe, expect, it } from "vitest";
import { buildRecallIndex, loadColdSearch, loadColdSearchPaced, searchColdPaced } from "#app/recall-index.ts";
import { buildGateContext } from "#domain/gate/index.ts";
import { DEFAULT_TRUST_POLICY, MemoryEvent } from "#domain/schemas.ts";
import { checkEventLog, selectInputs } from "#domain/selector.ts";
import { realisticEvent } from "#harness/event-mix.ts";

/**
 * The cold layer's search as a serving thread runs it (the serialised index loaded a step at a
 * time, the query searched a word at a time) finds what MiniSearch's own one-call search finds,
 * in the same order of score.
 */
const events = checkEventLog(
  Array.from({ length: 1500 }, (_, i) => ({ ...MemoryEvent.parse(realisticEvent(i)), sequence: i + 1 })),
);
const context = buildGateContext(selectInputs(events, events.length, DEFAULT_TRUST_POLICY), events.length);
const index = buildRecallIndex(
  context,
  { claims: [], pending: [], unresolvedConflicts: [], summary: "", coldRefs: [] },
  [],
);
const pause = () => Promise.resolve();

describe("the cold layer's search, paced", () => {
  it("loads the same index a step at a time", async () => {
    expect(JSON.stringify(await loadColdSearchPaced(index, pause))).toBe(
      JSON.stringify(loadColdSearch(index)),
    );
  });

  it.each([
    ["ticket", true],
    ["chatted team", true],
    ["costs usd item", true],
    ["tiket", true],
    ["team team", true],
    ["unmatchedsearchword item", false],
    ["item unmatchedsearchwordsareneverfound", false],
  ])("%s: the same events as one MiniSearch search, in the same order of score", async (query, found) => {
    const search = await loadColdSearchPaced(index, pause);
    const whole = search.search(query);
    expect(whole.length > 0).toBe(found);
    const paced = await searchColdPaced(search, query, 100_000, pause);
    expect(new Set(paced)).toEqual(new Set(whole.map((hit) => String(hit.id))));
    const scoreOf = new Map(whole.map((hit) => [String(hit.id), hit.score]));
    const scores = paced.map((id) => scoreOf.get(id) ?? Number.NaN);
    expect(scores).toEqual([...scores].sort((a, b) => b - a));
  });
});
