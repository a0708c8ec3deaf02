import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { SqliteStore } from "#adapters/embedded/sqlite-store.ts";
import { modelNamed } from "#adapters/models/models.ts";
import { claimLine, renderConsolidation } from "#app/prompt-render.ts";
import { loadPrompt } from "#app/prompts.ts";
import { readInputs } from "#app/snapshot.ts";
import { DEFAULT_TRUST_POLICY, MemoryEvent } from "#domain/schemas.ts";
import { contextOf, fact, log } from "../support/builders.ts";
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

async function rendered(events: unknown[], batches: number[], version?: string) {
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
      settings: { contextTokens: 3072, maxOutputTokens: 512 },
    });
    const request = { snapshot: await store.snapshot("s"), context, prompt: loadPrompt(version) };
    return {
      one: renderConsolidation(loadPrompt(version), context),
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
    const first = await rendered(SUBJECT_EVENTS, [2, 3], "consolidate-v2");
    const second = await rendered(SUBJECT_EVENTS, [], "consolidate-v2");
    expect(first.one.hash).toBe(second.one.hash);
    expect(first.one.hash).toMatchInlineSnapshot(
      `"sha256:d10ace3e44db308bdc967a922c53566d867008beab6da1b4f8b536e36946149d"`,
    );
    // consolidate-v2 renders exactly as it did before the renderer learnt
    // {{readings}}; the compressing template with its readings is pinned too.
    expect((await rendered(SUBJECT_EVENTS, [], "consolidate-v3")).one.hash).toBe(
      "sha256:0265be06540b8c5ce3817b622dd9392892f02dc047f19776f6a397f93ef46e82",
    );
  });

  it("lists readings under a latest rule: the one that holds, and each earlier one with the asOf to cite", () => {
    const events = log(
      fact(
        "oct",
        "backup.bucket_size",
        { quantity: "4.6", unit: "TB" },
        { occurredAt: "2026-10-26T12:15:00Z" },
      ),
      fact("undated", "backup.bucket_size", { quantity: "4.4", unit: "TB" }),
      fact(
        "dec",
        "backup.bucket_size",
        { quantity: "4.1", unit: "TB" },
        { occurredAt: "2026-12-03T09:20:00Z" },
      ),
    );
    const policy = { ...DEFAULT_TRUST_POLICY, latest: ["backup.*"] };
    const { prompt } = renderConsolidation(loadPrompt("consolidate-v3"), contextOf(events, policy));
    expect(prompt).toContain(
      '- key "backup.bucket_size", scope "global": dec holds {"quantity":"4.1","unit":"TB"} (read 2026-12-03T09:20:00Z); earlier: oct {"quantity":"4.6","unit":"TB"} (asOf "2026-10-26"), undated {"quantity":"4.4","unit":"TB"} (undated: asOf null)',
    );
    expect(prompt).toContain('status is "settled", "contested" or "earlier"');
    // Without a rule the two readings are a conflict, and the readings section is empty.
    const plain = renderConsolidation(loadPrompt("consolidate-v3"), contextOf(events)).prompt;
    expect(plain).toMatch(/## Readings[^\n]*\n\n\(none\)/);
    expect(plain).toContain('members ["dec","oct","undated"]');
  });

  it("shows an earlier reading to the summary call as one, with its date", () => {
    expect(
      claimLine({
        key: "backup.bucket_size",
        scope: "global",
        value: { quantity: "4.6", unit: "TB" },
        polarity: "affirmed",
        status: "earlier",
        asOf: "2026-10-26",
        derivedFrom: ["oct"],
      }),
    ).toBe('- backup.bucket_size (earlier, as of 2026-10-26): {"quantity":"4.6","unit":"TB"}');
  });
});
