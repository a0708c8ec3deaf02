import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { MemoryEvent, SequencedEvent, TrustPolicy } from "#domain/schemas.ts";
import { DEFAULT_TRUST_POLICY, MemoryEvent as MemoryEventSchema } from "#domain/schemas.ts";
import { selectInputs, selectionDifferences } from "#domain/selector.ts";
import { canonicalValue, describeValue } from "#domain/values.ts";
import { fact, log } from "../support/builders.ts";
import {
  appendedInTwo,
  oracleConflicts,
  oracleMembers,
  oraclePositions,
  oracleValidity,
  stepArb,
} from "../support/selector-oracle.ts";

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
        const { plan, sequenced, old, validBefore, validAfter } = await appendedInTwo(events, cut, policy);
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
