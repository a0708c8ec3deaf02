import { describe, expect, it } from "vitest";
import { candidate, codes, gate, log, settled } from "../support/builders.ts";

/**
 * CONTRACT §4b "A value is not repeated in text" (issue 38, decision 2): a number, date or id of a
 * whole event's text that a claim deriving from it holds in its structured value, canonically
 * equal, needs no repeating in that claim's text, as the prompts tell models. A real answer to a
 * held-out log was refused for a decision's date-time, 2026-08-22 22:00, held by its claim's `date`
 * value and left out of its text.
 */

const rollback = "rollback if error rate passes 2%";

describe("a decision's date-time held by its claim's value, not repeated in its text", () => {
  /** A decision asserting its cutover in its own offset, its text writing the local time. */
  const decision = (value: string) =>
    log({
      eventId: "d-1",
      kind: "decision",
      text: `Go/no-go done: the payments cutover is 2026-08-22 22:00; ${rollback}.`,
      occurredAt: "2026-08-15T09:00:00+08:00",
      assertions: [{ key: "payments.cutover_at", value: { date: value }, polarity: "affirmed" }],
    });
  const claim = (value: string) =>
    candidate({
      claims: [settled("payments.cutover_at", { date: value }, ["d-1"], { text: rollback })],
    });

  it("passes when the value is the text's local time with its offset (the held-out case)", () => {
    const events = decision("2026-08-22T22:00:00+08:00");
    expect(gate(events, claim("2026-08-22T22:00:00+08:00")).reasons).toEqual([]);
  });

  it("still asks for a date-time of the text that the value does not hold (another hour)", () => {
    const report = gate(decision("2026-08-22T21:00:00+08:00"), claim("2026-08-22T21:00:00+08:00"));
    expect(report.reasons.map((r) => [r.code, r.eventId])).toEqual([["missing", "d-1"]]);
    expect(report.reasons[0]?.detail).toContain('date "2026-08-22 22:00"');
  });

  it("still asks for it when the text writes its offset (22:00 UTC is not 22:00 at +08:00)", () => {
    const events = log({
      eventId: "d-1",
      kind: "decision",
      text: `The payments cutover is 2026-08-22 22:00 UTC; ${rollback}.`,
      assertions: [
        { key: "payments.cutover_at", value: { date: "2026-08-22T22:00:00+08:00" }, polarity: "affirmed" },
      ],
    });
    expect(codes(gate(events, claim("2026-08-22T22:00:00+08:00")))).toEqual(["missing"]);
  });
});

describe("a free-text decision restated beside the claim whose value holds its date", () => {
  const events = log(
    {
      eventId: "f-1",
      kind: "fact",
      text: "The cutover window opens 2026-08-22 22:00.",
      assertions: [{ key: "payments.cutover_at", value: { date: "2026-08-22T22:00" }, polarity: "affirmed" }],
    },
    {
      eventId: "d-1",
      kind: "decision",
      text: `Decided: cut over payments at 2026-08-22 22:00; ${rollback}.`,
    },
  );
  const cutover = (extra: Record<string, unknown> = {}) =>
    settled("payments.cutover_at", { date: "2026-08-22T22:00" }, ["f-1", "d-1"], extra);

  it("passes when the claim citing both keeps the rest in its text", () => {
    expect(
      gate(events, candidate({ claims: [cutover({ text: `cut over payments; ${rollback}` })] })).reasons,
    ).toEqual([]);
  });

  it("passes when another claim restates the decision's words without the date", () => {
    const claims = [
      cutover(),
      settled("payments.cutover", { text: `cut over payments; ${rollback}` }, ["d-1"]),
    ];
    expect(gate(events, candidate({ claims })).reasons).toEqual([]);
  });

  it("reads that claim's text as the decision's restatement: a dropped condition is refused", () => {
    const report = gate(
      events,
      candidate({ claims: [cutover({ text: "cut over payments; error rate 2%" })] }),
    );
    expect(report.reasons.map((r) => [r.code, r.eventId])).toEqual([["value-changed", "d-1"]]);
    expect(report.reasons[0]?.detail).toContain("condition");
  });

  it("still refuses the date when no claim deriving from the decision holds it", () => {
    const report = gate(
      events,
      candidate({
        claims: [
          settled("payments.cutover_at", { date: "2026-08-22T22:00" }, ["f-1"]),
          settled("payments.cutover", { text: `cut over payments; ${rollback}` }, ["d-1"]),
        ],
      }),
    );
    expect(report.reasons.map((r) => [r.code, r.eventId])).toEqual([["missing", "d-1"]]);
    expect(report.reasons[0]?.detail).toContain('"2026-08-22 22:00"');
  });

  it("a value holds numbers canonically: 2 % in a quantity value keeps the text's 2%", () => {
    const withRate = log(
      {
        eventId: "f-2",
        kind: "fact",
        text: "The rollback threshold is an error rate of 2%.",
        assertions: [
          {
            key: "payments.rollback_error_rate",
            value: { quantity: "2.0", unit: "%" },
            polarity: "affirmed",
          },
        ],
      },
      { eventId: "d-2", kind: "decision", text: "Roll back payments if the error rate passes 2%." },
    );
    const rate = (text: string) =>
      candidate({
        claims: [
          settled("payments.rollback_error_rate", { quantity: "2", unit: "%" }, ["f-2", "d-2"], { text }),
        ],
      });
    expect(gate(withRate, rate("roll back payments if error rate passes")).reasons).toEqual([]);
    expect(codes(gate(withRate, rate("roll back payments when error rate passes")))).toEqual([
      "value-changed",
    ]);
  });
});
