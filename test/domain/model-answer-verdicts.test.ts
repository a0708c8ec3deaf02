import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { decodeModelAnswer } from "#app/model-output.ts";
import { assessCandidateText, buildGateContext } from "#domain/gate/index.ts";
import { DEFAULT_TRUST_POLICY } from "#domain/schemas.ts";
import { checkEventLog, selectInputs } from "#domain/selector.ts";
import { parseEventLines } from "#io/event-file.ts";

/**
 * Every real answer in test/fixtures/model-answers replayed through the gate, each verdict
 * asserted: the eight logs, each answered by a real model to consolidate-v1 (`answer.json`), to
 * today's rendered consolidate-v2 (`answer-v2-prompt.json`) and to a compressing variant
 * (`answer-compressing-prompt.json`). A new gate rule lands only if this table still holds: no
 * honest answer refused; review-findings.md says which answers changed meaning.
 */
const DIR = join(import.meta.dirname, "../fixtures/model-answers");
const ANSWERS = ["answer.json", "answer-v2-prompt.json", "answer-compressing-prompt.json"] as const;

/** Refusals, as `code eventId`; every answer not listed passes. */
const REFUSED: Record<string, string[]> = {
  // consolidate-v1's conflict wording (compatible pairs listed as conflicts), which selector v2 refuses.
  "family-assistant/answer.json": [
    "conflict-invented -",
    "conflict-invented -",
    "conflict-invented -",
    "conflict-invented -",
    "conflict-invented fam-2",
  ],
  // Facts full of numbers left cold.
  "research-lab/answer.json": ["missing rl-24"],
  "travel-lin/answer.json": ["missing lin-8"],
  // The review's finding: "Never run VACUUM FULL ... during business hours (08:00-20:00 Lisbon)"
  // restated without the window.
  "devops-ana/answer-v2-prompt.json": ["missing ana-35"],
};

/** Warnings the review's findings call for: the gate points the judge at them. */
const WARNED: Array<[string, string, RegExp]> = [
  // "the summary does not mention the snack rule"; shared-facility labels lost.
  ["health-coach-sam/answer-v2-prompt.json", "thin-restatement", /sam-33/],
  // The no-op canary rule lost; only deploy.max_services kept.
  ["devops-ana/answer-v2-prompt.json", "thin-restatement", /ana-50/],
  // "return shipping deducted from the refund" leaves out "unless the item is defective".
  ["support-bot/answer-v2-prompt.json", "summary-cue-dropped", /return shipping.*sb-21.*condition/],
];

/**
 * Chat-heavy logs (test/fixtures/chat-answers, see its README), each answered once by a real model
 * to consolidate-v3: the refusals, as above.
 */
const CHAT_DIR = join(import.meta.dirname, "../fixtures/chat-answers");
const CHAT_REFUSED: Record<string, string[]> = {
  demo: [],
  "mb-gary": [],
  // "Thought about publishing" for "I have thought about it": a word no source holds.
  "mb-leo": ["unsupported-claim leo-2023-04-27-4-u"],
  // A user turn logged as a fact holds a negation ("No problem"), so it may not go cold; the four
  // others left cold hold only "some", "can", "if": since issue 38 they may (CONTRACT §2).
  "mb-emily": ["missing emily-2023-04-29-5-u"],
};

const SUBJECTS = readdirSync(DIR, { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .map((entry) => entry.name)
  .sort();

function assess(subject: string, answer: string, dir = DIR) {
  const events = checkEventLog(
    parseEventLines(readFileSync(join(dir, subject, "events.jsonl"), "utf8"), subject, {
      assignSequence: true,
    }),
  );
  const context = buildGateContext(selectInputs(events, events.length, DEFAULT_TRUST_POLICY), events.length);
  return assessCandidateText(context, decodeModelAnswer(readFileSync(join(dir, subject, answer), "utf8")));
}

describe("every real answer through the gate (the verdict table)", () => {
  const cases = SUBJECTS.flatMap((subject) => ANSWERS.map((answer) => `${subject}/${answer}`));

  it("holds all 24 answers", () => {
    expect(cases).toHaveLength(24);
  });

  it.each(cases)("%s", (path) => {
    const [subject = "", answer = ""] = path.split("/");
    const { report } = assess(subject, answer);
    const refused = REFUSED[path] ?? [];
    expect(report.reasons.map((r) => `${r.code} ${r.eventId ?? "-"}`)).toEqual(refused);
    expect(report.verdict).toBe(refused.length > 0 ? "reject" : "pass");
  });

  it.each(WARNED)("%s: a %s warning for the review's finding (%s)", (path, code, detail) => {
    const [subject = "", answer = ""] = path.split("/");
    const { report, undecided } = assess(subject, answer);
    const warnings = (report.warnings ?? []).filter((w) => w.code === code).map((w) => w.detail);
    expect(warnings).toContainEqual(expect.stringMatching(detail));
    if (code === "summary-cue-dropped") expect(undecided.some((t) => t.kind === "summary")).toBe(true);
  });

  // Answers to a draft of consolidate-v5 that allowed a claim's text only where the checklist asks
  // for it (the bench's answer-v5-draft1 rows): smaller, and every one passes, but 30 of the 199
  // gold facts lost what only the events' text said, so the draft was revised before it landed.
  it.each([
    ...SUBJECTS.map((subject) => [subject, DIR] as const),
    ...Object.keys(CHAT_REFUSED).map((subject) => [subject, CHAT_DIR] as const),
  ])("%s/answer-v5-draft1.json passes", (subject, dir) => {
    const { report } = assess(subject, "answer-v5-draft1.json", dir);
    expect(report.reasons).toEqual([]);
    expect(report.verdict).toBe("pass");
  });

  // Answers to a draft that made consolidate-v7's size a requirement (the bench's answer-v8-draft1
  // rows): 51 % served/raw on the dense logs, but 190 of 199 gold facts; research-lab's first
  // answer dropped rl-24's unit "h" and was refused, its repair passed.
  it.each([
    ...SUBJECTS.map((subject) => [subject, DIR] as const),
    ...Object.keys(CHAT_REFUSED).map((subject) => [subject, CHAT_DIR] as const),
  ])("%s/answer-v8-draft1.json", (subject, dir) => {
    const { report } = assess(subject, "answer-v8-draft1.json", dir);
    const refused = subject === "research-lab" ? ["value-changed rl-24"] : [];
    expect([...new Set(report.reasons.map((r) => `${r.code} ${r.eventId ?? "-"}`))]).toEqual(refused);
    if (subject !== "research-lab") return;
    // The refusal says what changed when only the unit did.
    expect(report.reasons.map((r) => r.detail)).toContain(
      `claims[5] turns rl-24's "10,000" into "10,000" (its unit dropped)`,
    );
    expect(assess(subject, "answer-v8-draft1-repair.json", dir).report.verdict).toBe("pass");
  });

  // Answers to a draft of consolidate-v9 that asked for shorter texts (a size limit met by fewer
  // words, a chat's items in a few words each): 54 % served/raw on the dense logs and 18 % on the
  // chat logs (v8: 55 %, 17 %), so it did not land. health-coach-sam's "10 to 16 km" for sam-44's
  // "from 10 km to 16 km" was refused until a range's first end took its unit (CONTRACT §4b);
  // pm-wei translated wei-12's source label once more, research-lab dropped rl-24's unit "h", and
  // mb-emily's item lists dropped the cue words of the turns they cite.
  it.each([
    ...SUBJECTS.map((subject) => [subject, DIR] as const),
    ...Object.keys(CHAT_REFUSED).map((subject) => [subject, CHAT_DIR] as const),
  ])("%s/answer-v9-draft1.json", (subject, dir) => {
    const refused =
      {
        "pm-wei": ["unsupported-claim wei-12"],
        "research-lab": ["value-changed rl-24"],
        "mb-emily": [
          "value-changed emily-2023-04-27-3-u",
          "value-changed emily-2023-04-28-1-u",
          "value-changed emily-2023-04-28-3-u",
        ],
      }[subject] ?? [];
    const { report } = assess(subject, "answer-v9-draft1.json", dir);
    expect([...new Set(report.reasons.map((r) => `${r.code} ${r.eventId ?? "-"}`))]).toEqual(refused);
  });

  it.each(Object.entries(CHAT_REFUSED))("chat-answers/%s", (subject, refused) => {
    const { report } = assess(subject, "answer-v3.json", CHAT_DIR);
    expect(report.reasons.map((r) => `${r.code} ${r.eventId ?? "-"}`)).toEqual(refused);
    expect(report.verdict).toBe(refused.length > 0 ? "reject" : "pass");
  });
});
