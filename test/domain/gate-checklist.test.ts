import { describe, expect, it } from "vitest";
import { consolidate } from "#domain/consolidator.ts";
import { gateChecklist } from "#domain/gate/index.ts";
import { contextOf, fact, log } from "../support/builders.ts";

describe("the gate's checklist (what review shows)", () => {
  const events = log(
    fact("m-1", "budget", { quantity: "12500", unit: "USD" }, { kind: "constraint" }),
    { eventId: "m-2", kind: "fact", text: "Invoice INV-20931 is due 2026-12-03." },
    { eventId: "m-3", kind: "task", text: "Send the 3 signed copies by 2026-12-10." },
    fact("m-4", "launch", { date: "2026-12-03" }, { kind: "decision" }),
    fact("m-5", "launch", { date: "2026-12-10" }, { kind: "decision" }),
  );
  const context = contextOf(events);

  it("names the part of a passing candidate that keeps every item: free text, open tasks and conflicts included", () => {
    const output = consolidate(context);
    const { reasons, checklist } = gateChecklist(context, output);
    expect(reasons).toEqual([]);
    expect(checklist.map((entry) => [entry.item.kind, entry.keptBy])).toEqual([
      ["assertion", "claims[0]"],
      ["event", "claims[0]"],
      ["text", "claims[1]"],
      ["pending", "pending[0]"],
      ["text", "pending[0]"],
      ["assertion", "claims[2]"],
      ["event", "claims[2]"],
      ["assertion", "claims[3]"],
      ["event", "claims[3]"],
      ["conflict", "unresolvedConflicts[0]"],
    ]);
  });

  it("shows an item the gate found dropped as kept by nothing", () => {
    const output = consolidate(context);
    const dropped = {
      ...output,
      claims: output.claims.filter((claim) => !claim.derivedFrom.includes("m-2")),
    };
    const { reasons, checklist } = gateChecklist(context, dropped);
    expect(reasons.map((r) => r.code)).toContain("missing");
    expect(
      checklist.find((entry) => entry.item.kind === "text" && entry.item.eventId === "m-2")?.keptBy,
    ).toBeNull();
  });
});

describe("an event that holds both polarities of one value (no conflict: one event)", () => {
  const events = log({
    eventId: "e-1",
    kind: "fact",
    text: "statement",
    assertions: [
      { key: "vendor", value: { entity: "vendor:x" }, polarity: "affirmed" },
      { key: "vendor", value: { entity: "vendor:x" }, polarity: "negated" },
    ],
  });

  it("keeps each assertion only by its own claim: flipping one to match the other is missing", () => {
    const context = contextOf(events);
    const honest = consolidate(context);
    expect(gateChecklist(context, honest).reasons).toEqual([]);
    const flipped = {
      ...honest,
      claims: honest.claims.map((claim) => ({ ...claim, polarity: "negated" as const })),
    };
    const { reasons } = gateChecklist(context, flipped);
    expect(reasons.map((r) => [r.code, r.eventId])).toEqual([["missing", "e-1"]]);
  });
});
