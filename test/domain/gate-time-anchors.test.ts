import { describe, expect, it } from "vitest";
import { assessCandidate } from "#domain/gate/index.ts";
import { candidate, contextOf, log, settled } from "../support/builders.ts";

/**
 * CONTRACT §4b "Time anchors": a text that names anew the moment its source's time word pointed
 * back to ("before then" restated "before decision", found by an independent judge in a real
 * answer to a held-out log) is flagged for a reader and sent to the judge; the verdict is unchanged,
 * since honest restatements name the moment too.
 */
const events = log(
  {
    eventId: "d-1",
    kind: "decision",
    text: "Security review of both signing schemes on 2026-12-01; don't ship either scheme before then.",
  },
  { eventId: "d-2", kind: "note", text: "The scheme decision is expected in January." },
);
const assess = (text: string) =>
  assessCandidate(
    contextOf(events),
    candidate({ claims: [settled("release.signing", { text }, ["d-1", "d-2"])] }),
  );
const renamed = (text: string) =>
  (assess(text).report.warnings ?? []).filter((w) => w.code === "time-anchor-renamed").map((w) => w.detail);

describe("a time word's anchor named anew", () => {
  it("flags 'before decision' for 'before then' and sends the text to the judge, the verdict unchanged", () => {
    const { report, undecided } = assess(
      "security review 2026-12-01; don't ship either scheme before decision",
    );
    expect(report.verdict).toBe("pass");
    expect(renamed("security review 2026-12-01; don't ship either scheme before decision")).toEqual([
      expect.stringMatching(/claims\[0\] .* writes "before decision" where d-1 writes "before then"/),
    ]);
    expect(undecided.map((t) => t.where)).toEqual(["claims[0]"]);
  });

  it.each([
    "security review 2026-12-01; don't ship either scheme before then",
    "don't ship either scheme before 2026-12-01 (security review)",
    "security review 2026-12-01; no scheme ships until then",
  ])("passes %j without a flag: the anchor kept, or the date it points to", (text) => {
    expect(renamed(text)).toEqual([]);
    expect(assess(text).undecided).toEqual([]);
  });

  it("does not flag an anchor the source names itself beside the word pointing back", () => {
    const own = log({
      eventId: "r-1",
      kind: "constraint",
      text: "Full refund within 30 days; after that, store credit only, up to 90 days after delivery.",
    });
    const report = assessCandidate(
      contextOf(own),
      candidate({
        claims: [
          settled("refund.late", { text: "store credit only, up to 90 days after delivery" }, ["r-1"]),
        ],
      }),
    ).report;
    expect((report.warnings ?? []).filter((w) => w.code === "time-anchor-renamed")).toEqual([]);
  });
});
