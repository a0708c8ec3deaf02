import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { decodeModelAnswer } from "#app/model-output.ts";
import { consolidate } from "#domain/consolidator.ts";
import { buildGateContext, gateCandidate, gateCandidateText } from "#domain/gate/index.ts";
import { DEFAULT_TRUST_POLICY, type TrustPolicy } from "#domain/schemas.ts";
import { checkEventLog, selectInputs } from "#domain/selector.ts";
import { parseEventLines } from "#io/event-file.ts";

/**
 * The eight realistic memory logs (test/fixtures/model-answers, copied from the brief's data):
 * selector v2 finds exactly the planted disputes and the one real conflict, never a compatible
 * pair, and the deterministic consolidator's answer passes the gate on each. Selector v3 with
 * `backup.bucket_size` declared a reading turns devops-ana's two bucket sizes from a conflict into
 * a current reading and an earlier one; the real answers that served both as a dispute are refused,
 * and every other real answer keeps its verdict.
 */
const DIR = join(import.meta.dirname, "../fixtures/model-answers");
const SUBJECTS = readdirSync(DIR, { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .map((entry) => entry.name)
  .sort();

const EXPECTED_V2_CONFLICTS: Record<string, string[]> = {
  "devops-ana": ["backup.bucket_size @ bucket:pay-backups-prod: ana-22, ana-51"],
  "family-assistant": [],
  "health-coach-sam": [],
  "legal-team": ["contract.castellan_msa.liability_cap @ contract:castellan-msa: lg-10, lg-41, lg-9"],
  "pm-wei": ["project.launch_date @ project:points-mall-2: wei-12, wei-17"],
  "research-lab": [],
  "support-bot": [],
  "travel-lin": [],
};

function loadLog(subject: string) {
  return checkEventLog(
    parseEventLines(readFileSync(join(DIR, subject, "events.jsonl"), "utf8"), subject, {
      assignSequence: true,
    }),
  );
}

describe("the eight shared memory logs", () => {
  it("are all here", () => {
    expect(SUBJECTS).toEqual(Object.keys(EXPECTED_V2_CONFLICTS));
  });

  it.each(SUBJECTS)("%s: selector v2 finds the planted disputes and no compatible pair", (subject) => {
    const events = loadLog(subject);
    const conflicts = selectInputs(events, events.length, DEFAULT_TRUST_POLICY).conflicts;
    expect(conflicts.map((c) => `${c.key} @ ${c.scope}: ${c.members.join(", ")}`)).toEqual(
      EXPECTED_V2_CONFLICTS[subject],
    );
  });

  it.each(SUBJECTS)("%s: the deterministic consolidator's answer passes the gate", (subject) => {
    const events = loadLog(subject);
    const context = buildGateContext(
      selectInputs(events, events.length, DEFAULT_TRUST_POLICY),
      events.length,
    );
    const report = gateCandidate(context, consolidate(context));
    expect(report.reasons).toEqual([]);
    expect(report.verdict).toBe("pass");
  });

  it("a supersession chain keeps only its newest version (health-coach-sam's race date)", () => {
    const events = loadLog("health-coach-sam");
    const v1 = selectInputs(events, events.length, DEFAULT_TRUST_POLICY, "v1");
    const v2 = selectInputs(events, events.length, DEFAULT_TRUST_POLICY, "v2");
    expect(v1.conflicts.map((c) => c.key)).toContain("goal.race_date");
    expect(v2.validIds.has("sam-5")).toBe(false);
    expect(v1.validIds.has("sam-5")).toBe(true);
  });
});

/** devops-ana's policy with the bucket's size declared a reading. */
const READINGS: TrustPolicy = { ...DEFAULT_TRUST_POLICY, latest: ["backup.bucket_size"] };

/** The real answers of rounds 1-3, whose verdicts without rules test/domain/model-answer-verdicts.test.ts holds. */
const ANSWERS = ["answer.json", "answer-v2-prompt.json", "answer-compressing-prompt.json"];

function verdictsOf(subject: string, policy: TrustPolicy) {
  const events = loadLog(subject);
  const context = buildGateContext(selectInputs(events, events.length, policy), events.length);
  return ANSWERS.map((file) => {
    const answer = decodeModelAnswer(readFileSync(join(DIR, subject, file), "utf8"));
    return [...new Set(gateCandidateText(context, answer).reasons.map((r) => r.code))].sort();
  });
}

describe("selector v3 on the eight shared logs", () => {
  it("devops-ana with backup.bucket_size declared: no conflict, 4.1 TB (ana-51) holds, ana-22's 4.6 TB is an earlier reading", () => {
    const events = loadLog("devops-ana");
    const selection = selectInputs(events, events.length, READINGS);
    expect(selection.conflicts).toEqual([]);
    expect(selection.validIds.has("ana-22")).toBe(true);
    expect(
      selection.readings.map((r) => ({
        key: r.key,
        latest: r.latest,
        current: r.current.map((p) => p.value),
        earlier: r.earlier.map((p) => [p.holders, p.value]),
      })),
    ).toEqual([
      {
        key: "backup.bucket_size",
        latest: "ana-51",
        current: [{ quantity: "4.1", unit: "TB" }],
        earlier: [[["ana-22"], { quantity: "4.6", unit: "TB" }]],
      },
    ]);
  });

  it("devops-ana with the rule: the real answers that served both sizes as a dispute are refused as outdated", () => {
    // What each answer is refused for without the rule (if anything), and the dispute as well.
    const withRule = verdictsOf("devops-ana", READINGS);
    verdictsOf("devops-ana", DEFAULT_TRUST_POLICY).forEach((without, i) => {
      expect(without).not.toContain("outdated-reading");
      expect(withRule[i]).toEqual([...new Set([...without, "conflict-invented", "outdated-reading"])].sort());
    });
  });

  it("devops-ana with the rule: the deterministic consolidator serves 4.1 TB as current and 4.6 TB as an earlier reading, and passes", () => {
    const events = loadLog("devops-ana");
    const context = buildGateContext(selectInputs(events, events.length, READINGS), events.length);
    const output = consolidate(context);
    expect(output.unresolvedConflicts).toEqual([]);
    expect(
      output.claims
        .filter((c) => c.key === "backup.bucket_size")
        .map((c) => [c.value, c.status, c.asOf ?? null, c.derivedFrom]),
    ).toEqual([
      [{ quantity: "4.1", unit: "TB" }, "settled", null, ["ana-51"]],
      [{ quantity: "4.6", unit: "TB" }, "earlier", "2026-10-26", ["ana-22"]],
    ]);
    expect(gateCandidate(context, output).reasons).toEqual([]);
  });
});
