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
 * order; indexes written before version 3 still answer.
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
    if (index.version !== 3) throw new Error("a new index is version 3");
    const whole = decodeSearch(index.search).search(query, 100_000);
    expect(whole.length > 0).toBe(found);
    pauses.length = 0;
    const paced = await (await loadRecallSearch(index, pause)).search(query, 100_000, pause);
    expect(paced).toEqual(whole);
    if (found) expect(pauses.length).toBeGreaterThan(0);
  });

  it("is the same index, byte for byte, however often it is built, encoded or decoded", () => {
    expect(JSON.stringify(buildRecallIndex(context, empty, []))).toBe(JSON.stringify(index));
    if (index.version !== 3) throw new Error("a new index is version 3");
    expect(encodeSearch(decodeSearch(index.search))).toBe(index.search);
  });

  it("refuses a damaged search index rather than answering from it", () => {
    if (index.version !== 3) throw new Error("a new index is version 3");
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

describe("what recall's search reads of a conversation", () => {
  const turn = (eventId: string, occurredAt: string, source: string, text: string) =>
    MemoryEvent.parse({ eventId, kind: "note", occurredAt, source, text });
  const log = checkEventLog(
    [
      turn("D1:1", "2023-08-11T13:00:00", "Tim", "Any plans for the trip?"),
      turn("D1:2", "2023-08-11T13:01:00", "John", "Sure, lots of them."),
      turn("D1:3", "2023-08-11T13:02:00", "John", "Deep dish pizza and the Bean, then the lake."),
      turn("D2:1", "2023-09-05T10:00:00", "John", "The pizza back home is not the same."),
      turn("D2:2", "2023-09-02T10:01:00", "Tim", "I started the violin lessons."),
      turn("D2:3", "2023-09-02T10:02:00", "Tim", "My teacher, Mrs Okafor, plays in the city orchestra."),
      turn("D3:1", "2023-10-01T09:00:00", "Tim", "Congrats on the promotion! What is the new role?"),
      turn("D3:2", "2023-10-01T09:01:00", "John", "Thanks! Assistant manager, at last."),
    ].map((event, i) => ({ ...event, sequence: i + 1 })),
  );
  const conversation = buildGateContext(selectInputs(log, log.length, DEFAULT_TRUST_POLICY), log.length);
  const summary = {
    ...empty,
    claims: [
      {
        key: "hobbies.music",
        scope: "person:tim",
        value: { text: "violin lessons" },
        derivedFrom: ["D2:2", "D2:3"],
        polarity: "affirmed" as const,
        status: "settled" as const,
      },
      {
        key: "job",
        scope: "person:john",
        value: { text: "assistant manager" },
        derivedFrom: ["D3:2"],
        polarity: "affirmed" as const,
        status: "settled" as const,
      },
    ],
  };
  const built = buildRecallIndex(conversation, summary, []);
  const search = (query: string) => {
    if (built.version !== 3) throw new Error("a new index is version 3");
    return decodeSearch(built.search)
      .search(query, 10)
      .map((hit) => hit.id);
  };

  it("finds a cold turn by the day it was said", () => {
    expect(search("What pizza did John eat on August 11, 2023?")[0]).toBe("D1:3");
  });

  it("finds a claim by the days of its sources, in English and in Chinese", () => {
    // The claim and the turn it restates, both said that day.
    expect(search("What did Tim start on 2 September 2023?").slice(0, 2)).toEqual(["#c0", "D2:2"]);
    expect(search("9月2日").slice(0, 3).sort()).toEqual(["#c0", "D2:2", "D2:3"]);
  });

  it("finds the turn a claim restates by the words the claim left out (version 3)", () => {
    // The claim keeps "violin lessons"; the teacher's name is only in the turn.
    expect(search("Who teaches Tim the violin?")).toContain("D2:3");
    expect(search("Who is Mrs Okafor?")[0]).toBe("D2:3");
  });

  it("reads the two turns before a turn and the one after as its context", () => {
    // The plans are asked two turns before the answer that names them.
    expect(search("What plans did John have?")).toContain("D1:3");
  });

  it("reads the turn before each of a claim's sources as its context", () => {
    // The reply the claim cites never says "promotion"; the question it answers does.
    expect(search("What promotion did he get?").slice(0, 3)).toEqual(["D3:1", "#c1", "D3:2"]);
  });
});
