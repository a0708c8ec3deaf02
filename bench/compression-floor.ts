// How much of a log the gate's rules alone keep hot: for each log of the compression-real sets,
// the least answer the gate accepts (shared/eval/least-answer.ts: every must-preserve assertion as
// a claim with no text, every text the gate reads holding only the numbers, dates, ids and cue
// words it must keep) served as recall text against the raw log, both as compact recall text
// (cl100k_base), as compression-real measures real answers. What a readable summary can save lies
// above this floor; a goal below it cannot be met by any answer the gate accepts. Where the logs
// have gold facts (examples/eval/realistic-gold.jsonl), "with gold" adds, for each fact the least
// answer does not serve, one line holding only that fact's missing gold words and an evidence id:
// a floor for answers that keep the gold facts (no such line is readable, so a real one is above).
//
//   npx tsx --import ./scripts/text-imports.mjs bench/compression-floor.ts
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { buildGateContext } from "#domain/gate/index.ts";
import { DEFAULT_TRUST_POLICY } from "#domain/schemas.ts";
import { checkEventLog, selectInputs } from "#domain/selector.ts";
import { countTokens } from "#domain/tokens.ts";
import { measureCompression } from "#eval/compression.ts";
import { servedFact } from "#eval/gold-words.ts";
import { leastAcceptedAnswer } from "#eval/least-answer.ts";
import { parseGold } from "#io/eval-files.ts";
import { parseEventLines } from "#io/event-file.ts";
import { record } from "./results.ts";

const fixtures = join(import.meta.dirname, "..", "test", "fixtures");
const SETS = [
  {
    dir: join(fixtures, "model-answers"),
    name: "8 rule-dense logs",
    goal: "≤ 50 % overall, no log above 65 % (issue 38's goal)",
  },
  { dir: join(fixtures, "chat-answers"), name: "4 chat-heavy logs", goal: "≤ 12 % (issue 38's goal)" },
];

const goldFile = join(import.meta.dirname, "..", "examples", "eval", "realistic-gold.jsonl");
const gold = existsSync(goldFile) ? parseGold(readFileSync(goldFile, "utf8"), goldFile) : [];

/** The tokens of one line per gold fact the answer does not serve: its missing words, its first evidence. */
function goldLines(subject: string, answer: Parameters<typeof servedFact>[1]): number {
  let tokens = 0;
  for (const fact of gold.filter((entry) => entry.subject === subject)) {
    const served = servedFact(fact, answer);
    if (served.kept) continue;
    const words = served.missing.map((entry) => entry.split(" | ")[0]).join("; ");
    tokens += countTokens(`fact: ${JSON.stringify(words)} ← ${fact.evidence?.[0] ?? "-"}\n`);
  }
  return tokens;
}

for (const { dir, name, goal } of SETS) {
  const subjects = readdirSync(dir, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && existsSync(join(dir, entry.name, "events.jsonl")))
    .map((entry) => entry.name)
    .sort();
  console.log(`\nthe least answer the gate accepts, ${name} (${dir})`);
  console.log(
    `${"subject".padEnd(18)} ${"raw".padStart(6)} ${"least".padStart(6)} ${"ratio".padStart(5)}  verbatim  with gold`,
  );
  let raw = 0;
  let served = 0;
  let withGold = 0;
  let verbatim = 0;
  const ratios: number[] = [];
  for (const subject of subjects) {
    const events = checkEventLog(
      parseEventLines(readFileSync(join(dir, subject, "events.jsonl"), "utf8"), `${subject}/events.jsonl`, {
        assignSequence: true,
      }),
    );
    const highWater = events.reduce((max, event) => Math.max(max, event.sequence), 0);
    const selection = selectInputs(events, highWater, DEFAULT_TRUST_POLICY);
    const least = leastAcceptedAnswer(buildGateContext(selection, events.length));
    if (least === null) throw new Error(`${subject}: no least answer the gate accepts was found`);
    const m = measureCompression(least.answer, selection.validInputs, {
      artifactId: `summary:${subject}:${highWater}:least`,
      highWater,
    });
    raw += m.rawTokens;
    served += m.servedTokens;
    verbatim += least.verbatim;
    ratios.push(m.servedTokens / m.rawTokens);
    const goldTokens = m.servedTokens + goldLines(subject, least.answer);
    const withGoldColumn = gold.some((fact) => fact.subject === subject)
      ? (goldTokens / m.rawTokens).toFixed(2)
      : "-";
    withGold += goldTokens;
    console.log(
      `${subject.padEnd(18)} ${String(m.rawTokens).padStart(6)} ${String(m.servedTokens).padStart(6)} ${(m.servedTokens / m.rawTokens).toFixed(2).padStart(5)}  ${String(least.verbatim).padStart(8)}  ${withGoldColumn.padStart(9)}`,
    );
  }
  console.log(
    `${"overall".padEnd(18)} ${String(raw).padStart(6)} ${String(served).padStart(6)} ${(served / raw).toFixed(2).padStart(5)}  ${String(verbatim).padStart(8)}  ${(withGold > served ? (withGold / raw).toFixed(3) : "-").padStart(9)}`,
  );
  record({
    bench: `compression-floor ${name.split(" ").slice(1).join(" ")}`,
    measures: `served / raw tokens of the least answer the gate accepts (no word beyond what it checks), ${name}, compact recall text (cl100k_base)`,
    figure: `${((100 * served) / raw).toFixed(0)} % overall (${Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)} per log; ${verbatim} texts restated whole where a bare one was refused)${withGold > served ? `; ${((100 * withGold) / raw).toFixed(1)} % with a line for each gold fact it does not serve` : ""}`,
    goal: `informational: a floor under ${goal}`,
    met: null,
  });
}
