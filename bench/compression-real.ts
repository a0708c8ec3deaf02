// How much a real model's consolidation shrinks what an agent reads, on realistic memory logs:
// for each subject, the raw valid events as a raw recall vs the answer served as its summary recall
// (tail empty), both in the compact text rendering (CONTRACT §5 "Recall as text"), cl100k_base;
// per subject and overall, with the gate's verdict on each answer. JSON tokens are shown beside.
//
//   npx tsx --import ./scripts/text-imports.mjs bench/compression-real.ts [DIR] [ANSWER_FILE …]
//
// DIR holds <subject>/events.jsonl and the answer files. By default two: test/fixtures/model-answers
// (the eight shared logs, dense with rules, with the real answers recorded for them; goal ≤ 50 %
// overall, no log above 65 %) and test/fixtures/chat-answers (chat-heavy: the demo log and three
// MemoryBank users; goal ≤ 12 %). Answer files default to answer-v2-prompt.json,
// answer-compressing-prompt.json, answer-v3.json, answer-v4.json, answer-v5-draft1.json,
// answer-v5.json and answer-v6.json (the first answers to consolidate-v3, v4, a draft of v5 that
// allowed a claim's text only where the checklist asks for it, v5 and v6), those of them present. With the gold of examples/eval (realistic-gold.jsonl),
// each answer's key-fact recall too: facts served hot with their words.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { basename, join, resolve } from "node:path";
import { decodeModelAnswer } from "#app/model-output.ts";
import { gateEventLog } from "#domain/gate/index.ts";
import { ConsolidationOutput, DEFAULT_TRUST_POLICY } from "#domain/schemas.ts";
import { checkEventLog, selectInputs } from "#domain/selector.ts";
import { measureCompression } from "#eval/compression.ts";
import { servedFact } from "#eval/gold-words.ts";
import { parseGold } from "#io/eval-files.ts";
import { parseEventLines } from "#io/event-file.ts";
import { record } from "./results.ts";

const root = join(import.meta.dirname, "..");
const [dirArgument, ...answerArguments] = process.argv.slice(2);
const fixtures = join(root, "test", "fixtures");
/** The goal each fixture directory's logs are held to (issue: dense logs, chat-heavy logs). */
const GOALS: Record<string, { overallGoal: number; worstGoal: number; goal: string }> = {
  "model-answers": { overallGoal: 0.5, worstGoal: 0.65, goal: "≤ 50 % overall, no log above 65 %" },
  "chat-answers": { overallGoal: 0.12, worstGoal: 1, goal: "≤ 12 % on chat-heavy logs" },
};
/** Each directory measured, with its goal: a directory given is held to its namesake's (dense otherwise). */
const DIRS: Array<{ dir: string; overallGoal: number; worstGoal: number; goal: string }> = (
  dirArgument ? [resolve(dirArgument)] : Object.keys(GOALS).map((name) => join(fixtures, name))
).map((dir) => ({ dir, ...(GOALS[basename(dir)] ?? (GOALS["model-answers"] as (typeof GOALS)[string])) }));

const goldFile = join(root, "examples", "eval", "realistic-gold.jsonl");
const gold = existsSync(goldFile) ? parseGold(readFileSync(goldFile, "utf8"), goldFile) : [];

const percent = (part: number, whole: number) => `${((100 * part) / whole).toFixed(0)} %`;
const ratio = (part: number, whole: number) => (part / whole).toFixed(2);

for (const { dir, overallGoal, worstGoal, goal } of DIRS) {
  if (!existsSync(dir)) {
    console.log(`compression-real: ${dir} is not here; nothing measured`);
    continue;
  }
  measureDir(dir, overallGoal, worstGoal, goal);
}

function measureDir(dir: string, overallGoal: number, worstGoal: number, goal: string): void {
  const subjects = readdirSync(dir, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && existsSync(join(dir, entry.name, "events.jsonl")))
    .map((entry) => entry.name)
    .sort();
  const answerFiles =
    answerArguments.length > 0
      ? answerArguments
      : [
          "answer-v2-prompt.json",
          "answer-compressing-prompt.json",
          "answer-v3.json",
          "answer-v4.json",
          "answer-v5-draft1.json",
          "answer-v5.json",
          "answer-v6.json",
          "answer-v7.json",
          "answer-v8-draft1.json",
        ].filter((file) => subjects.some((subject) => existsSync(join(dir, subject, file))));
  for (const answerFile of answerFiles) {
    console.log(`\n${answerFile} (${dir})`);
    console.log(
      `${"subject".padEnd(18)} ${"raw".padStart(6)} ${"served".padStart(6)} ${"ratio".padStart(5)}  ${"cold".padStart(4)}  ${"json raw".padStart(8)} ${"json served".padStart(11)}  ${"gold".padStart(7)}  gate`,
    );
    let raw = 0;
    let served = 0;
    let rawJson = 0;
    let servedJson = 0;
    let passed = 0;
    let measured = 0;
    let facts = 0;
    let factsKept = 0;
    const missed: string[] = [];
    const ratios: number[] = [];
    for (const subject of subjects) {
      const answerPath = join(dir, subject, answerFile);
      if (!existsSync(answerPath)) continue;
      const events = parseEventLines(
        readFileSync(join(dir, subject, "events.jsonl"), "utf8"),
        `${subject}/events.jsonl`,
        { assignSequence: true },
      );
      const highWater = events.reduce((max, event) => Math.max(max, event.sequence), 0);
      const selection = selectInputs(checkEventLog(events), highWater, DEFAULT_TRUST_POLICY);
      const candidate = decodeModelAnswer(readFileSync(answerPath, "utf8"));
      const report = gateEventLog(events, DEFAULT_TRUST_POLICY, candidate);
      const verdict =
        report.verdict === "pass"
          ? "pass"
          : `REJECT ${[...new Set(report.reasons.map((reason) => reason.code))].join(", ")}`;
      if (report.verdict === "pass") passed++;
      const body = ConsolidationOutput.safeParse(JSON.parse(candidate));
      if (!body.success) {
        console.log(`${subject.padEnd(18)} the answer does not parse as a ConsolidationOutput; ${verdict}`);
        continue;
      }
      const m = measureCompression(body.data, selection.validInputs, {
        artifactId: `summary:${subject}:${highWater}:answer`,
        highWater,
      });
      measured++;
      raw += m.rawTokens;
      served += m.servedTokens;
      rawJson += m.rawJsonTokens;
      servedJson += m.servedJsonTokens;
      ratios.push(m.servedTokens / m.rawTokens);
      const subjectGold = gold.filter((fact) => fact.subject === subject);
      const kept = subjectGold.filter((fact) => {
        const served = servedFact(fact, body.data);
        if (!served.kept)
          missed.push(
            `  ${subject}: ${fact.fact} (${served.lines.length === 0 ? `cold: ${fact.evidence.join(", ")}` : `lost: ${served.missing.join(", ") || "not contested"}`})`,
          );
        return served.kept;
      }).length;
      facts += subjectGold.length;
      factsKept += kept;
      console.log(
        `${subject.padEnd(18)} ${String(m.rawTokens).padStart(6)} ${String(m.servedTokens).padStart(6)} ${ratio(m.servedTokens, m.rawTokens).padStart(5)}  ${String(m.coldInputs).padStart(4)}  ${String(m.rawJsonTokens).padStart(8)} ${String(m.servedJsonTokens).padStart(11)}  ${`${kept}/${subjectGold.length}`.padStart(7)}  ${verdict}`,
      );
    }
    if (measured === 0) continue;
    const worst = Math.max(...ratios);
    console.log(
      `${"overall".padEnd(18)} ${String(raw).padStart(6)} ${String(served).padStart(6)} ${ratio(served, raw).padStart(5)}        ${String(rawJson).padStart(8)} ${String(servedJson).padStart(11)}  ${`${factsKept}/${facts}`.padStart(7)}  ${passed}/${measured} pass`,
    );
    if (missed.length > 0)
      console.log(`gold facts not served hot with their words (${missed.length}):\n${missed.join("\n")}`);
    const overall = served / raw;
    const set = basename(dir);
    record({
      bench: `compression-real ${set === "model-answers" ? "" : `${set} `}${answerFile.replace(/\.json$/, "")}`,
      measures: `served / raw tokens of ${measured} ${set === "chat-answers" ? "chat-heavy" : "realistic"} logs, both as compact recall text (cl100k_base); real answers in ${answerFile}`,
      figure: `${percent(served, raw)} overall (${Math.min(...ratios).toFixed(2)}–${worst.toFixed(2)} per log); gate pass ${passed}/${measured}; JSON ${percent(servedJson, rawJson)}${facts > 0 ? `; key-fact recall ${percent(factsKept, facts)} (${factsKept}/${facts} gold facts)` : ""}`,
      goal,
      met: overall <= overallGoal && worst <= worstGoal,
    });
  }
}
