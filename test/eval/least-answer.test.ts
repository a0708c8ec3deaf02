import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { buildGateContext, gateCandidateText } from "#domain/gate/index.ts";
import { DEFAULT_TRUST_POLICY } from "#domain/schemas.ts";
import { checkEventLog, selectInputs } from "#domain/selector.ts";
import { leastAcceptedAnswer } from "#eval/least-answer.ts";
import { parseEventLines } from "#io/event-file.ts";

/** The least answer the gate accepts (bench/compression-floor.ts), on a real rule-dense log. */
const LOG = join(import.meta.dirname, "../fixtures/model-answers/research-lab/events.jsonl");

function context() {
  const events = checkEventLog(
    parseEventLines(readFileSync(LOG, "utf8"), "research-lab", { assignSequence: true }),
  );
  return buildGateContext(selectInputs(events, events.length, DEFAULT_TRUST_POLICY), events.length);
}

describe("the least answer the gate accepts", () => {
  it("passes the gate, restates every must-preserve assertion with no text of its own beyond what is checked, and has no summary", () => {
    const gate = context();
    const least = leastAcceptedAnswer(gate);
    if (least === null) throw new Error("no least answer");
    expect(gateCandidateText(gate, JSON.stringify(least.answer)).verdict).toBe("pass");
    const assertions = gate.mustPreserve.filter((item) => item.kind === "assertion");
    expect(least.answer.claims.length).toBeGreaterThanOrEqual(assertions.length);
    expect(least.answer.summary).toBe("");
    // rl-13's decision must keep "distill-7b" and "512" (global batch) in its claims' text: those, bare.
    expect(
      least.answer.claims.filter((claim) => claim.derivedFrom.includes("rl-13")).map((c) => c.text),
    ).toContain("distill-7b; 512");
    expect(least.verbatim).toBeLessThan(5);
  });

  it("is smaller than every real answer recorded for the log", () => {
    const least = leastAcceptedAnswer(context());
    const size = JSON.stringify(least?.answer).length;
    for (const file of ["answer-v3.json", "answer-v4.json", "answer-v5.json"]) {
      const real = readFileSync(join(LOG, "..", file), "utf8");
      expect(size).toBeLessThan(real.length);
    }
  });
});
