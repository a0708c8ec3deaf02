import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { gateEventLog } from "#domain/gate/index.ts";
import { DEFAULT_TRUST_POLICY } from "#domain/schemas.ts";
import { placedDates } from "#domain/time-relations.ts";
import { parseEventLines } from "#io/event-file.ts";
import { candidate, codes, gate, log, settled } from "../support/builders.ts";

/**
 * CONTRACT §4b "Time relations": a restatement that writes a date its sources place a thing before
 * ("by", "until", 之前) on the other side of it ("after", "since", 之后), or the other way round, is
 * refused; dropping the word, or writing the date where a source writes it bare, is not.
 */
const ALPHA = join(import.meta.dirname, "../../examples/alpha");
const alphaEvents = parseEventLines(readFileSync(join(ALPHA, "events.jsonl"), "utf8"), "alpha", {
  assignSequence: true,
});
const honest = readFileSync(join(ALPHA, "candidate-honest.json"), "utf8");
const alpha = (text: string) => gateEventLog(alphaEvents, DEFAULT_TRUST_POLICY, text);

describe("the side of a date a text places a thing on", () => {
  it("refuses examples/alpha's invoice 'by 2026-12-05' restated 'after 2026-12-05'", () => {
    expect(alpha(honest).verdict).toBe("pass");
    expect(honest).toContain("by 2026-12-05");
    for (const word of ["after", "since", "from"]) {
      const report = alpha(honest.replace("by 2026-12-05", `${word} 2026-12-05`));
      expect(report.verdict, word).toBe("reject");
      expect(report.reasons.map((r) => r.detail).join("\n")).toMatch(/"2026-12-05" placed from it/);
    }
    for (const kept of ["before 2026-12-05", "until 2026-12-05", "on 2026-12-05"])
      expect(alpha(honest.replace("by 2026-12-05", kept)).verdict, kept).toBe("pass");
  });

  const claimOf = (text: string, from: string) => settled(`memory:${from}`, { text }, [from]);
  const reasonsFor = (source: string, restated: string) =>
    codes(
      gate(
        log({ eventId: "e-1", kind: "note", occurredAt: "2026-11-18T09:00:00+08:00", text: source }),
        candidate({ claims: [claimOf(restated, "e-1")] }),
      ),
    );

  it.each([
    ["Vendor X may be used until March 3, 2027.", "Vendor X may be used since 2027-03-03."],
    ["The freeze starts after Dec 2, 2026.", "The freeze starts before 2026-12-02."],
    ["Contract signed since 2026-10-01, renew yearly.", "Contract signed until 2026-10-01, renew yearly."],
    ["OPS-88 须在10月30日之前完成。", "OPS-88 须在10月30日之后完成。"],
    ["从12月1日起冻结发布。", "直到12月1日冻结发布。"],
  ])("refuses %j restated %j", (source, restated) => {
    expect(reasonsFor(source, restated)).toContain("unsupported-claim");
  });

  it.each([
    ["Vendor X may be used until March 3, 2027.", "Vendor X may be used until 2027-03-03."],
    ["Vendor X may be used until March 3, 2027.", "Vendor X: allowed through 2027-03-03."],
    ["Starting 2026-12-01 the freeze applies.", "The freeze applies from 2026-12-01."],
    ["OPS-88 须在10月30日之前完成。", "OPS-88 须在2026-10-30前完成。"],
  ])("passes %j restated %j", (source, restated) => {
    expect(reasonsFor(source, restated)).toEqual([]);
  });

  it("reads the relation beside each date, English before it and Chinese after it", () => {
    expect(
      placedDates(
        "by Dec 5, 2026; after 2026-12-07; 10月30日前; 从11月1日起; 直到12月5日; on 2026-12-09",
      ).map((date) => date.relation),
    ).toEqual(["upTo", "onward", "upTo", "onward", "upTo", null]);
    // 3天后 is no date: only dates are placed.
    expect(placedDates("3天后见")).toEqual([]);
  });
});
