import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { Claim, ConsolidationOutput, SequencedEvent } from "#domain/schemas.ts";
import { DEFAULT_TRUST_POLICY } from "#domain/schemas.ts";
import { checkEventLog, selectInputs } from "#domain/selector.ts";
import { servedFact } from "#eval/gold-words.ts";
import { parseDataset, parseGold } from "#io/eval-files.ts";

/**
 * The gold of the eight realistic logs (examples/eval/realistic*.jsonl) is written from the events:
 * every fact names valid events as its evidence, and a restatement of those events word for word
 * keeps it, so each word that must survive is one its events hold (by the same reading the
 * evaluation uses). And the reading is not lenient: the same facts with a word changed are lost.
 */
const folder = join(import.meta.dirname, "../../examples/eval");
const dataset = parseDataset(readFileSync(join(folder, "realistic.jsonl"), "utf8"), "realistic.jsonl");
const gold = parseGold(readFileSync(join(folder, "realistic-gold.jsonl"), "utf8"), "realistic-gold.jsonl");

function selection(subject: string) {
  const events = (dataset.get(subject) ?? []).map(
    (event, i): SequencedEvent => ({ ...event, sequence: i + 1 }),
  );
  return selectInputs(checkEventLog(events), events.length, DEFAULT_TRUST_POLICY);
}

/** Every valid event restated word for word: its text, and each assertion as written. */
function verbatim(events: readonly SequencedEvent[], contested: boolean): ConsolidationOutput {
  const claims: Claim[] = events.flatMap((event) => [
    {
      key: `memory:${event.eventId}`,
      scope: "global",
      value: { text: event.text ?? "" },
      polarity: "affirmed" as const,
      status: contested ? ("contested" as const) : ("settled" as const),
      derivedFrom: [event.eventId],
    },
    ...(event.assertions ?? []).map((assertion) => ({
      ...assertion,
      status: contested ? ("contested" as const) : ("settled" as const),
      derivedFrom: [event.eventId],
    })),
  ]);
  return { claims, pending: [], unresolvedConflicts: [], coldRefs: [], summary: "" };
}

describe("the gold facts of the realistic logs", () => {
  it.each([...dataset.keys()])(
    "%s: every fact names valid evidence and its words are its events' words",
    (subject) => {
      const { validInputs, validIds } = selection(subject);
      const facts = gold.filter((fact) => fact.subject === subject);
      expect(facts.length).toBeGreaterThanOrEqual(15);
      for (const fact of facts) {
        expect(fact.words?.length ?? 0, fact.fact).toBeGreaterThan(0);
        for (const id of fact.evidence) expect(validIds.has(id), `${fact.fact}: ${id}`).toBe(true);
        const evidence = validInputs.filter((event) => fact.evidence.includes(event.eventId));
        const served = servedFact(fact, verbatim(evidence, fact.contested));
        expect(served.missing, fact.fact).toEqual([]);
        expect(served.kept, fact.fact).toBe(true);
      }
    },
  );

  it("is not lenient: a changed number, a dropped negation, a cold event or a settled dispute loses the fact", () => {
    const claim = (text: string, more: Partial<Claim> = {}): Claim => ({
      key: "alert.p99",
      scope: "service:payments-api",
      value: { text },
      polarity: "affirmed",
      status: "settled",
      derivedFrom: ["ana-17"],
      ...more,
    });
    const body = (claims: Claim[]): ConsolidationOutput => ({
      claims,
      pending: [],
      unresolvedConflicts: [],
      coldRefs: [],
      summary: "p99 pages at 650 ms for 5 min.",
    });
    const page = { subject: "s", evidence: ["ana-17"], contested: false, words: ["p99", "650 ms", "5"] };
    expect(servedFact(page, body([claim("p99 pages at 650 ms sustained 5 min")])).kept).toBe(true);
    expect(servedFact(page, body([claim("p99 pages at 0.65 s sustained 5 min")])).kept).toBe(true);
    expect(servedFact(page, body([claim("p99 pages at 600 ms sustained 5 min")])).missing).toEqual([
      "650 ms",
    ]);
    // Only the summary says it: the fact is not served hot.
    expect(servedFact(page, body([claim("p99 pages at 650 ms", { derivedFrom: ["ana-6"] })])).lines).toEqual(
      [],
    );

    const rule = {
      subject: "s",
      evidence: ["ana-18"],
      contested: false,
      words: ["#pay-oncall", ["not", "never"]],
    };
    const handoff = (text: string) => body([claim(text, { derivedFrom: ["ana-18"] })]);
    expect(servedFact(rule, handoff("Handoff notes in #pay-oncall, not in DMs")).kept).toBe(true);
    expect(servedFact(rule, handoff("Handoff notes in #pay-oncall and in DMs")).missing).toEqual([
      "not | never",
    ]);
    expect(servedFact(rule, handoff("Handoff notes are noted in #pay-oncall")).kept).toBe(false);

    // A hyphenated word is held written joined, as a key writes it, but not with a part missing.
    const signoff = { subject: "s", evidence: ["rl-22"], contested: false, words: ["sign-off"] };
    const cap = (key: string) =>
      body([claim("x", { key, value: { quantity: "3000", unit: "GPU-hour" }, derivedFrom: ["rl-22"] })]);
    expect(servedFact(signoff, cap("run.gpu_hours.max_without_signoff")).kept).toBe(true);
    expect(servedFact(signoff, cap("run.gpu_hours.max_without_sign")).missing).toEqual(["sign-off"]);

    const dispute = { subject: "s", evidence: ["wei-12"], contested: true, words: ["2026-12-08"] };
    const launch = (status: "settled" | "contested") =>
      body([claim("x", { value: { date: "2026-12-08" }, status, derivedFrom: ["wei-12"] })]);
    expect(servedFact(dispute, launch("contested")).kept).toBe(true);
    expect(servedFact(dispute, launch("settled")).kept).toBe(false);

    // A date-time as written holds its day and its hour and minute, and only those.
    const party = { subject: "s", evidence: ["rl-43"], contested: false, words: ["Dec 16", "18:30"] };
    const at = (text: string) => body([claim(text, { derivedFrom: ["rl-43"] })]);
    expect(servedFact(party, at("2026-12-16 18:30 at her place")).kept).toBe(true);
    expect(servedFact(party, at("2026-12-17 18:30 at her place")).missing).toEqual(["Dec 16"]);
    expect(servedFact(party, at("2026-12-16 19:30 at her place")).missing).toEqual(["18:30"]);
  });
});
