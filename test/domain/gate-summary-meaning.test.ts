import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { gateEventLog } from "#domain/gate/index.ts";
import { DEFAULT_TRUST_POLICY } from "#domain/schemas.ts";
import { parseEventLines } from "#io/event-file.ts";

/**
 * CONTRACT §4b "Summary prose": with no judge configured, summary prose that bends a source is at
 * least flagged. Forged on examples/alpha's honest summary, one edit each; the honest summary and
 * the verdict stay as they were (warnings only).
 */
const ALPHA = join(import.meta.dirname, "../../examples/alpha");
const events = parseEventLines(readFileSync(join(ALPHA, "events.jsonl"), "utf8"), "alpha", {
  assignSequence: true,
});
const honest = readFileSync(join(ALPHA, "candidate-honest.json"), "utf8");
const SUMMARY = JSON.parse(honest).summary as string;
const NEW_CODES = [
  "summary-cue-dropped",
  "summary-conflict-settled",
  "summary-task-done",
  "summary-value-moved",
];
const flags = (summary: string) => {
  const report = gateEventLog(events, DEFAULT_TRUST_POLICY, honest.replace(SUMMARY, summary));
  expect(report.verdict).toBe("pass");
  return (report.warnings ?? [])
    .filter((w) => NEW_CODES.includes(w.code))
    .map((w) => `${w.code}: ${w.detail}`);
};

describe("summary prose flagged without a judge", () => {
  it("flags nothing in the honest summary", () => {
    expect(SUMMARY).toContain("never vendor X");
    expect(flags(SUMMARY)).toEqual([]);
  });

  it.each([
    ["never vendor X", "vendor X", /^summary-cue-dropped: summary "vendor X" names what m-2 negates/],
    [
      "never vendor X",
      "vendor X only",
      /^summary-cue-dropped: summary "vendor X only" names what m-2 negates/,
    ],
    [
      "launch date contested (2026-12-03 vs 2026-12-10)",
      "launch on 2026-12-10",
      /^summary-conflict-settled: .*project:alpha\/launch \[project:alpha\] \(m-5, m-6\)/,
    ],
    ["is still to be sent", "was sent", /^summary-task-done: .*calls m-11 done/],
  ])("flags %j written %j", (from, to, expected) => {
    expect(flags(SUMMARY.replace(from, to))).toEqual([expect.stringMatching(expected)]);
  });

  it("flags two budgets' owners swapped", () => {
    const swapped = SUMMARY.replace("budget 12,500 USD", "budget 9,000 EUR").replace(
      "budget is 9,000 EUR",
      "budget is 12,500 USD",
    );
    expect(flags(swapped)).toEqual([
      expect.stringMatching(/^summary-value-moved: summary "Alpha: budget 9,000 EUR" draws on m-1/),
      expect.stringMatching(/^summary-value-moved: summary "Beta's budget is 12,500 USD\." draws on m-10/),
    ]);
  });
});
