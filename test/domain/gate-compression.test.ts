import { describe, expect, it } from "vitest";
import { extractMentions } from "#domain/mentions.ts";
import { contentWords } from "#domain/text-support.ts";
import { candidate, codes, gate, log, settled } from "../support/builders.ts";

/**
 * The rules the gate gained as consolidation learned to compress (CONTRACT §4b): the condition
 * cue class and the readings of dates, currencies and Chinese amounts. Each with honest
 * restatements that must pass beside the bent ones that must not.
 */
const textClaim = (text: string, derivedFrom: string[]) =>
  settled(`memory:${derivedFrom[0]}`, { text }, derivedFrom);
const restated = (source: string, text: string, kind = "fact") =>
  gate(log({ eventId: "m-1", kind, text: source }), candidate({ claims: [textClaim(text, ["m-1"])] }));

describe("conditions and exceptions: a cue class of their own", () => {
  it.each([
    [
      "Refunds within 30 days unless the item is defective.",
      "Refunds within 30 days, except if the item is defective.",
    ],
    ["Ship on Friday only if QA signs off.", "Ship on Friday provided that QA signs off."],
    [
      "Follow up with Priya by Nov 6 if there's no update.",
      "If there's no update, follow up with Priya by Nov 6.",
    ],
    ["外婆周三可以接，否则找小区的阿姨。", "外婆周三可以接，不然找小区的阿姨。"],
    ["只要预算够就续约。", "如果预算够就续约。"],
  ])("keeps the meaning of %j restated as %j", (source, text) => {
    expect(restated(source, text).reasons).toEqual([]);
  });

  it.each([
    [
      "Refunds within 30 days unless the item is defective.",
      "Refunds within 30 days; the item is defective.",
    ],
    [
      "Return shipping: USD 12 is deducted from the refund unless the item is defective.",
      "Return shipping: USD 12 is deducted from the refund.",
    ],
    ["除非张总批准，不要超过预算。", "张总批准，不要超过预算。"],
  ])("refuses %j restated without its condition as %j (value-changed naming the class)", (source, text) => {
    const report = restated(source, text);
    expect(codes(report)).toContain("value-changed");
    expect(report.reasons.map((r) => r.detail).join(" ")).toMatch(/condition/);
  });

  it("counts longest match first: only if, even if and if and only if are one cue each", () => {
    for (const text of ["only if QA agrees", "even if it's pricier", "if and only if QA agrees", "unless"])
      expect(extractMentions(text).cues.condition, text).toBe(1);
    expect(extractMentions("要不然就取消").cues).toMatchObject({ condition: 1, negation: 0 });
  });
});

describe("readings the gate now makes (dates, currencies, Chinese amounts)", () => {
  const keys = (text: string) => extractMentions(text).mentions.map((m) => m.key);

  it("reads ¥ as its own currency, equal only to ¥, before or after the number", () => {
    expect(keys("¥500")).toEqual(keys("500 ¥"));
    expect(keys("¥500")).not.toEqual(keys("JPY 500"));
    expect(keys("¥500")).not.toEqual(keys("CNY 500"));
    expect(keys("¥500")).not.toEqual(keys("500"));
    expect(codes(restated("The deposit is ¥500.", "The deposit is 500 yen (JPY 500)."))).toContain(
      "value-changed",
    );
    expect(restated("The deposit is ¥500.", "Deposit: ¥500.").reasons).toEqual([]);
  });

  it("reads the currency word after a Chinese amount with the number, never as a content word", () => {
    expect(keys("预算1.25万元")).toEqual(keys("预算12500元"));
    expect(contentWords("预算1.25万元")).toEqual(contentWords("预算"));
    expect(contentWords("3万美元的合同")).toEqual(contentWords("的合同"));
    expect(restated("外包预算是1.25万元。", "外包预算12,500元。").reasons).toEqual([]);
  });

  it("reads year-first and day-first dates at the end of a sentence", () => {
    expect(keys("Due 2026/12/3.")).toEqual(keys("2026-12-03"));
    expect(keys("Signed 25.11.2026.")).toEqual(keys("2026-11-25"));
    expect(restated("Contract signed on 2026-11-25.", "Contract signed 25/11/2026.").reasons).toEqual([]);
  });

  it("holds the day and the time a written date-time holds, so prose may restate it", () => {
    const events = log({
      eventId: "d-1",
      kind: "decision",
      text: "Cutover at 2026-12-03 14:30 UTC.",
      assertions: [{ key: "cutover.at", value: { date: "2026-12-03T14:30:00Z" }, polarity: "affirmed" }],
    });
    const claim = settled("cutover.at", { date: "2026-12-03T14:30:00Z" }, ["d-1"], {
      text: "Cutover 2026-12-03T14:30:00Z.",
    });
    expect(
      gate(events, candidate({ claims: [claim], summary: "Cutover on Dec 3 at 14:30." })).reasons,
    ).toEqual([]);
  });
});
