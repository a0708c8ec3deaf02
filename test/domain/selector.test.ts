import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { MemoryEvent, SequencedEvent, TrustPolicy } from "#domain/schemas.ts";
import { DEFAULT_TRUST_POLICY, MemoryEvent as MemoryEventSchema, TRUST_LEVELS } from "#domain/schemas.ts";
import { checkEventLog, EventLogError, selectInputs, selectionDifferences } from "#domain/selector.ts";
import { StandingResolver } from "#domain/standing-resolver.ts";
import { canonicalValue, describeValue } from "#domain/values.ts";
import { candidate, codes, contextOf, fact, gate, log, settled } from "../support/builders.ts";
import { PlannedLog } from "../support/memory-append.ts";

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

// ---------------------------------------------------------------- the oracle

const rank = (trust: string) => TRUST_LEVELS.indexOf(trust as (typeof TRUST_LEVELS)[number]);

/** CONTRACT §2 read literally, by recursion over the definitions: a test's independent reading. */
function oracleValidity(events: readonly SequencedEvent[], highWater: number, policy: TrustPolicy) {
  const byId = new Map(events.map((event) => [event.eventId, event]));
  const trusted = (e: SequencedEvent) => e.sequence <= highWater && rank(e.trust) >= rank(policy.minTrust);
  const revokedBy = (e: SequencedEvent) =>
    events.filter((r) => r.kind === "revocation" && r.revokes?.includes(e.eventId));
  const supersededBy = (e: SequencedEvent) => events.filter((s) => s.supersedes?.includes(e.eventId));
  const valid = (e: SequencedEvent): boolean => admissible(e) && !supersededBy(e).some((s) => admissible(s));
  const admissible = (e: SequencedEvent): boolean => trusted(e) && !revokedBy(e).some((r) => valid(r));
  return new Set([...byId.values()].filter((e) => e.kind !== "revocation" && valid(e)).map((e) => e.eventId));
}

/** Pairwise contradictions among valid events' assertions: (key, scope) → contradicting positions and members. */
function oracleConflicts(events: readonly SequencedEvent[], valid: ReadonlySet<string>) {
  const all = events
    .filter((e) => valid.has(e.eventId))
    .flatMap((e) =>
      (e.assertions ?? []).map((a) => ({ id: e.eventId, ...a, canon: canonicalValue(a.value) })),
    );
  const contradicts = (p: (typeof all)[number], q: (typeof all)[number]) => {
    if (p.canon === q.canon && p.polarity !== q.polarity) return true;
    if (p.polarity === "affirmed" && q.polarity === "affirmed" && p.canon !== q.canon) return true;
    if ("scopes" in p.value && "scopes" in q.value && p.polarity !== q.polarity) {
      const other = q.value.scopes;
      return p.value.scopes.some((scope) => other.includes(scope));
    }
    return false;
  };
  const found = new Map<string, { members: Set<string>; positions: Set<string> }>();
  for (const p of all)
    for (const q of all) {
      if (p.id === q.id || p.key !== q.key || p.scope !== q.scope || !contradicts(p, q)) continue;
      const id = JSON.stringify([p.key, p.scope]);
      const entry = found.get(id) ?? { members: new Set(), positions: new Set() };
      entry.members.add(p.id);
      entry.positions.add(`${p.polarity}|${p.canon}`);
      found.set(id, entry);
    }
  return found;
}

const oracleMembers = (found: ReturnType<typeof oracleConflicts>) =>
  [...found].map(([id, entry]) => `${id}:${[...entry.members].sort().join(",")}`).sort();
const oraclePositions = (found: ReturnType<typeof oracleConflicts>) =>
  [...found].map(([id, entry]) => `${id}:${[...entry.positions].sort().join(",")}`).sort();

const assertionArb = fc.record({
  key: fc.constantFrom("k1", "k2"),
  value: fc.oneof(
    fc.record({ text: fc.constantFrom("A", "B") }),
    fc.record({ quantity: fc.constantFrom("5", "5000"), unit: fc.constantFrom("km", "m") }),
    fc.record({ scopes: fc.subarray(["r", "w", "d"], { minLength: 1 }) }),
  ),
  polarity: fc.constantFrom("affirmed", "negated"),
});
const stepArb = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({
      type: fc.constant("assert"),
      assertions: fc.array(assertionArb, { minLength: 1, maxLength: 2 }),
      trust: fc.constantFrom("user", "tool", "untrusted"),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      type: fc.constant("supersede"),
      target: fc.nat(),
      assertions: fc.array(assertionArb, { maxLength: 1 }),
      trust: fc.constantFrom("user", "untrusted"),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      type: fc.constant("revoke"),
      target: fc.nat(),
      trust: fc.constantFrom("user", "untrusted"),
    }),
  },
);
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
        const planned = new PlannedLog();
        const before = events.slice(0, cut);
        if (before.length > 0) await planned.append(before);
        const plan = await planned.append(events.slice(cut));
        const sequenced = planned.sequenced();
        const old = sequenced.filter((event) => event.sequence <= cut);
        const validBefore = oracleValidity(old, cut, DEFAULT_TRUST_POLICY);
        const validAfter = oracleValidity(sequenced, sequenced.length, DEFAULT_TRUST_POLICY);
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

const BUCKET: TrustPolicy = { ...DEFAULT_TRUST_POLICY, latest: ["backup.bucket_size"] };
const reading = (eventId: string, size: string, occurredAt?: string, extra: Record<string, unknown> = {}) =>
  fact(
    eventId,
    "backup.bucket_size",
    { quantity: size, unit: "TB" },
    {
      scope: "bucket:prod",
      ...(occurredAt === undefined ? {} : { occurredAt }),
      ...extra,
    },
  );
const readingsOf = (events: SequencedEvent[], policy: TrustPolicy = BUCKET) =>
  selectInputs(events, events.length, policy, "v3");
const summary = (selection: ReturnType<typeof readingsOf>) =>
  selection.readings.map((r) => ({
    latest: r.latest,
    current: r.current.map((p) => `${p.polarity === "negated" ? "not " : ""}${describeValue(p.value)}`),
    earlier: r.earlier.flatMap((p) => p.holders),
  }));

describe("selector v3: the latest reading holds", () => {
  it("two readings at different dates are no conflict under a rule: the later one holds", () => {
    const events = log(
      reading("oct", "4.6", "2026-10-26T12:15:00+00:00"),
      reading("dec", "4.1", "2026-12-03T09:20:00Z"),
    );
    const selection = readingsOf(events);
    expect(selection.conflicts).toEqual([]);
    expect(selection.validIds).toEqual(new Set(["oct", "dec"]));
    expect(summary(selection)).toEqual([{ latest: "dec", current: ["4.1 TB"], earlier: ["oct"] }]);
  });

  it("without a rule nothing changes: two readings remain a conflict (v3 and v2 alike)", () => {
    const events = log(reading("oct", "4.6", "2026-10-26"), reading("dec", "4.1", "2026-12-03"));
    for (const version of ["v2", "v3"] as const) {
      const selection = selectInputs(events, 2, DEFAULT_TRUST_POLICY, version);
      expect(selection.conflicts.map((c) => c.members)).toEqual([["dec", "oct"]]);
      expect(selection.readings).toEqual([]);
    }
    // v2 ignores the rules even when the policy has them (recovery reads as v2 did).
    expect(selectInputs(events, 2, BUCKET, "v2").conflicts).toHaveLength(1);
  });

  it("orders by occurredAt, not by sequence: a reading logged late but taken earlier is an earlier reading", () => {
    const events = log(reading("dec", "4.1", "2026-12-03"), reading("backfill", "4.4", "2026-11-10"));
    expect(summary(readingsOf(events))).toEqual([
      { latest: "dec", current: ["4.1 TB"], earlier: ["backfill"] },
    ]);
  });

  it("breaks a tie of occurredAt by the higher sequence; offsets are normalised", () => {
    const events = log(
      reading("a", "4.6", "2026-12-03T10:20:00+01:00"),
      reading("b", "4.1", "2026-12-03T09:20:00Z"),
    );
    expect(summary(readingsOf(events))[0]?.latest).toBe("b");
  });

  it("orders readings without occurredAt by sequence, each after the dated ones logged before it", () => {
    expect(summary(readingsOf(log(reading("a", "4.6"), reading("b", "4.1"))))[0]?.latest).toBe("b");
    const events = log(
      reading("dated", "4.6", "2026-12-03"),
      reading("undated", "4.1"),
      reading("old", "4.0", "2026-11-01"),
    );
    expect(summary(readingsOf(events))[0]).toEqual({
      latest: "undated",
      current: ["4.1 TB"],
      earlier: ["dated", "old"],
    });
  });

  it("a negated reading is a reading; the same value read again keeps it current", () => {
    const flag = (eventId: string, polarity: string, occurredAt: string) =>
      fact(eventId, "replica.healthy", { bool: true }, { polarity, occurredAt });
    const policy = { ...DEFAULT_TRUST_POLICY, latest: ["replica.*"] };
    const events = log(flag("up", "affirmed", "2026-10-01"), flag("down", "negated", "2026-10-02"));
    expect(selectInputs(events, 2, policy, "v3").conflicts).toEqual([]);
    expect(summary(readingsOf(events, policy))).toEqual([
      { latest: "down", current: ["not true"], earlier: ["up"] },
    ]);
    const again = log(
      reading("a", "4.1", "2026-10-01"),
      reading("b", "4.6", "2026-11-01"),
      reading("c", "4.1", "2026-12-01"),
    );
    expect(summary(readingsOf(again))[0]?.earlier).toEqual(["b"]);
  });

  it("revocation and supersession decide validity first: a revoked latest reading hands back to the one before", () => {
    const events = log(reading("oct", "4.6", "2026-10-26"), reading("dec", "4.1", "2026-12-03"), {
      eventId: "r",
      kind: "revocation",
      revokes: ["dec"],
    });
    expect(summary(readingsOf(events))).toEqual([{ latest: "oct", current: ["4.6 TB"], earlier: [] }]);
  });

  it("a rule may name scopes: other scopes of the key still conflict", () => {
    const policy = { ...DEFAULT_TRUST_POLICY, latest: [{ key: "*.lag", scope: "db:eu-*" }] };
    const lag = (eventId: string, scope: string, seconds: string, occurredAt: string) =>
      fact(eventId, "replica.lag", { quantity: seconds, unit: "s" }, { scope, occurredAt });
    const events = log(
      lag("eu-1", "db:eu-west-1b", "3", "2026-10-01"),
      lag("eu-2", "db:eu-west-1b", "5", "2026-12-01"),
      lag("us-1", "db:us-east-1", "1", "2026-10-01"),
      lag("us-2", "db:us-east-1", "2", "2026-12-01"),
    );
    const selection = selectInputs(events, 4, policy, "v3");
    expect(selection.conflicts.map((c) => c.scope)).toEqual(["db:us-east-1"]);
    expect(selection.readings.map((r) => [r.scope, r.latest])).toEqual([["db:eu-west-1b", "eu-2"]]);
  });

  it("earlier readings are valid inputs but no must-preserve item; the current one is", async () => {
    const { mustPreserveSet } = await import("#domain/must-preserve.ts");
    const events = log(reading("oct", "4.6", "2026-10-26"), reading("dec", "4.1", "2026-12-03"));
    const items = mustPreserveSet(readingsOf(events)).map((item) => item.itemId);
    expect(items).toEqual(["dec#0"]);
  });

  it("a rule change is a difference only where it changes what holds", () => {
    const events = log(
      reading("oct", "4.6", "2026-10-26"),
      reading("dec", "4.1", "2026-12-03"),
      fact("x", "other", { text: "A" }),
    );
    const none = selectInputs(events, 3, DEFAULT_TRUST_POLICY, "v3");
    expect(selectionDifferences(none, readingsOf(events))).toEqual([
      "no longer a conflict: backup.bucket_size @ bucket:prod [dec, oct]",
      "now an earlier reading: backup.bucket_size @ bucket:prod: 4.6 TB",
    ]);
    const unrelated = { ...DEFAULT_TRUST_POLICY, latest: ["stock.*", "other"] };
    expect(selectionDifferences(none, selectInputs(events, 3, unrelated, "v3"))).toEqual([]);
  });
});

describe("latest rules: globs", () => {
  it.each([
    ["backup.bucket_size", "backup.bucket_size", true],
    ["backup.bucket_size", "backup.bucket_size.x", false],
    ["stock.*", "stock.widgets", true],
    ["stock.*", "stock.", true],
    ["stock.*", "stocks.widgets", false],
    ["*.lag", "db.replica.lag", true],
    ["*.lag", "db.replica.lagging", false],
    ["*", "anything at all", true],
    ["a*b*c", "a-x-b-y-c", true],
    ["a*b*c", "a-c-b", false],
    ["a*a", "a", false],
    ["*ab*ab*", "xabyab", true],
  ])("%s matches %s: %s", async (glob, key, expected) => {
    const { globMatches } = await import("#domain/readings.ts");
    expect(globMatches(glob, key)).toBe(expected);
  });

  it("refuses a policy with too many or malformed rules, naming the field", async () => {
    const { TrustPolicy } = await import("#domain/schemas.ts");
    const tooMany = TrustPolicy.safeParse({ latest: Array.from({ length: 65 }, (_, i) => `k${i}`) });
    expect(tooMany.success).toBe(false);
    expect(tooMany.error?.issues[0]?.message).toMatch(/at most 64 rules/);
    expect(TrustPolicy.safeParse({ latest: [""] }).success).toBe(false);
    expect(TrustPolicy.safeParse({ latest: ["x".repeat(257)] }).success).toBe(false);
    expect(TrustPolicy.safeParse({ latest: [{ key: "k" }] }).success).toBe(false);
    expect(TrustPolicy.safeParse({ latest: [{ key: "k", scope: "s", extra: 1 }] }).success).toBe(false);
    expect(TrustPolicy.safeParse({ latest: ["a\nb"] }).success).toBe(false);
    expect(TrustPolicy.parse({ latest: ["k", { key: "*.lag", scope: "db:*" }] }).latest).toHaveLength(2);
  });
});

// ----------------------------------------------- selector v3 against an independent reading

/** CONTRACT §2's latest rule read literally: glob by regular expression, time by Date.parse. */
function oracleCovers(
  rules: readonly (string | { key: string; scope: string })[],
  key: string,
  scope: string,
) {
  const matches = (glob: string, text: string) =>
    new RegExp(
      `^${glob
        .split("*")
        .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"))
        .join(".*")}$`,
      "s",
    ).test(text);
  return rules.some((rule) =>
    typeof rule === "string" ? matches(rule, key) : matches(rule.key, key) && matches(rule.scope, scope),
  );
}

function oracleReadings(events: readonly SequencedEvent[], valid: ReadonlySet<string>, policy: TrustPolicy) {
  const rules = policy.latest ?? [];
  const found = new Map<string, { latest: string; earlier: string[] }>();
  const pairs = new Set(
    events
      .filter((e) => valid.has(e.eventId))
      .flatMap((e) => (e.assertions ?? []).map((a) => JSON.stringify([a.key, a.scope]))),
  );
  for (const pair of pairs) {
    const [key, scope] = JSON.parse(pair) as [string, string];
    if (!oracleCovers(rules, key, scope)) continue;
    const readers = events.filter(
      (e) => valid.has(e.eventId) && (e.assertions ?? []).some((a) => a.key === key && a.scope === scope),
    );
    // A reading's time: its occurredAt, else the latest time of the readings before it (none: -∞).
    const time = (e: SequencedEvent): number =>
      e.occurredAt !== undefined
        ? Date.parse(e.occurredAt)
        : Math.max(Number.NEGATIVE_INFINITY, ...readers.filter((r) => r.sequence < e.sequence).map(time));
    const latest = [...readers].sort(
      (a, b) => time(b) - time(a) || b.sequence - a.sequence,
    )[0] as SequencedEvent;
    const positionsOf = (e: SequencedEvent) =>
      (e.assertions ?? [])
        .filter((a) => a.key === key && a.scope === scope)
        .map((a) => `${a.polarity}|${canonicalValue(a.value)}`);
    const current = new Set(positionsOf(latest));
    const earlier = readers.filter((r) => positionsOf(r).some((p) => !current.has(p))).map((r) => r.eventId);
    found.set(pair, { latest: latest.eventId, earlier: earlier.sort() });
  }
  return found;
}

const readingStepArb = fc.record({
  type: fc.constant("assert" as const),
  assertions: fc.array(
    fc.record({
      key: fc.constantFrom("stock.a", "stock.b", "lag"),
      scope: fc.constantFrom("global", "db:eu"),
      value: fc.record({ quantity: fc.constantFrom("1", "2", "2000"), unit: fc.constantFrom("m", "km") }),
      polarity: fc.constantFrom("affirmed", "affirmed", "negated"),
    }),
    { minLength: 1, maxLength: 2 },
  ),
  occurredAt: fc.option(
    fc.constantFrom(
      "2026-10-01",
      "2026-10-01T12:00:00Z",
      "2026-10-01T13:00:00+01:00",
      "2026-11-01",
      "2026-12-01T00:00:00.5Z",
    ),
    { nil: undefined },
  ),
  trust: fc.constantFrom("user", "tool", "untrusted"),
});
const rulesArb = fc.subarray(["stock.*", "lag", { key: "*", scope: "db:*" }, "nothing.*"] as const);
const readingLogArb = fc
  .tuple(
    fc.array(fc.oneof({ weight: 5, arbitrary: readingStepArb }, { weight: 2, arbitrary: stepArb }), {
      minLength: 1,
      maxLength: 16,
    }),
    fc.nat(),
    rulesArb,
  )
  .map(([steps, cut, rules]) => {
    const events: MemoryEvent[] = [];
    steps.forEach((step, index) => {
      const eventId = `e-${index + 1}`;
      const target =
        events.length > 0 ? events[("target" in step ? step.target : 0) % events.length]?.eventId : undefined;
      const dated =
        "occurredAt" in step && step.occurredAt !== undefined ? { occurredAt: step.occurredAt } : {};
      if (step.type === "assert")
        events.push(
          MemoryEventSchema.parse({
            eventId,
            kind: "fact",
            text: eventId,
            assertions: step.assertions,
            trust: step.trust,
            ...dated,
          }),
        );
      else if (step.type === "supersede" && target)
        events.push(
          MemoryEventSchema.parse({
            eventId,
            kind: "fact",
            text: eventId,
            trust: step.trust,
            supersedes: [target],
            ...(step.assertions.length > 0 ? { assertions: step.assertions } : {}),
          }),
        );
      else if (step.type === "revoke" && target)
        events.push(
          MemoryEventSchema.parse({ eventId, kind: "revocation", revokes: [target], trust: step.trust }),
        );
    });
    return {
      events,
      cut: events.length === 0 ? 0 : cut % (events.length + 1),
      policy: { ...DEFAULT_TRUST_POLICY, latest: [...rules] } as TrustPolicy,
    };
  });

describe("selector v3 against an independent reading of the contract", () => {
  it("valid set, conflicts and readings equal the oracle's on random logs with random rules", () => {
    fc.assert(
      fc.property(readingLogArb, ({ events, policy }) => {
        const sequenced = events.map((event, index) => ({ ...event, sequence: index + 1 }));
        const selection = selectInputs(sequenced, sequenced.length, policy, "v3");
        const valid = oracleValidity(sequenced, sequenced.length, policy);
        expect([...selection.validIds].sort()).toEqual([...valid].sort());
        const rules = policy.latest ?? [];
        const uncovered = sequenced.map((e) => ({
          ...e,
          assertions: (e.assertions ?? []).filter((a) => !oracleCovers(rules, a.key, a.scope)),
        }));
        expect(
          selection.conflicts.map((c) => `${JSON.stringify([c.key, c.scope])}:${c.members.join(",")}`).sort(),
        ).toEqual(oracleMembers(oracleConflicts(uncovered, valid)));
        const expected = oracleReadings(sequenced, valid, policy);
        expect(
          Object.fromEntries(
            selection.readings.map((r) => [
              JSON.stringify([r.key, r.scope]),
              { latest: r.latest, earlier: [...new Set(r.earlier.flatMap((p) => p.holders))].sort() },
            ]),
          ),
        ).toEqual(Object.fromEntries(expected));
      }),
      { numRuns: 500 },
    );
  });

  it("the planner moves the epoch exactly when validity, the contradicting positions or the reading that holds change", async () => {
    await fc.assert(
      fc.asyncProperty(readingLogArb, async ({ events, cut, policy }) => {
        const planned = new PlannedLog(policy);
        const before = events.slice(0, cut);
        if (before.length > 0) await planned.append(before);
        const plan = await planned.append(events.slice(cut));
        const sequenced = planned.sequenced();
        const old = sequenced.filter((event) => event.sequence <= cut);
        const validBefore = oracleValidity(old, cut, policy);
        const validAfter = oracleValidity(sequenced, sequenced.length, policy);
        const validityChanged = old.some((e) => validBefore.has(e.eventId) !== validAfter.has(e.eventId));
        const rules = policy.latest ?? [];
        const uncovered = (list: SequencedEvent[]) =>
          list.map((e) => ({
            ...e,
            assertions: (e.assertions ?? []).filter((a) => !oracleCovers(rules, a.key, a.scope)),
          }));
        const conflictsChanged =
          JSON.stringify(oraclePositions(oracleConflicts(uncovered(old), validBefore))) !==
          JSON.stringify(oraclePositions(oracleConflicts(uncovered(sequenced), validAfter)));
        // What holds on a key that had a reading: the latest reading's positions.
        const holding = (list: SequencedEvent[], valid: ReadonlySet<string>) => {
          const byPair = new Map<string, string>();
          for (const [pair, { latest }] of oracleReadings(list, valid, policy)) {
            const event = list.find((e) => e.eventId === latest) as SequencedEvent;
            const [key, scope] = JSON.parse(pair) as [string, string];
            byPair.set(
              pair,
              [
                ...new Set(
                  (event.assertions ?? [])
                    .filter((a) => a.key === key && a.scope === scope)
                    .map((a) => `${a.polarity}|${canonicalValue(a.value)}`),
                ),
              ]
                .sort()
                .join(";"),
            );
          }
          return byPair;
        };
        const held = holding(old, validBefore);
        const holds = holding(sequenced, validAfter);
        const readingChanged = [...held].some(([pair, positions]) => holds.get(pair) !== positions);
        expect(plan.validityChanged).toBe(validityChanged);
        expect(plan.clockAfter.inputEpoch - plan.clockBefore.inputEpoch).toBe(
          validityChanged || conflictsChanged || readingChanged ? 1 : 0,
        );
      }),
      { numRuns: 500 },
    );
  });
});
