import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { SqliteStore } from "#adapters/embedded/sqlite-store.ts";
import { modelNamed } from "#adapters/models/models.ts";
import { renderConsolidation } from "#app/prompt-render.ts";
import { loadPrompt } from "#app/prompts.ts";
import { readInputs } from "#app/snapshot.ts";
import { MemoryEvent } from "#domain/schemas.ts";
import { SUBJECT_EVENTS } from "./fixtures.ts";

/**
 * The rendered prompt is a pure function of the snapshot: the same events give the same bytes
 * whatever batches they were appended in and however each event's keys were written, run after
 * run. The manifest pins these bytes' hash, and the answer caches key on it.
 */
const WORDS = [
  "budget",
  "backup",
  "host",
  "must",
  "not",
  "never",
  "at most",
  "3 days",
  "12,500 USD",
  "eu-west-1",
  "INV-7",
  "预算",
  "不",
  "三天",
];

const eventArb = fc.record({
  kind: fc.constantFrom("fact", "constraint", "decision", "preference", "task", "note"),
  words: fc.array(fc.constantFrom(...WORDS), { minLength: 1, maxLength: 6 }),
  assertion: fc.option(
    fc.record({
      key: fc.constantFrom("a", "b", "c"),
      amount: fc.integer({ min: 1, max: 5 }),
      negated: fc.boolean(),
    }),
    { nil: undefined },
  ),
});

function eventsOf(drafts: Array<typeof eventArb extends fc.Arbitrary<infer T> ? T : never>) {
  return drafts.map((draft, i) => ({
    eventId: `r-${i + 1}`,
    kind: draft.kind,
    text: draft.words.join(" "),
    ...(draft.assertion
      ? {
          assertions: [
            {
              key: draft.assertion.key,
              value: { quantity: String(draft.assertion.amount), unit: "d" },
              polarity: draft.assertion.negated ? "negated" : "affirmed",
            },
          ],
        }
      : {}),
  }));
}

/** The same JSON with every object's keys in reverse order. */
function reversedKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(reversedKeys);
  if (typeof value !== "object" || value === null) return value;
  return Object.fromEntries(
    Object.entries(value)
      .reverse()
      .map(([k, v]) => [k, reversedKeys(v)]),
  );
}

async function rendered(events: unknown[], batches: number[]) {
  const store = SqliteStore.open(mkdtempSync(join(tmpdir(), "memgate-render-")));
  try {
    let at = 0;
    for (const size of [...batches, events.length]) {
      if (at >= events.length) break;
      await store.append(
        "s",
        events.slice(at, at + Math.max(1, size)).map((e) => MemoryEvent.parse(e)),
      );
      at += Math.max(1, size);
    }
    const { highWater } = await store.snapshot("s");
    const { context } = await readInputs({ events: store }, "s", highWater);
    const segmented = modelNamed("segmented:replay:unused", {
      settings: { contextTokens: 2048, maxOutputTokens: 512 },
    });
    const request = { snapshot: await store.snapshot("s"), context, prompt: loadPrompt() };
    return {
      one: renderConsolidation(loadPrompt(), context),
      segments: segmented.preview?.(request).map((p) => p.hash),
    };
  } finally {
    store.close();
  }
}

describe("the rendered prompt", () => {
  it("is byte-identical for the same snapshot across runs, batch groupings and key orders (property)", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(eventArb, { minLength: 1, maxLength: 25 }),
        fc.array(fc.integer({ min: 1, max: 6 }), { maxLength: 8 }),
        async (drafts, batches) => {
          const events = eventsOf(drafts);
          const once = await rendered(events, []);
          const grouped = await rendered(events.map(reversedKeys), batches);
          expect(grouped.one.prompt).toBe(once.one.prompt);
          expect(grouped.one.hash).toBe(once.one.hash);
          expect(grouped.segments).toEqual(once.segments);
        },
      ),
      { numRuns: 25 },
    );
  });

  it("keeps its bytes for a known snapshot (a change here needs a new RENDERER_VERSION or template version)", async () => {
    const first = await rendered(SUBJECT_EVENTS, [2, 3]);
    const second = await rendered(SUBJECT_EVENTS, []);
    expect(first.one.hash).toBe(second.one.hash);
    expect(first.one.hash).toMatchInlineSnapshot(
      `"sha256:d10ace3e44db308bdc967a922c53566d867008beab6da1b4f8b536e36946149d"`,
    );
  });
});
