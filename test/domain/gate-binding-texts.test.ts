import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { gateEventLog } from "#domain/gate/index.ts";
import { DEFAULT_TRUST_POLICY } from "#domain/schemas.ts";
import { parseEventLines } from "#io/event-file.ts";

/**
 * CONTRACT §4b "Binding texts": a text restating a constraint or permission adds no negation, bound,
 * condition or modality its sources lack, and no word none of them holds (a permission broadened
 * by one word stays above the 0.8 support threshold). Forged on examples/alpha, one edit each.
 */
const ALPHA = join(import.meta.dirname, "../../examples/alpha");
const events = parseEventLines(readFileSync(join(ALPHA, "events.jsonl"), "utf8"), "alpha", {
  assignSequence: true,
});
const honest = readFileSync(join(ALPHA, "candidate-honest.json"), "utf8");
const gateOf = (text: string) => gateEventLog(events, DEFAULT_TRUST_POLICY, text);
const VENDOR = "Vendor X must not be used for alpha.";

/** The honest candidate with the deploy bot's permission claim (m-8) given a text. */
function withPermissionText(text: string): string {
  const body = JSON.parse(honest);
  for (const claim of body.claims) if (claim.derivedFrom.includes("m-8")) claim.text = text;
  return JSON.stringify(body);
}

describe("texts restating a constraint or permission", () => {
  it("passes the honest restatements: 'must not' for 'never', the permission's own words", () => {
    expect(honest).toContain(VENDOR);
    expect(gateOf(honest).verdict).toBe("pass");
    expect(gateOf(withPermissionText("The deploy bot may read and write repo x.")).verdict).toBe("pass");
  });

  it.each([
    ["Vendor X must not be used except for alpha.", /adds a condition cue/],
    ["Vendor X must not be used for alpha if possible.", /adds a condition cue/],
    ["Vendor X should not be used for alpha.", /adds a weak modality cue/],
    ["Vendor X must not be used for more than alpha.", /adds a lower bound cue/],
  ])("refuses %j for 'Never use vendor X for alpha.'", (bent, detail) => {
    const report = gateOf(honest.replace(VENDOR, bent));
    expect(report.verdict).toBe("reject");
    expect(report.reasons.map((r) => `${r.code} ${r.detail}`).join("\n")).toMatch(detail);
  });

  it("refuses a permission broadened by one word, and one made conditional or mandatory", () => {
    const broadened = gateOf(withPermissionText("The deploy bot may read, write and administer repo x."));
    expect(broadened.reasons.map((r) => `${r.code} ${r.detail}`)).toEqual([
      expect.stringMatching(/^unsupported-claim claims\[\d+\]\.text restates a permission .*: administ/),
    ]);
    for (const bent of [
      "The deploy bot may read and write repo x unless on call.",
      "The deploy bot must read and write repo x.",
      "The deploy bot may not read and write repo x.",
    ])
      expect(gateOf(withPermissionText(bent)).verdict, bent).toBe("reject");
  });
});
