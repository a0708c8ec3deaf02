import { describe, expect, it } from "vitest";
import { DEFAULT_TRUST_POLICY } from "../../shared/domain/schemas.ts";
import { checkEventLog, EventLogError, selectInputs } from "../../shared/domain/selector.ts";
import { fact, log } from "../support/builders.ts";

const validIds = (events: ReturnType<typeof log>, highWater = events.length, policy = DEFAULT_TRUST_POLICY) =>
  selectInputs(events, highWater, policy).validInputs.map((event) => event.eventId);

describe("selector v1 validity", () => {
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

  it("applies minTrust and blocked sources, and an untrusted revocation revokes nothing", () => {
    const events = log(
      { eventId: "a", kind: "fact", text: "x", trust: "tool" },
      { eventId: "b", kind: "fact", text: "y", source: "web:forum" },
      { eventId: "c", kind: "fact", text: "z", source: "agent:x" },
      { eventId: "r", kind: "revocation", revokes: ["c"], trust: "untrusted" },
    );
    expect(validIds(events)).toEqual(["a", "b", "c"]);
    expect(validIds(events, 4, { minTrust: "user", blockedSources: ["web:*"] })).toEqual(["c"]);
    expect(validIds(events, 4, { minTrust: "tool", blockedSources: ["agent:x"] })).toEqual(["a", "b"]);
  });
});

describe("conflicts", () => {
  it("names a (key, scope) with more than one position, members sorted, never a winner", () => {
    const events = log(
      fact("m-9", "launch", { date: "2026-12-10" }, { kind: "decision" }),
      fact("m-4", "launch", { date: "2026-12-03" }, { kind: "decision" }),
      fact("m-5", "launch", { date: "2026-12-03" }, { kind: "decision" }),
      fact("m-6", "launch", { date: "2026-12-03" }, { kind: "decision", scope: "project:beta" }),
    );
    expect(selectInputs(events, 4, DEFAULT_TRUST_POLICY).conflicts).toEqual([
      { key: "launch", scope: "global", members: ["m-4", "m-5", "m-9"] },
    ]);
  });

  it("counts equal values as one position and notes' assertions as members", () => {
    const events = log(
      fact("a", "limit", { quantity: "5", unit: "km" }),
      fact("b", "limit", { quantity: "5000", unit: "m" }),
      fact("c", "limit", { quantity: "5000", unit: "m" }, { kind: "note", polarity: "negated" }),
    );
    expect(selectInputs(events, 2, DEFAULT_TRUST_POLICY).conflicts).toEqual([]);
    expect(selectInputs(events, 3, DEFAULT_TRUST_POLICY).conflicts[0]?.members).toEqual(["a", "b", "c"]);
  });

  it("is resolved only by supersession", () => {
    const events = log(fact("a", "plan", { text: "A" }), fact("b", "plan", { text: "B" }), {
      ...fact("c", "plan", { text: "B" }),
      supersedes: ["a"],
    });
    expect(selectInputs(events, 2, DEFAULT_TRUST_POLICY).conflicts).toHaveLength(1);
    expect(selectInputs(events, 3, DEFAULT_TRUST_POLICY).conflicts).toEqual([]);
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
