import { describe, expect, it } from "vitest";
import { assessCandidate } from "#domain/gate/index.ts";
import { candidate, contextOf, log, settled } from "../support/builders.ts";

/**
 * CONTRACT §4b "Whole-event text": a whole event's "should" that the texts restating it drop is
 * value-changed (issue 39: `review.approvals: 2 approval —
 * "before merge"` for a rule that PRs should get two approvals, read as a hard requirement).
 */
const rule = log({
  eventId: "rv-1",
  kind: "constraint",
  text: "PRs to payments-api should get 2 approvals before merge.",
  assertions: [{ key: "review.approvals", value: { quantity: "2", unit: "approval" }, polarity: "affirmed" }],
});
const assess = (text: string) =>
  assessCandidate(
    contextOf(rule),
    candidate({
      claims: [settled("review.approvals", { quantity: "2", unit: "approval" }, ["rv-1"], { text })],
    }),
  );

describe("a whole event's 'should' dropped by the texts restating it", () => {
  it("is refused", () => {
    expect(assess("before merge").report.reasons.map((r) => `${r.code} ${r.eventId} ${r.detail}`)).toEqual([
      expect.stringMatching(/^value-changed rv-1 claims\[0\] restates rv-1 without its advice \("should"\)/),
    ]);
  });

  it.each(["should get them before merge", "PRs to payments-api should get 2 approvals before merge"])(
    "passes when the text keeps it: %j",
    (text) => {
      expect(assess(text).report.reasons).toEqual([]);
    },
  );
});
