import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { appendEvents, changeTrustPolicy } from "#app/append.ts";
import { recall } from "#app/recall.ts";
import { run } from "#app/run.ts";
import { parsedBody } from "#app/served-artifacts.ts";
import { takeSnapshot } from "#app/snapshot.ts";
import { effectivePolicy } from "#domain/readings.ts";
import { ConsolidationOutput, DEFAULT_TRUST_POLICY } from "#domain/schemas.ts";
import { selectInputs, selectInputsPaced } from "#domain/selector.ts";
import { depsOverStore, factsBatch, temporaryStore } from "#harness/pipeline-builders.ts";
import { neverPause, type Pause } from "#ports/time.ts";

// A server thread answers many requests: the largest accepted ones (a 1,000-event batch, a policy
// change over a long log, the first recall of a large summary) let the thread's other work run
// between their items instead of holding it until they end. Counted here as turns of the event
// loop taken while the work runs, with a pause that yields at every call (the server's pause
// yields once a slice of time is spent: bench/healthz-under-worst measures that).

const everyTurn: Pause = () => new Promise((resolve) => setImmediate(resolve));

/** The event loop's turns while `work` runs: at each, another request could have been answered. */
async function turnsDuring<T>(work: () => Promise<T>): Promise<{ value: T; turns: number }> {
  let turns = 0;
  let running = true;
  const tick = () => {
    if (!running) return;
    turns++;
    setImmediate(tick);
  };
  setImmediate(tick);
  try {
    return { value: await work(), turns };
  } finally {
    running = false;
  }
}

function storeWith(pause: Pause) {
  const store = temporaryStore("paced", { pause });
  const deps = depsOverStore(store, pause === neverPause ? {} : { pause });
  return { store, deps };
}

/**
 * Facts on distinct keys; every tenth also on one shared key with its own value (conflicts), every
 * third from the source "import" (a policy can block it).
 */
function batch(from: number, to: number) {
  return factsBatch(from, to).map((event, i) => {
    const n = from + i;
    return {
      ...event,
      ...(n % 3 === 0 ? { source: "import" } : {}),
      assertions: [
        ...event.assertions,
        ...(n % 10 === 0
          ? [{ key: "shared", value: { quantity: String(n), unit: "km" }, polarity: "affirmed" }]
          : []),
      ],
    };
  });
}

describe("large requests let the thread's other work run", () => {
  it("a 1,000-event append pauses between events and appends what an unpaused one does", async () => {
    const paced = storeWith(everyTurn);
    const plain = storeWith(neverPause);
    try {
      const events = batch(1, 1000);
      const withPauses = await turnsDuring(() => appendEvents(paced.deps, "s", events));
      const without = await turnsDuring(() => appendEvents(plain.deps, "s", events));
      // Validation, planning and writing each pause at every event.
      expect(withPauses.turns).toBeGreaterThan(3 * events.length);
      expect(without.turns).toBeLessThan(50);
      expect(withPauses.value).toEqual(without.value);
      expect(await paced.store.eventsThrough("s", 1000)).toEqual(await plain.store.eventsThrough("s", 1000));
    } finally {
      paced.store.close();
      plain.store.close();
    }
  });

  it("a policy change over a 2,000-event log pauses while it reads and selects, and changes what an unpaused one does", async () => {
    const paced = storeWith(everyTurn);
    const plain = storeWith(neverPause);
    try {
      for (const { deps } of [paced, plain])
        for (let from = 1; from <= 2000; from += 1000) await appendEvents(deps, "s", batch(from, from + 999));
      const policy = { ...DEFAULT_TRUST_POLICY, blockedSources: ["import"] };
      const withPauses = await turnsDuring(() => changeTrustPolicy(paced.deps, "s", policy));
      const without = await turnsDuring(() => changeTrustPolicy(plain.deps, "s", policy));
      expect(withPauses.value.epochMoved).toBe(true);
      expect(withPauses.turns).toBeGreaterThan(2000);
      expect(without.turns).toBeLessThan(50);
      expect(withPauses.value).toEqual(without.value);
    } finally {
      paced.store.close();
      plain.store.close();
    }
  });

  it("the selection made between pauses is the selection made at once", async () => {
    const { store, deps } = storeWith(neverPause);
    try {
      await appendEvents(deps, "s", batch(1, 1000));
      const events = await store.eventsThrough("s", 1000);
      const policy = effectivePolicy(DEFAULT_TRUST_POLICY);
      const atOnce = selectInputs(events, 1000, policy);
      const { value, turns } = await turnsDuring(() => selectInputsPaced(events, 1000, policy, everyTurn));
      expect(atOnce.conflicts.length).toBeGreaterThan(0);
      expect(value).toEqual(atOnce);
      expect(turns).toBeGreaterThan(1000 / 64);
    } finally {
      store.close();
    }
  });

  it("the first recall of a summary counts its parts' tokens between pauses; the next recalls reuse the count", async () => {
    const { store, deps } = storeWith(everyTurn);
    try {
      await appendEvents(deps, "s", batch(1, 600));
      const outcome = await run(deps, await takeSnapshot(deps, "s"));
      expect(outcome.status).toBe("PUBLISHED");
      const first = await turnsDuring(() => recall(deps, "s", { budget: 1_000_000 }));
      const claims = first.value.claims.length;
      expect(claims).toBeGreaterThan(500);
      expect(first.turns).toBeGreaterThan(claims);
      const again = await turnsDuring(() => recall(deps, "s", { budget: 1_000_000 }));
      expect(again.turns).toBeLessThan(claims);
      expect(again.value).toEqual(first.value);
    } finally {
      store.close();
    }
  });

  it("a summary body parsed a part at a time is the body parsed whole; a damaged one throws the whole parse's error", async () => {
    const folder = join(import.meta.dirname, "../fixtures/model-answers");
    const answers = readdirSync(folder, { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .flatMap((entry) =>
        readdirSync(join(folder, entry.name))
          .filter((file) => /^answer.*\.json$/.test(file))
          .map(
            (file) =>
              JSON.parse(readFileSync(join(folder, entry.name, file), "utf8")) as Record<string, unknown>,
          ),
      )
      .filter((answer) => ConsolidationOutput.safeParse(answer).success);
    expect(answers.length).toBeGreaterThanOrEqual(8);
    for (const answer of answers) {
      const { value: read, turns } = await turnsDuring(() => parsedBody(answer, everyTurn));
      const value = read.body;
      expect(value).toEqual(ConsolidationOutput.parse(answer));
      expect(read.size).toBe(JSON.stringify(ConsolidationOutput.parse(answer)).length);
      expect(Object.isFrozen(value) && value.claims.every((claim) => Object.isFrozen(claim.value))).toBe(
        true,
      );
      expect(turns).toBeGreaterThanOrEqual(value.claims.length);
    }
    const sample = answers[0] as Record<string, unknown>;
    const damaged = [
      { ...sample, claims: [...(sample.claims as unknown[]), { key: 1 }] },
      { ...sample, summary: 7 },
      { ...sample, pending: "none" },
      { ...sample, claims: [{ ...(sample.claims as Array<Record<string, unknown>>)[0], text: "\ud800" }] },
      [sample],
    ];
    for (const body of damaged) {
      const whole = ConsolidationOutput.safeParse(body);
      expect(whole.success).toBe(false);
      await expect(parsedBody(body, everyTurn)).rejects.toThrow(whole.error?.message);
    }
  });
});
