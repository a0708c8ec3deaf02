import { describe, expect, it } from "vitest";
import { assessCandidate } from "#domain/gate/index.ts";
import { candidate, contextOf, log, settled } from "../support/builders.ts";

/**
 * CONTRACT §4b "Whole-event text": a whole event's "should" that the texts restating it drop is
 * flagged `modality-dropped` and put to the judge (issue 39: `review.approvals: 2 approval —
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
  it("is flagged and put to the judge, the verdict unchanged", () => {
    const { report, undecided } = assess("before merge");
    expect(report.verdict).toBe("pass");
    expect(report.warnings?.map((w) => w.code)).toContain("modality-dropped");
    expect(undecided).toContainEqual(
      expect.objectContaining({ kind: "claim", text: "before merge", derivedFrom: ["rv-1"] }),
    );
  });

  it.each(["should get them before merge", "PRs to payments-api should get 2 approvals before merge"])(
    "is not flagged when the text keeps it: %j",
    (text) => {
      const { report, undecided } = assess(text);
      expect(report.warnings?.map((w) => w.code) ?? []).not.toContain("modality-dropped");
      expect(undecided).toEqual([]);
    },
  );
});
