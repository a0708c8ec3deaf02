import { afterAll, describe, expect, it } from "vitest";
import { appendEvents } from "#app/append.ts";
import { recall } from "#app/recall.ts";
import { renderServedRecallText, textItemTokens } from "#app/recall-text.ts";
import { run } from "#app/run.ts";
import { takeSnapshot } from "#app/snapshot.ts";
import { depsOverStore, temporaryStore } from "#harness/pipeline-builders.ts";

/**
 * Recall answers a question (CONTRACT §6 "Search"): the question goes in `query` as an agent
 * writes it, and under a budget the claims and cold events it reaches come right after the
 * must-preserve claims, the pending items and the conflicts, before the summary, the tail and the
 * claims it does not reach.
 */
const store = temporaryStore("recall-query");
afterAll(() => store.close());
const deps = depsOverStore(store);
const subject = "mia";

const talk = [
  "We watched the fireworks from the roof on Saturday.",
  "My sister moved to Lisbon for a new job.",
  "The bakery on the corner closed for the winter.",
  "Pottery class was great: I made a blue bowl and a cup.",
  "The train to the coast was late again.",
  "I finished the novel about the lighthouse keeper.",
];

await appendEvents(deps, subject, [
  ...talk.map((text, i) => ({
    eventId: `n-${i + 1}`,
    kind: "note",
    text,
    source: i === 5 ? "Leo" : "Mia",
    occurredAt: `2026-05-0${i + 1}T10:00:00Z`,
  })),
  {
    eventId: "c-1",
    kind: "constraint",
    text: "Never book flights through vendor X.",
    assertions: [{ key: "travel.vendor", value: { entity: "vendor:x" }, polarity: "negated" }],
  },
  { eventId: "t-1", kind: "task", text: "Renew the passport before March." },
  {
    eventId: "p-1",
    kind: "preference",
    text: "Likes green tea in the afternoon.",
    assertions: [{ key: "drink.afternoon", value: { text: "green tea" }, polarity: "affirmed" }],
  },
  {
    eventId: "p-2",
    kind: "preference",
    text: "Prefers window seats on trains.",
    assertions: [{ key: "travel.seat", value: { text: "window seat" }, polarity: "affirmed" }],
  },
]);
await run(deps, await takeSnapshot(deps, subject));
await appendEvents(deps, subject, [
  { eventId: "n-9", kind: "note", text: "Weather was fine today.", occurredAt: "2026-05-09T10:00:00Z" },
]);

describe("recall with a question", () => {
  it("serves the cold event that answers it, with its day, though the question holds words it lacks", async () => {
    const answer = await recall(deps, subject, {
      query: "What did Mia make in her pottery class?",
      format: "text",
    });
    expect(answer.mode).toBe("summary");
    expect(answer.cold.map((event) => event.eventId)[0]).toBe("n-4");
    const text = renderServedRecallText(answer).text;
    expect(text).toContain(
      'note 2026-05-04 Mia: "Pottery class was great: I made a blue bowl and a cup." ← n-4',
    );
  });

  it("under a budget: must-preserve claims, tasks, then what the question reaches, before the tail and the claims it does not reach", async () => {
    const whole = await recall(deps, subject, {
      query: "Which seat does Mia like on the train?",
      format: "text",
    });
    expect(whole.claims.map((claim) => claim.derivedFrom[0])).toEqual(["c-1", "p-1", "p-2"]);
    // Room for the must-preserve claim, the task and a few more items, not for everything.
    const tight = await recall(deps, subject, {
      query: "Which seat does Mia like on the train?",
      format: "text",
      budget: 230,
    });
    expect(tight.claims.map((claim) => claim.derivedFrom[0])).toContain("c-1");
    expect(tight.pending).toHaveLength(1);
    expect(tight.claims.map((claim) => claim.derivedFrom[0])).toContain("p-2");
    expect(tight.cold.map((event) => event.eventId)).toContain("n-5");
    expect(tight.servedTokens).toBeLessThanOrEqual(230);
    // The claim the question reaches is offered before the one it does not (no larger a line), at every budget.
    const line = (id: string) => {
      const claim = whole.claims.find((c) => c.derivedFrom[0] === id);
      if (!claim) throw new Error(id);
      return textItemTokens("claims", claim);
    };
    expect(line("p-2")).toBeLessThanOrEqual(line("p-1"));
    for (let budget = 120; budget <= whole.servedTokens + 40; budget += 7) {
      const answer = await recall(deps, subject, {
        query: "Which seat does Mia like on the train?",
        format: "text",
        budget,
      });
      const served = answer.claims.map((claim) => claim.derivedFrom[0]);
      if (served.includes("p-1")) expect(served).toContain("p-2");
      expect(answer.servedTokens).toBeLessThanOrEqual(
        Math.max(budget, answer.servedTokens - answer.servedTokens),
      );
    }
  });

  it("reaches an event a claim restates by the words the claim left out, never counting it as cold", async () => {
    const answer = await recall(deps, subject, {
      query: "Does Mia prefer trains?",
      format: "text",
      budget: 210,
    });
    // The preference's own words ("prefers", "trains"), which its claim does not hold, reach it.
    expect(answer.cold.map((event) => event.eventId)).toEqual(["p-2", "n-5"]);
    expect(answer.citedMatches).toBe(1);
    expect(answer.coldInputs).toBe(6);
    const text = renderServedRecallText(answer).text;
    expect(text).toContain(
      'preference: "Prefers window seats on trains." {travel.seat: "window seat"} ← p-2\n',
    );
    // Six notes are cold and one of them is shown.
    expect(text).toContain("# cold: 5 inputs not shown");
  });

  it("without a query keeps the order it always had: every claim before the summary and the tail", async () => {
    const plain = await recall(deps, subject, { format: "text", budget: 10_000 });
    expect(plain.claims).toHaveLength(3);
    expect(plain.tail.map((event) => event.eventId)).toEqual(["n-9"]);
    expect(plain.cold).toEqual([]);
  });

  it("answers a long question (cut to its most informative words) and the same bytes every time", async () => {
    const question = `${"please tell me everything you remember about ".repeat(8)}the lighthouse novel Leo finished`;
    const first = await recall(deps, subject, { query: question, format: "text", budget: 400 });
    expect(first.cold.map((event) => event.eventId)).toContain("n-6");
    const again = await recall(deps, subject, { query: question, format: "text", budget: 400 });
    expect(renderServedRecallText(again).text).toBe(renderServedRecallText(first).text);
  });
});

describe("recall with a question reads what its budget can serve", () => {
  it("reads the matching events a window at a time, sized by what the budget has left", async () => {
    const many = "ana";
    await appendEvents(
      deps,
      many,
      Array.from({ length: 300 }, (_, i) => ({
        eventId: `k-${i + 1}`,
        kind: "note",
        text: `Pottery evening ${i + 1}: glazed a ${["blue", "green", "red"][i % 3]} bowl with the group.`,
        source: "Ana",
        occurredAt: "2026-05-01T10:00:00Z",
      })),
    );
    await run(deps, await takeSnapshot(deps, many));
    let read = 0;
    const counting = {
      ...deps,
      events: Object.create(deps.events, {
        eventsById: {
          value: (subject: string, ids: readonly string[]) => {
            read += ids.length;
            return deps.events.eventsById(subject, ids);
          },
        },
      }),
    };
    const options = { query: "When did Ana glaze a bowl at pottery?", budget: 4000 };
    const answer = await recall(counting, many, options);
    // The same answer as when every window is read whole; the windows after the first (16) read
    // what the budget had left room for and a few more (8), never twice the last window's worth.
    expect(answer).toEqual(await recall(deps, many, options));
    expect(answer.cold.length).toBeGreaterThan(16);
    expect(read).toBeLessThanOrEqual(answer.cold.length + 16);
  });
});

describe("recall with a question over a damaged search index", () => {
  it("serves the summary without the question's hits and says why", async () => {
    const damagedStore = temporaryStore("recall-query-damaged");
    const plain = depsOverStore(damagedStore);
    await appendEvents(plain, "leo", [
      { eventId: "n-1", kind: "note", text: "The lighthouse novel was great." },
      { eventId: "c-1", kind: "constraint", text: "Never lend the first edition." },
    ]);
    await run(plain, await takeSnapshot(plain, "leo"));
    const artifacts = Object.create(damagedStore, {
      readRecallIndex: {
        value: async (subject: string, artifactId: string) => {
          const index = (await damagedStore.readRecallIndex(subject, artifactId)) as Record<string, unknown>;
          return {
            ...index,
            search: JSON.stringify({
              version: 1,
              ids: "",
              terms: "x",
              lengths: "",
              offsets: "",
              postings: "",
            }),
          };
        },
      },
    });
    const answer = await recall({ ...plain, artifacts }, "leo", {
      query: "Which novel was great?",
      format: "text",
    });
    expect(answer.mode).toBe("summary");
    expect(answer.cold).toEqual([]);
    expect(answer.reason).toMatch(/search index cannot be read .*query not answered/);
    expect(answer.claims.map((claim) => claim.derivedFrom[0])).toEqual(["c-1"]);
    damagedStore.close();
  });
});
