import MiniSearch from "minisearch";
import { describe, expect, it } from "vitest";
import {
  buildRecallIndex,
  decodeSearch,
  encodeSearch,
  loadRecallSearch,
  RecallIndex,
} from "#app/recall-index.ts";
import { buildGateContext } from "#domain/gate/index.ts";
import { DEFAULT_TRUST_POLICY, MemoryEvent } from "#domain/schemas.ts";
import { checkEventLog, selectInputs } from "#domain/selector.ts";
import { realisticEvent } from "#harness/event-mix.ts";

/**
 * Recall's search as a serving thread runs it (the serialised index parsed a step at a time, the
 * query searched a term at a time) finds what the index's own one-call search finds, in the same
 * order; indexes written before version 2 still answer.
 */
const events = checkEventLog(
  Array.from({ length: 1500 }, (_, i) => ({ ...MemoryEvent.parse(realisticEvent(i)), sequence: i + 1 })),
);
const context = buildGateContext(selectInputs(events, events.length, DEFAULT_TRUST_POLICY), events.length);
const empty = { claims: [], pending: [], unresolvedConflicts: [], summary: "", coldRefs: [] };
const index = buildRecallIndex(context, empty, []);
const pauses: number[] = [];
const pause = () => {
  pauses.push(1);
  return Promise.resolve();
};

describe("recall's search, paced", () => {
  it.each([
    ["ticket", true],
    ["chatted team", true],
    ["What did the team chat about, and what did the items cost in USD?", true],
    ["tickets", true],
    ["unmatchedsearchword", false],
  ])("%s: the same documents, in the same order, as the index searched in one call", async (query, found) => {
    if (index.version !== 2) throw new Error("a new index is version 2");
    const whole = decodeSearch(index.search).search(query, 100_000);
    expect(whole.length > 0).toBe(found);
    pauses.length = 0;
    const paced = await (await loadRecallSearch(index, pause)).search(query, 100_000, pause);
    expect(paced).toEqual(whole);
    if (found) expect(pauses.length).toBeGreaterThan(0);
  });

  it("is the same index, byte for byte, however often it is built, encoded or decoded", () => {
    expect(JSON.stringify(buildRecallIndex(context, empty, []))).toBe(JSON.stringify(index));
    if (index.version !== 2) throw new Error("a new index is version 2");
    expect(encodeSearch(decodeSearch(index.search))).toBe(index.search);
  });

  it("refuses a damaged search index rather than answering from it", () => {
    if (index.version !== 2) throw new Error("a new index is version 2");
    const stored = JSON.parse(index.search);
    expect(() => decodeSearch(JSON.stringify({ ...stored, postings: stored.postings.slice(8) }))).toThrow();
    expect(() => decodeSearch(JSON.stringify({ ...stored, version: 2 }))).toThrow();
  });

  it("answers from a version 1 index (MiniSearch over the cold events), its words combined with OR", async () => {
    const cold = new MiniSearch({ idField: "eventId", fields: ["text", "keys"] });
    cold.addAll([
      { eventId: "a", text: "The green tea shop opens at nine", keys: "" },
      { eventId: "b", text: "Kubernetes upgrade planned", keys: "" },
    ]);
    const v1 = RecallIndex.parse({
      version: 1,
      mustPreserveClaims: [],
      cold: JSON.stringify(cold),
      coldInputs: 2,
    });
    const hits = await (await loadRecallSearch(v1, pause)).search("when does the tea shop open", 10, pause);
    expect(hits.map((hit) => hit.id)).toEqual(["a"]);
  });
});
