// The gate v2 examples through the real `memgate gate`: the honest candidate passes, every bent
// one is refused with the code examples/gate-v2/expected.json names.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { memgate } from "#harness/cli.ts";

const DIR = join(import.meta.dirname, "../../examples/gate-v2");
const expected = JSON.parse(readFileSync(join(DIR, "expected.json"), "utf8")) as {
  honest: string;
  bent: Array<{ file: string; code: string; change: string; policy?: string }>;
};
const gate = (candidate: string, policy?: string) =>
  memgate([
    "gate",
    "--events",
    join(DIR, "events.jsonl"),
    "--candidate",
    join(DIR, candidate),
    ...(policy ? ["--policy", join(DIR, policy)] : []),
    "--json",
  ]);

describe("examples/gate-v2 through memgate gate", () => {
  it("passes the honest restatement of every rule", async () => {
    const result = await gate(expected.honest);
    expect(JSON.parse(result.stdout)).toMatchObject({ verdict: "pass", reasons: [] });
    expect(result.code).toBe(0);
  });

  it.each(expected.bent.map((c) => [c.change, c] as const))("refuses %s", async (_change, bent) => {
    const result = await gate(bent.file, bent.policy);
    expect(result.code).toBe(1);
    expect(JSON.parse(result.stdout).reasons.map((r: { code: string }) => r.code)).toContain(bent.code);
  });

  it("only warns about an invented summary sentence without summarySupport", async () => {
    const result = await gate("bent-summary-sentence.json");
    const report = JSON.parse(result.stdout);
    expect(result.code).toBe(0);
    // And "Releases need at least 3 reviewers" drops r-1's "Every ... must": for the judge too.
    expect(report.warnings.map((w: { code: string }) => w.code)).toEqual([
      "low-support",
      "summary-cue-dropped",
    ]);
  });
});
