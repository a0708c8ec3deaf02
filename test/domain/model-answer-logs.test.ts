import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { consolidate } from "#domain/consolidator.ts";
import { buildGateContext, gateCandidate } from "#domain/gate/index.ts";
import { DEFAULT_TRUST_POLICY } from "#domain/schemas.ts";
import { checkEventLog, selectInputs } from "#domain/selector.ts";
import { parseEventLines } from "#io/event-file.ts";

/**
 * The eight realistic memory logs (test/fixtures/model-answers, copied from the brief's data):
 * selector v2 finds exactly the planted disputes and the one real conflict, never a compatible
 * pair, and the deterministic consolidator's answer passes the gate on each.
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
