// How much of a log the gate's rules alone keep hot: for each log of the compression-real sets,
// the least answer the gate accepts (shared/eval/least-answer.ts: every must-preserve assertion as
// a claim with no text, every text the gate reads holding only the numbers, dates, ids and cue
// words it must keep) served as recall text against the raw log, both as compact recall text
// (cl100k_base), as compression-real measures real answers. What a readable summary can save lies
// above this floor; a goal below it cannot be met by any answer the gate accepts.
//
//   npx tsx --import ./scripts/text-imports.mjs bench/compression-floor.ts
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { buildGateContext } from "#domain/gate/index.ts";
import { DEFAULT_TRUST_POLICY } from "#domain/schemas.ts";
import { checkEventLog, selectInputs } from "#domain/selector.ts";
import { measureCompression } from "#eval/compression.ts";
import { leastAcceptedAnswer } from "#eval/least-answer.ts";
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

for (const { dir, name, goal } of SETS) {
  const subjects = readdirSync(dir, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && existsSync(join(dir, entry.name, "events.jsonl")))
    .map((entry) => entry.name)
    .sort();
  console.log(`\nthe least answer the gate accepts, ${name} (${dir})`);
  console.log(
    `${"subject".padEnd(18)} ${"raw".padStart(6)} ${"least".padStart(6)} ${"ratio".padStart(5)}  verbatim`,
  );
  let raw = 0;
  let served = 0;
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
    console.log(
      `${subject.padEnd(18)} ${String(m.rawTokens).padStart(6)} ${String(m.servedTokens).padStart(6)} ${(m.servedTokens / m.rawTokens).toFixed(2).padStart(5)}  ${least.verbatim}`,
    );
  }
  console.log(
    `${"overall".padEnd(18)} ${String(raw).padStart(6)} ${String(served).padStart(6)} ${(served / raw).toFixed(2).padStart(5)}  ${verbatim}`,
  );
  record({
    bench: `compression-floor ${name.split(" ").slice(1).join(" ")}`,
    measures: `served / raw tokens of the least answer the gate accepts (no word beyond what it checks), ${name}, compact recall text (cl100k_base)`,
    figure: `${((100 * served) / raw).toFixed(0)} % overall (${Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)} per log; ${verbatim} texts restated whole where a bare one was refused)`,
    goal: `informational: a floor under ${goal}`,
    met: null,
  });
}
