import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { MemoryEvent } from "#domain/schemas.ts";
import { DEFAULT_TRUST_POLICY, MemoryEvent as MemoryEventSchema } from "#domain/schemas.ts";
import { checkEventLog, EventLogError, selectInputs } from "#domain/selector.ts";
import { StandingResolver } from "#domain/standing-resolver.ts";
import { candidate, codes, contextOf, fact, gate, log, settled } from "../support/builders.ts";
import { PlannedLog } from "../support/memory-append.ts";
import {
  appendedInTwo,
  oracleConflicts,
  oracleMembers,
  oraclePositions,
  oracleValidity,
  stepArb,
} from "../support/selector-oracle.ts";

const validIds = (
  events: ReturnType<typeof log>,
  highWater = events.length,
  policy = DEFAULT_TRUST_POLICY,
  version: "v1" | "v2" = "v2",
) => selectInputs(events, highWater, policy, version).validInputs.map((event) => event.eventId);

/** A chain e-1 ← e-2 ← … ← e-n on one key, each superseding the one before. */
function chain(length: number) {
  return Array.from({ length }, (_, index) =>
    fact(
      `e-${index + 1}`,
      "race/date",
      { date: `2026-12-${String(index + 1).padStart(2, "0")}` },
      {
        ...(index > 0 ? { supersedes: [`e-${index}`] } : {}),
      },
    ),
  );
}

describe("selector validity", () => {
  it("drops revoked events and never serves the revocation itself", () => {
    const events = log(
      { eventId: "a", kind: "fact", text: "x" },
      { eventId: "r", kind: "revocation", revokes: ["a"] },
    );
    const selection = selectInputs(events, 2, DEFAULT_TRUST_POLICY);
    expect(selection.validInputs).toEqual([]);
    expect(selection.invalid.get("a")).toBe("revoked");
    expect(selection.invalid.get("r")).toBe("control-event");
  });

  it("only counts what is at or below the high-water mark", () => {
    const events = log(
      { eventId: "a", kind: "fact", text: "x" },
      { eventId: "r", kind: "revocation", revokes: ["a"] },
    );
    expect(validIds(events, 1)).toEqual(["a"]);
  });

  it("revoking a superseder revives what it superseded; revoking a revocation revives its target", () => {
    const events = log(
      { eventId: "a", kind: "fact", text: "v1" },
      { eventId: "b", kind: "fact", text: "v2", supersedes: ["a"] },
      { eventId: "c", kind: "fact", text: "other" },
      { eventId: "r1", kind: "revocation", revokes: ["b", "c"] },
      { eventId: "r2", kind: "revocation", revokes: ["r1"] },
    );
    expect(validIds(events, 3)).toEqual(["b", "c"]);
    expect(validIds(events, 4)).toEqual(["a"]);
    expect(validIds(events, 5)).toEqual(["b", "c"]);
  });

  it("applies minTrust and blocked sources, and an untrusted revocation or superseder acts on nothing", () => {
    const events = log(
      { eventId: "a", kind: "fact", text: "x", trust: "tool" },
      { eventId: "b", kind: "fact", text: "y", source: "web:forum" },
      { eventId: "c", kind: "fact", text: "z", source: "agent:x" },
      { eventId: "r", kind: "revocation", revokes: ["c"], trust: "untrusted" },
      { eventId: "s", kind: "fact", text: "w", supersedes: ["a"], trust: "untrusted" },
    );
    expect(validIds(events)).toEqual(["a", "b", "c"]);
    expect(validIds(events, 5, { minTrust: "user", blockedSources: ["web:*"] })).toEqual(["c"]);
    expect(validIds(events, 5, { minTrust: "tool", blockedSources: ["agent:x"] })).toEqual(["a", "b"]);
  });

  it.each([2, 3, 10])("a chain of %i supersessions leaves only the newest valid (v2)", (length) => {
    const events = log(...chain(length));
    expect(validIds(events)).toEqual([`e-${length}`]);
    expect(selectInputs(events, length, DEFAULT_TRUST_POLICY).conflicts).toEqual([]);
  });

  it.each([3, 10])("v1 stays selectable: a chain of %i revives every other link", (length) => {
    const events = log(...chain(length));
    const v1 = validIds(events, length, DEFAULT_TRUST_POLICY, "v1");
    expect(v1).toContain(`e-${length}`);
    expect(v1).toContain(`e-${length - 2}`);
    expect(selectInputs(events, length, DEFAULT_TRUST_POLICY, "v1").conflicts).toHaveLength(1);
  });

  it.each([2, 3, 10])("revoking the newest of a chain of %i revives the one it superseded", (length) => {
    const events = log(...chain(length), { eventId: "r", kind: "revocation", revokes: [`e-${length}`] });
    expect(validIds(events)).toEqual([`e-${length - 1}`]);
  });

  it.each([3, 10])("revoking a middle link of a chain of %i revives only what it superseded", (length) => {
    const middle = Math.ceil(length / 2);
    const events = log(...chain(length), { eventId: "r", kind: "revocation", revokes: [`e-${middle}`] });
    // The middle link no longer supersedes; the newest still stands; the link below the middle
    // is superseded by nothing admissible, so it is valid again.
    expect(validIds(events)).toEqual([`e-${middle - 1}`, `e-${length}`].filter((id) => id !== "e-0"));
  });

  it("a superseder that is itself superseded still supersedes; one that is untrusted never does", () => {
    const events = log(
      { eventId: "a", kind: "fact", text: "A" },
      { eventId: "b", kind: "fact", text: "B", supersedes: ["a"], trust: "untrusted" },
      { eventId: "c", kind: "fact", text: "C", supersedes: ["b"] },
    );
    expect(validIds(events)).toEqual(["a", "c"]);
  });
});

/** Two events asserting on one key, each a (value, polarity) pair. */
function pair(first: Side, second: Side, oneEvent = false) {
  if (oneEvent)
    return log({
      eventId: "a",
      kind: "permission",
      text: "both at once",
      assertions: [
        { key: "k", value: first.value, polarity: first.polarity ?? "affirmed" },
        { key: "k", value: second.value, polarity: second.polarity ?? "affirmed" },
      ],
    });
  return log(
    fact("a", "k", first.value, { polarity: first.polarity ?? "affirmed" }),
    fact("b", "k", second.value, { polarity: second.polarity ?? "affirmed" }),
  );
}

type Side = { value: unknown; polarity?: string };

const CONTRADICTIONS: Array<[string, Side, Side]> = [
  [
    "the same value, opposite polarity",
    { value: { text: "A" } },
    { value: { text: "A" }, polarity: "negated" },
  ],
  [
    "two different affirmed values",
    { value: { quantity: "5", unit: "km" } },
    { value: { quantity: "8", unit: "km" } },
  ],
  [
    "affirmed and negated scope sets sharing a scope",
    { value: { scopes: ["repo:x:read", "repo:x:write"] } },
    { value: { scopes: ["repo:x:write", "repo:x:delete"] }, polarity: "negated" },
  ],
];

const COMPATIBLE: Array<[string, Side, Side]> = [
  [
    "two negated values",
    { value: { text: "A" }, polarity: "negated" },
    { value: { text: "B" }, polarity: "negated" },
  ],
  [
    "affirmed X and negated Y",
    { value: { text: "Feishu doc" } },
    { value: { text: "Excel attachment" }, polarity: "negated" },
  ],
  [
    "disjoint affirmed and negated scope sets",
    { value: { scopes: ["repo:x:read", "repo:x:write"] } },
    { value: { scopes: ["repo:x:delete"] }, polarity: "negated" },
  ],
  [
    "equal values in other units",
    { value: { quantity: "5", unit: "km" } },
    { value: { quantity: "5000", unit: "m" } },
  ],
];

describe("conflicts (selector v2)", () => {
  it.each(CONTRADICTIONS)(
    "%s contradict: a conflict, in the selector, the planner and the gate",
    async (_, a, b) => {
      const events = pair(a, b);
      expect(selectInputs(events, 2, DEFAULT_TRUST_POLICY).conflicts.map((c) => c.members)).toEqual([
        ["a", "b"],
      ]);
      const planned = new PlannedLog();
      await planned.append([events[0] as MemoryEvent]);
      expect((await planned.append([events[1] as MemoryEvent])).epochReasons).toEqual([
        "new conflict on k @ global",
      ]);
      const settledAnswer = candidate({
        claims: [
          settled("k", a.value, ["a"], { polarity: a.polarity ?? "affirmed" }),
          settled("k", b.value, ["b"], { polarity: b.polarity ?? "affirmed" }),
        ],
      });
      expect(codes(gate(events, settledAnswer))).toEqual(["conflict-missing", "conflict-settled"]);
    },
  );

  it.each(COMPATIBLE)(
    "%s are compatible: no conflict, no epoch move, settled claims pass",
    async (_, a, b) => {
      const events = pair(a, b);
      expect(selectInputs(events, 2, DEFAULT_TRUST_POLICY).conflicts).toEqual([]);
      const planned = new PlannedLog();
      await planned.append([events[0] as MemoryEvent]);
      expect((await planned.append([events[1] as MemoryEvent])).epochReasons).toEqual([]);
      const answer = candidate({
        claims: [
          settled("k", a.value, ["a"], { polarity: a.polarity ?? "affirmed" }),
          settled("k", b.value, ["b"], { polarity: b.polarity ?? "affirmed" }),
        ],
      });
      expect(gate(events, answer).reasons).toEqual([]);
      expect(
        codes(gate(events, { ...answer, claims: answer.claims.map((c) => ({ ...c, status: "contested" })) })),
      ).toEqual(["conflict-invented"]);
    },
  );

  it.each(CONTRADICTIONS)("the assertions of one event never contradict each other (%s)", async (_, a, b) => {
    const events = pair(a, b, true);
    expect(selectInputs(events, 1, DEFAULT_TRUST_POLICY).conflicts).toEqual([]);
    expect((await new PlannedLog().append(events as MemoryEvent[])).epochReasons).toEqual([]);
  });

  it("members are only the events holding a contradicting position; the rest is settled", () => {
    const events = log(
      fact("a", "launch", { date: "2026-12-03" }, { kind: "decision" }),
      fact("b", "launch", { date: "2026-12-10" }, { kind: "decision" }),
      fact("c", "launch", { date: "2026-11-01" }, { kind: "decision", polarity: "negated" }),
    );
    const [conflict] = selectInputs(events, 3, DEFAULT_TRUST_POLICY).conflicts;
    expect(conflict?.members).toEqual(["a", "b"]);
    const answer = candidate({
      claims: [
        settled("launch", { date: "2026-12-03" }, ["a"], { status: "contested" }),
        settled("launch", { date: "2026-12-10" }, ["b"], { status: "contested" }),
        settled("launch", { date: "2026-11-01" }, ["c"], { polarity: "negated" }),
      ],
      unresolvedConflicts: [{ key: "launch", scope: "global", members: ["b", "a"] }],
    });
    expect(gate(events, answer).reasons).toEqual([]);
    const widened = {
      ...answer,
      unresolvedConflicts: [{ key: "launch", scope: "global", members: ["a", "b", "c"] }],
    };
    expect(codes(gate(events, widened))).toEqual(["conflict-invented", "conflict-missing"]);
  });

  it("is resolved only by supersession", () => {
    const events = log(fact("a", "plan", { text: "A" }), fact("b", "plan", { text: "B" }), {
      ...fact("c", "plan", { text: "B" }),
      supersedes: ["a"],
    });
    expect(selectInputs(events, 2, DEFAULT_TRUST_POLICY).conflicts).toHaveLength(1);
    expect(selectInputs(events, 3, DEFAULT_TRUST_POLICY).conflicts).toEqual([]);
  });

  it("the deterministic consolidator contests only contradicting positions and passes its gate", async () => {
    const { consolidate } = await import("#domain/consolidator.ts");
    const events = log(
      {
        eventId: "p1",
        kind: "permission",
        text: "The backup bot may read and write the bucket, but not delete.",
        assertions: [
          { key: "bot/access", value: { scopes: ["s3:read", "s3:write"] }, polarity: "affirmed" },
          { key: "bot/access", value: { scopes: ["s3:delete"] }, polarity: "negated" },
        ],
      },
      fact("p2", "bot/access", { scopes: ["s3:write"] }, { kind: "permission", polarity: "negated" }),
    );
    const context = contextOf(events);
    const output = consolidate(context);
    expect(output.claims.map((c) => [c.derivedFrom.join(","), c.status])).toEqual([
      ["p1", "contested"],
      ["p1", "settled"],
      ["p2", "contested"],
    ]);
    expect(gate(events, output).reasons).toEqual([]);
  });
});

const logArb = fc.tuple(fc.array(stepArb, { minLength: 1, maxLength: 18 }), fc.nat()).map(([steps, cut]) => {
  const events: MemoryEvent[] = [];
  steps.forEach((step, index) => {
    const eventId = `e-${index + 1}`;
    const target =
      events.length > 0 ? events[("target" in step ? step.target : 0) % events.length]?.eventId : undefined;
    const trust = step.trust;
    if (step.type === "assert")
      events.push(
        MemoryEventSchema.parse({ eventId, kind: "fact", text: eventId, assertions: step.assertions, trust }),
      );
    else if (step.type === "supersede" && target)
      events.push(
        MemoryEventSchema.parse({
          eventId,
          kind: "fact",
          text: eventId,
          trust,
          supersedes: [target],
          ...(step.assertions.length > 0 ? { assertions: step.assertions } : {}),
        }),
      );
    else if (step.type === "revoke" && target)
      events.push(MemoryEventSchema.parse({ eventId, kind: "revocation", revokes: [target], trust }));
  });
  return { events, cut: events.length === 0 ? 0 : cut % (events.length + 1) };
});

describe("selector v2 against an independent reading of the contract", () => {
  it("valid set and conflicts equal the oracle's on random logs", () => {
    fc.assert(
      fc.property(logArb, ({ events }) => {
        const sequenced = events.map((event, index) => ({ ...event, sequence: index + 1 }));
        const selection = selectInputs(sequenced, sequenced.length, DEFAULT_TRUST_POLICY);
        const valid = oracleValidity(sequenced, sequenced.length, DEFAULT_TRUST_POLICY);
        expect([...selection.validIds].sort()).toEqual([...valid].sort());
        expect(
          selection.conflicts.map((c) => `${JSON.stringify([c.key, c.scope])}:${c.members.join(",")}`).sort(),
        ).toEqual(oracleMembers(oracleConflicts(sequenced, valid)));
      }),
      { numRuns: 400 },
    );
  });

  it("the standing resolver (paged recall's) names the same valid inputs, asked with and without a wait", async () => {
    await fc.assert(
      fc.asyncProperty(logArb, async ({ events }) => {
        const sequenced = events.map((event, index) => ({ ...event, sequence: index + 1 }));
        const selection = selectInputs(sequenced, sequenced.length, DEFAULT_TRUST_POLICY);
        const actors = new Map<string, string[]>();
        for (const event of sequenced)
          for (const target of [...(event.revokes ?? []), ...(event.supersedes ?? [])])
            actors.set(target, [...(actors.get(target) ?? []), event.eventId]);
        const records = new Map(
          sequenced.map((event) => [event.eventId, { event, actors: actors.get(event.eventId) ?? [] }]),
        );
        const load = async (ids: readonly string[]) =>
          new Map(ids.flatMap((id) => records.get(id) ?? []).map((record) => [record.event.eventId, record]));
        // As recall pages: the page remembered, each event asked first without a wait.
        const paged = new StandingResolver(load, DEFAULT_TRUST_POLICY, sequenced.length);
        paged.remember(records.values());
        const asked = new StandingResolver(load, DEFAULT_TRUST_POLICY, sequenced.length);
        for (const event of sequenced) {
          const valid = selection.validIds.has(event.eventId);
          expect(paged.validInputNow(event.eventId) ?? (await paged.isValidInput(event.eventId))).toBe(valid);
          expect(await asked.isValidInput(event.eventId)).toBe(valid);
        }
      }),
      { numRuns: 300 },
    );
  });

  it("the planner moves the epoch exactly when the validity of stored events or the contradicting positions change", async () => {
    await fc.assert(
      fc.asyncProperty(logArb, async ({ events, cut }) => {
        const { plan, sequenced, old, validBefore, validAfter } = await appendedInTwo(events, cut);
        const oldIds = old.map((event) => event.eventId);
        const validityChanged = oldIds.some((id) => validBefore.has(id) !== validAfter.has(id));
        const conflictsChanged =
          JSON.stringify(oraclePositions(oracleConflicts(old, validBefore))) !==
          JSON.stringify(oraclePositions(oracleConflicts(sequenced, validAfter)));
        expect(plan.validityChanged).toBe(validityChanged);
        expect(plan.clockAfter.inputEpoch - plan.clockBefore.inputEpoch).toBe(
          validityChanged || conflictsChanged ? 1 : 0,
        );
      }),
      { numRuns: 400 },
    );
  });
});

describe("event log checks", () => {
  it("refuses duplicate ids, links forward or to unknown events, listing every problem", () => {
    const events = log(
      { eventId: "a", kind: "fact", text: "x", supersedes: ["b"] },
      { eventId: "b", kind: "fact", text: "y" },
      { eventId: "b", kind: "fact", text: "z" },
      { eventId: "r", kind: "revocation", revokes: ["nope"] },
    );
    try {
      checkEventLog(events);
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(EventLogError);
      const problems = (error as EventLogError).problems.join("\n");
      expect(problems).toContain("eventId b appears twice");
      expect(problems).toContain("a.supersedes names b, which does not come before it");
      expect(problems).toContain("r.revokes names nope, which is not in the log");
    }
  });
});

// ------------------------------------------------------ selector v3: readings under a latest rule
