// The gate's mutation score on a fixed-seed sample (the large sample runs in bench/): every kind
// of meaning change is refused on every subject it applies to, and no honest output is refused.
import { describe, expect, it } from "vitest";
import { MUTATIONS, mutationScore } from "#eval/mutations.ts";

describe("the gate's mutation score (fixed seed, 40 synthetic subjects)", () => {
  const score = mutationScore(40, 20261130);

  it("refuses no honest output", () => {
    expect(score.falseRejections).toBe(0);
  });

  it.each(Object.keys(MUTATIONS))("catches every %s change", (kind) => {
    const tally = score.byKind[kind];
    expect(tally?.applied).toBeGreaterThan(0);
    expect(score.escaped.filter((e) => e.kind === kind)).toEqual([]);
    expect(tally?.caught).toBe(tally?.applied);
  });
});
