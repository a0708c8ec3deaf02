import { describe, expect, it } from "vitest";
import { assessCandidate } from "#domain/gate/index.ts";
import { candidate, contextOf, log, settled } from "../support/builders.ts";

/**
 * CONTRACT §4b: a range's first end has the unit written after its second ("10 to 16 km" is 10 km
 * to 16 km), and is held, and holds, with that unit or as the bare number. A real answer to a draft
 * prompt wrote sam-44's "from 10 km to 16 km" as "10 to 16 km" and was refused `value-changed`
 * ("its unit dropped"); another wrote ana-23's "from 35 to 30 days" as "From 35 days" and was
 * refused `unsupported-claim` (35 days held by no source).
 */
const restating = (source: string, text: string) =>
  assessCandidate(
    contextOf(log({ eventId: "s-1", kind: "fact", text: source })),
    candidate({ claims: [settled("run.plan", { text }, ["s-1"])] }),
  ).report;
const codes = (source: string, text: string) => restating(source, text).reasons.map((r) => r.code);

describe("a range's unit", () => {
  it.each([
    ["Long run growing from 10 km to 16 km.", "long run 10 to 16 km"],
    ["Long run growing from 10 to 16 km.", "long run 10 km to 16 km"],
    ["Long run growing from 10 to 16 km.", "long run 10-16 km"],
    ["Retention goes from 35 to 30 days.", "retention 30 days, from 35 days"],
    ["Retention goes from 35 to 30 days.", "retention 35 to 30 days"],
    ["Nightly jobs take 5 to 10% of the cluster.", "nightly jobs 5% to 10% of cluster"],
  ])("%j restated %j passes", (source, text) => {
    expect(codes(source, text)).toEqual([]);
  });

  it.each([
    ["Long run growing from 10 km to 16 km.", "long run 10 to 16 mi", "value-changed"],
    ["Long run growing from 10 to 16 km.", "long run 10 to 16 m", "value-changed"],
    ["Long run growing from 10 to 16 km.", "long run 12 to 16 km", "unsupported-claim"],
  ])("%j restated %j is refused", (source, text, code) => {
    expect(codes(source, text)).toContain(code);
  });
});
