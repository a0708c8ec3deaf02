import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { consolidate } from "#domain/consolidator.ts";
import { gateCandidate } from "#domain/gate/index.ts";
import type { SequencedEvent, TrustPolicy } from "#domain/schemas.ts";
import { DEFAULT_TRUST_POLICY } from "#domain/schemas.ts";
import { canonicalValue } from "#domain/values.ts";
import { candidate, codes, contextOf, fact, gate, log, settled } from "../support/builders.ts";

/**
 * The gate on a key a `latest` rule covers (CONTRACT §4a "Readings", selector v3): the latest
 * reading is current, an earlier one may be left out or restated as earlier with its date, never
 * stated as current.
 */
const RULE: TrustPolicy = { ...DEFAULT_TRUST_POLICY, latest: ["backup.bucket_size"] };
const size = (quantity: string) => ({ quantity, unit: "TB" });
const reading = (eventId: string, quantity: string, extra: Record<string, unknown> = {}) =>
  fact(eventId, "backup.bucket_size", size(quantity), extra);
const events = log(
  reading("oct", "4.6", { occurredAt: "2026-10-26T12:15:00Z" }),
  reading("dec", "4.1", { occurredAt: "2026-12-03T09:20:00Z" }),
);
const current = settled("backup.bucket_size", size("4.1"), ["dec"]);
const earlier = (extra: Record<string, unknown> = {}) =>
  settled("backup.bucket_size", size("4.6"), ["oct"], { status: "earlier", asOf: "2026-10-26", ...extra });

describe("the gate on readings (selector v3)", () => {
  it("passes the current reading alone, the earlier one left cold", () => {
    const report = gate(events, candidate({ claims: [current], coldRefs: ["oct"] }), { policy: RULE });
    expect(report.reasons).toEqual([]);
  });

  it("passes an earlier reading restated as one, dated by its day or its exact instant", () => {
    for (const asOf of ["2026-10-26", "2026-10-26T12:15:00Z", "2026-10-26T13:15:00+01:00"])
      expect(
        gate(events, candidate({ claims: [current, earlier({ asOf })] }), { policy: RULE }).reasons,
      ).toEqual([]);
  });

  it("refuses an earlier reading stated as current: outdated-reading, naming the reading that holds", () => {
    const report = gate(
      events,
      candidate({ claims: [current, settled("backup.bucket_size", size("4.6"), ["oct"])] }),
      { policy: RULE },
    );
    expect(codes(report)).toEqual(["outdated-reading"]);
    expect(report.reasons[0]?.eventId).toBe("dec");
    expect(report.reasons[0]?.detail).toMatch(/dec \(read 2026-12-03T09:20:00Z\) is the latest reading/);
  });

  it("refuses serving both readings as a dispute: outdated-reading and conflict-invented", () => {
    const dispute = candidate({
      claims: [
        settled("backup.bucket_size", size("4.6"), ["oct"], { status: "contested" }),
        settled("backup.bucket_size", size("4.1"), ["dec"], { status: "contested" }),
      ],
      unresolvedConflicts: [{ key: "backup.bucket_size", scope: "global", members: ["dec", "oct"] }],
    });
    expect(codes(gate(events, dispute, { policy: RULE }))).toEqual(["conflict-invented", "outdated-reading"]);
  });

  it("refuses an earlier reading without its date when its event has one", () => {
    const undated = earlier();
    delete undated.asOf;
    const report = gate(events, candidate({ claims: [current, undated] }), { policy: RULE });
    expect(codes(report)).toEqual(["outdated-reading"]);
    expect(report.reasons[0]?.detail).toMatch(/give it asOf 2026-10-26/);
  });

  it("passes an undated earlier reading of an event without occurredAt", () => {
    const undatedLog = log(reading("a", "4.6"), reading("b", "4.1"));
    const claims = [
      settled("backup.bucket_size", size("4.1"), ["b"]),
      settled("backup.bucket_size", size("4.6"), ["a"], { status: "earlier" }),
    ];
    expect(gate(undatedLog, candidate({ claims }), { policy: RULE }).reasons).toEqual([]);
  });

  it("refuses an asOf that is not the day its events occurred: value-changed", () => {
    const report = gate(events, candidate({ claims: [current, earlier({ asOf: "2026-10-27" })] }), {
      policy: RULE,
    });
    expect(codes(report)).toEqual(["value-changed"]);
    // On any claim: the current reading dated wrongly is value-changed too.
    const wrong = { ...current, asOf: "2026-10-26" };
    expect(codes(gate(events, candidate({ claims: [wrong] }), { policy: RULE }))).toEqual(["value-changed"]);
  });

  it("refuses status earlier on the reading that holds, or on a key no rule covers: unsupported-claim", () => {
    const latestAsEarlier = { ...current, status: "earlier" as const, asOf: "2026-12-03" };
    const report = gate(events, candidate({ claims: [latestAsEarlier, current] }), { policy: RULE });
    expect(codes(report)).toEqual(["unsupported-claim"]);
    expect(report.reasons[0]?.detail).toMatch(/no later reading supersedes it/);
    const withoutRule = gate(
      events,
      candidate({
        claims: [
          settled("backup.bucket_size", size("4.6"), ["oct"], { status: "contested" }),
          settled("backup.bucket_size", size("4.1"), ["dec"], { status: "contested" }),
          earlier(),
        ],
        unresolvedConflicts: [{ key: "backup.bucket_size", scope: "global", members: ["dec", "oct"] }],
      }),
    );
    expect(codes(withoutRule)).toEqual(["unsupported-claim"]);
    expect(withoutRule.reasons[0]?.detail).toMatch(/no latest rule covers backup.bucket_size @ global/);
  });

  it("refuses a candidate that keeps only the earlier reading: the current one is missing", () => {
    const report = gate(events, candidate({ claims: [earlier()], coldRefs: ["dec"] }), { policy: RULE });
    expect(codes(report)).toEqual(["missing"]);
    expect(report.reasons[0]?.eventId).toBe("dec");
  });

  it("still asks a whole event (a decision) holding an earlier reading to be restated, which status earlier does", () => {
    const decided = log(
      reading("oct", "4.6", { occurredAt: "2026-10-26", kind: "decision" }),
      reading("dec", "4.1", { occurredAt: "2026-12-03" }),
    );
    expect(
      codes(gate(decided, candidate({ claims: [current], coldRefs: ["oct"] }), { policy: RULE })),
    ).toEqual(["missing"]);
    expect(gate(decided, candidate({ claims: [current, earlier()] }), { policy: RULE }).reasons).toEqual([]);
  });

  it("without a rule nothing changes: the two readings are a conflict the gate asks for", () => {
    expect(codes(gate(events, candidate({ claims: [current], coldRefs: ["oct"] })))).toEqual([
      "conflict-missing",
      "conflict-settled",
    ]);
  });

  it("the deterministic consolidator restates the earlier reading as one, with its date, and passes", () => {
    const context = contextOf(events, RULE);
    const output = consolidate(context);
    expect(output.unresolvedConflicts).toEqual([]);
    expect(output.claims.map((c) => [c.status, c.asOf ?? null, c.derivedFrom])).toEqual([
      ["settled", null, ["dec"]],
      ["earlier", "2026-10-26", ["oct"]],
    ]);
    expect(gateCandidate(context, output).reasons).toEqual([]);
  });

  it("the deterministic consolidator keeps a decision holding an earlier reading under a tight budget", () => {
    const decided = log(
      reading("oct", "4.6", { occurredAt: "2026-10-26", kind: "decision" }),
      reading("dec", "4.1", { occurredAt: "2026-12-03" }),
      { eventId: "n", kind: "note", text: "a long note ".repeat(40) },
    );
    const context = contextOf(decided, RULE);
    const output = consolidate(context, { budget: 10 });
    expect(output.claims.map((c) => [c.status, c.derivedFrom])).toEqual([
      ["earlier", ["oct"]],
      ["settled", ["dec"]],
    ]);
    expect(output.coldRefs).toEqual(["n"]);
  });
});

// ------------------------------------------------- against an independent reading of the rule

/** Random readings on two keys and scopes, some dated (offsets included), some not. */
const readingsArb = fc.record({
  steps: fc.array(
    fc.record({
      key: fc.constantFrom("stock.widgets", "replica.lag"),
      scope: fc.constantFrom("global", "db:eu"),
      quantity: fc.constantFrom("1", "2", "3"),
      negated: fc.boolean(),
      occurredAt: fc.option(
        fc.constantFrom("2026-10-01", "2026-10-01T12:00:00Z", "2026-10-01T13:00:00+01:00", "2026-11-01"),
        { nil: undefined },
      ),
    }),
    { minLength: 1, maxLength: 10 },
  ),
  rules: fc.subarray(["stock.*", { key: "*.lag", scope: "db:*" }] as const),
});

/** CONTRACT §2 read literally: per (key, scope) a rule covers, the reading with the latest time holds. */
function oracleLatest(events: readonly SequencedEvent[], covered: (key: string, scope: string) => boolean) {
  const latest = new Map<string, SequencedEvent>();
  const readers = (key: string, scope: string) =>
    events.filter((e) => (e.assertions ?? []).some((a) => a.key === key && a.scope === scope));
  for (const event of events)
    for (const { key, scope } of event.assertions ?? []) {
      if (!covered(key, scope)) continue;
      const on = readers(key, scope);
      // Undated: the latest time among the readings before it (none: before every time).
      const time = (e: SequencedEvent): number =>
        e.occurredAt !== undefined
          ? Date.parse(e.occurredAt)
          : Math.max(Number.NEGATIVE_INFINITY, ...on.filter((r) => r.sequence < e.sequence).map(time));
      const holder = [...on].sort((a, b) => time(b) - time(a) || b.sequence - a.sequence)[0];
      if (holder) latest.set(JSON.stringify([key, scope]), holder);
    }
  return latest;
}

describe("the gate on readings against an independent reading of the rule", () => {
  it("the consolidator passes, states only the latest reading's positions as current, and an earlier one made current is outdated-reading", () => {
    fc.assert(
      fc.property(readingsArb, ({ steps, rules }) => {
        const events = log(
          ...steps.map((step, index) =>
            fact(
              `r-${index + 1}`,
              step.key,
              { quantity: step.quantity, unit: "s" },
              {
                scope: step.scope,
                polarity: step.negated ? "negated" : "affirmed",
                ...(step.occurredAt === undefined ? {} : { occurredAt: step.occurredAt }),
              },
            ),
          ),
        );
        const policy = { ...DEFAULT_TRUST_POLICY, latest: [...rules] };
        const covered = (key: string, scope: string) =>
          rules.some((rule) =>
            typeof rule === "string"
              ? key.startsWith("stock.")
              : key.endsWith(".lag") && scope.startsWith("db:"),
          );
        const latest = oracleLatest(events, covered);
        const context = contextOf(events, policy);
        const output = consolidate(context);
        expect(gateCandidate(context, output).reasons).toEqual([]);
        const positionOf = (c: { polarity: string; value: unknown }) =>
          `${c.polarity}|${canonicalValue(c.value as never)}`;
        for (const claim of output.claims) {
          const holder = latest.get(JSON.stringify([claim.key, claim.scope]));
          if (!holder) {
            expect(claim.status).not.toBe("earlier");
            continue;
          }
          const holds = (holder.assertions ?? [])
            .filter((a) => a.key === claim.key && a.scope === claim.scope)
            .some((a) => positionOf(a) === positionOf(claim));
          expect(claim.status).toBe(holds ? "settled" : "earlier");
        }
        const earlierIndex = output.claims.findIndex((claim) => claim.status === "earlier");
        if (earlierIndex >= 0) {
          const claims = output.claims.map((claim, index) =>
            index === earlierIndex ? { ...claim, status: "settled" as const } : claim,
          );
          expect(codes(gateCandidate(context, { ...output, claims }))).toContain("outdated-reading");
        }
      }),
      { numRuns: 300 },
    );
  });
});
