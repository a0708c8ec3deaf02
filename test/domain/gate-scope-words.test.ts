import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { gateEventLog } from "#domain/gate/index.ts";
import { DEFAULT_TRUST_POLICY } from "#domain/schemas.ts";
import { scopePhrases } from "#domain/scope-phrases.ts";
import { parseEventLines } from "#io/event-file.ts";
import { candidate, codes, gate, log, settled } from "../support/builders.ts";

/**
 * CONTRACT §4b "Scope words": a claim restating a constraint or permission as a rule keeps each of
 * its scope phrases ("for alpha", "in DMs", "outside business hours") in its own words: its text,
 * its value, or its key beyond what its scope says. Forged on examples/alpha and on a constraint of its own.
 */
const ALPHA = join(import.meta.dirname, "../../examples/alpha");
const events = parseEventLines(readFileSync(join(ALPHA, "events.jsonl"), "utf8"), "alpha", {
  assignSequence: true,
});
const honest = readFileSync(join(ALPHA, "candidate-honest.json"), "utf8");

/** The honest candidate with the vendor claim (m-2) changed. */
function vendorClaim(change: Record<string, unknown>): string {
  const body = JSON.parse(honest);
  for (const claim of body.claims) if (claim.derivedFrom.includes("m-2")) Object.assign(claim, change);
  return JSON.stringify(body);
}
const reasonsOf = (text: string) =>
  gateEventLog(events, DEFAULT_TRUST_POLICY, text).reasons.map((r) => `${r.code} ${r.detail}`);

describe("scope phrases of a rule's text", () => {
  it.each([
    ["Never use vendor X for alpha.", ["for alpha"]],
    ["Handoff notes go in #pay-oncall, not in DMs.", ["in pay-oncall", "in dms"]],
    ["Don't page Marta for outages; keep her in the loop.", ["for outages"]],
    [
      "No deploys outside business hours or during the freeze.",
      ["outside business hours", "during the freeze"],
    ],
    ["From now on treat shared-facility labels as unsafe.", []],
    ["For example, never pay in full in advance for vendors.", ["for vendors"]],
    ["Never refund more than USD 250 for a single order without a human.", ["for a single order"]],
    ["Budget for 2026 is fixed.", []],
    // Pointing back: what "those days" are is said elsewhere (here, in the assertions' scope).
    ["Kids Club staff may walk Mia and Leo to the centre on those days.", []],
    ["Never use vendor X for that project, or on weekends.", ["on weekends"]],
    ["定价底线备忘录仅限法务频道，不要外传。", ["仅限法务频道"]],
  ])("%j has %j", (text, raws) => {
    expect(scopePhrases(text).map((phrase) => phrase.raw)).toEqual(raws);
  });
});

describe("a rule restated without its scope", () => {
  it("passes the honest vendor claim", () => {
    expect(reasonsOf(honest)).toEqual([]);
  });

  it("refuses 'Vendor X must not be used', though its key and scope name alpha: a rule reads as its sentence says", () => {
    expect(reasonsOf(vendorClaim({ text: "Vendor X must not be used." }))).toEqual([
      expect.stringMatching(
        /^value-changed claims\[\d+\] restates m-2's constraint without its scope "for alpha"/,
      ),
    ]);
  });

  const rule = log({
    eventId: "c-1",
    kind: "constraint",
    text: "Never share the pricing memo outside the legal channel.",
  });
  const restated = (text: string, key = "memo.sharing", scope = "global") =>
    gate(rule, candidate({ claims: [settled(key, { text }, ["c-1"], { scope })] }));

  it.each([
    "Never share the pricing memo outside the legal channel.",
    "Pricing memo: never shared outside legal.",
  ])("passes %j", (text) => {
    expect(restated(text).reasons).toEqual([]);
  });

  it("passes a scope its key names beyond its scope, and not one its scope alone names", () => {
    expect(restated("Never share the pricing memo.", "memo.sharing.outside_legal").reasons).toEqual([]);
    expect(codes(restated("Never share the pricing memo.", "memo.sharing", "channel:legal"))).toContain(
      "value-changed",
    );
  });

  it("refuses the rule with its scope gone", () => {
    expect(codes(restated("Never share the pricing memo."))).toContain("value-changed");
  });

  it("leaves a note that does not restate the rule alone", () => {
    expect(codes(restated("Pricing memo is sensitive; legal channel."))).not.toContain("value-changed");
  });
});

describe("a Chinese rule restated without its scope", () => {
  const rule = log({ eventId: "c-2", kind: "constraint", text: "定价底线备忘录仅限法务频道，不要外传。" });
  const restated = (text: string) =>
    gate(rule, candidate({ claims: [settled("memo.sharing", { text }, ["c-2"])] }));

  it("passes the scope kept, in the sources' characters", () => {
    expect(restated("定价底线备忘录仅限法务频道，不要外传").reasons).toEqual([]);
    expect(restated("备忘录不要外传，仅限法务").reasons).toEqual([]);
  });

  it("refuses it dropped", () => {
    expect(codes(restated("定价底线备忘录不要外传"))).toContain("value-changed");
  });
});
