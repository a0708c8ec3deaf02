// LoCoMo beside full context, offline: `memgate eval --locomo` on the five shared conversations
// (../shared/data/locomo/locomo5.json, or LOCOMO_FILE), the consolidation, the answers and the grades
// replayed from the answers stand-in models wrote (bench/locomo/recorded: consolidate-v8 over recall
// index version 3, CONTRACT §6 "Search"; the answers recorded for consolidate-v6 and v7 answered what
// index version 2 served, and no longer replay). Goals
// (issue: an agent answers from memgate as well as from the whole log): memgate's accuracy at least
// full context's minus 3 points, temporal questions minus 5, at most 10 % of the tokens; and, with
// no model at all (deterministic-v1, every turn cold), an evidence turn served for 85 % of questions.
// Run: npx tsx --import ./scripts/text-imports.mjs bench/locomo.ts
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import type { LocomoReport } from "#eval/locomo.ts";
import { BIN } from "#harness/cli.ts";
import { record } from "./results.ts";

const root = join(import.meta.dirname, "..");
const file = process.env.LOCOMO_FILE ?? join(root, "..", "shared", "data", "locomo", "locomo5.json");
const recorded = join(import.meta.dirname, "locomo", "recorded");
// The recorded answers answer every question of each conversation (LOCOMO_EVERY=4 replays the
// 192-question sample, every 4th: memgate eval --every), each from what recall serves within BUDGET
// tokens (about 9.3 % of a conversation's tokens).
const EVERY = process.env.LOCOMO_EVERY ?? "1";
const BUDGET = "1950";
const PROMPT = process.env.LOCOMO_PROMPT ?? "consolidate-v8";

function evaluate(args: string[]): LocomoReport {
  const result = spawnSync(process.execPath, [BIN, "eval", "--locomo", file, "--json", ...args], {
    encoding: "utf8",
    maxBuffer: 256 * 1024 * 1024,
    env: { ...process.env, MEMGATE_CONTEXT_TOKENS: "200000", MEMGATE_MAX_OUTPUT_TOKENS: "32000" },
  });
  if (result.status !== 0)
    throw new Error(`memgate eval --locomo failed (${result.status}): ${result.stderr}`);
  return JSON.parse(result.stdout) as LocomoReport;
}

const pct = (x: number | null) => (x === null ? "—" : `${(100 * x).toFixed(1)} %`);

if (!existsSync(file)) {
  console.log(`LoCoMo: ${file} is not here (it is kept beside the project, not in it): skipped`);
} else {
  const plain = evaluate([]).byCategory.overall;
  console.log(
    `no model (deterministic-v1): evidence served for ${pct(plain.evidenceServed)} of ${plain.questions} questions, ${plain.memoryTokens.toFixed(0)} tokens a question (${pct(plain.tokenRatio)} of the whole conversation)`,
  );
  record({
    bench: "locomo-evidence",
    measures:
      "LoCoMo (5 conversations, 762 questions): questions whose served text (deterministic-v1, the question as query, 1,500-token text budget) cites an evidence turn",
    figure: `${pct(plain.evidenceServed)}, ${plain.memoryTokens.toFixed(0)} tokens a question (${pct(plain.tokenRatio)} of full context)`,
    goal: "≥ 85 %",
    met: plain.evidenceServed >= 0.85,
  });
  if (!existsSync(recorded) || readdirSync(recorded).length === 0) {
    console.log("no recorded answers in bench/locomo/recorded: accuracy not measured");
  } else {
    const model = `replay:${recorded}`;
    const report = evaluate([
      "--prompt",
      PROMPT,
      "--model",
      model,
      "--answer-model",
      model,
      "--judge-model",
      model,
      "--every",
      EVERY,
      "--budget",
      BUDGET,
    ]);
    for (const [name, f] of Object.entries(report.byCategory))
      console.log(
        `  ${name.padEnd(12)} ${String(f.judged).padStart(4)}  memgate ${pct(f.memoryAccuracy).padStart(7)}  full ${pct(f.fullAccuracy).padStart(7)}  tokens ${f.memoryTokens.toFixed(0)} / ${f.fullTokens.toFixed(0)} (${pct(f.tokenRatio)})  evidence ${pct(f.evidenceServed)}`,
      );
    // Where memory falls behind: the questions the whole conversation got right and memory did not,
    // and how many of them had no evidence turn served (what the search did not reach).
    const asked = report.perQuestion.filter((q) => q.labels.memory !== undefined);
    const lost = asked.filter((q) => q.labels.full === "CORRECT" && q.labels.memory === "WRONG");
    const won = asked.filter((q) => q.labels.memory === "CORRECT" && q.labels.full === "WRONG");
    console.log(
      `  memory lost ${lost.length} questions the whole conversation answered (${lost.filter((q) => !q.evidenceServed).length} with no evidence turn served) and won ${won.length}`,
    );
    const { overall, temporal } = report.byCategory;
    const gap = ((overall.memoryAccuracy ?? 0) - (overall.fullAccuracy ?? 0)) * 100;
    const temporalGap = ((temporal.memoryAccuracy ?? 0) - (temporal.fullAccuracy ?? 0)) * 100;
    record({
      bench: "locomo-accuracy",
      measures: `LoCoMo (5 conversations, ${report.byCategory.overall.judged} of 762 questions${report.every === 1 ? "" : `: every ${report.every}th of each conversation`}; ${PROMPT}), recorded stand-in answers replayed: accuracy answering from what recall serves (budget ${BUDGET}) beside the whole conversation, same answering model and judge`,
      figure: `memgate ${pct(overall.memoryAccuracy)} vs full ${pct(overall.fullAccuracy)} (${gap.toFixed(1)} points); temporal ${pct(temporal.memoryAccuracy)} vs ${pct(temporal.fullAccuracy)} (${temporalGap.toFixed(1)}); tokens ${pct(overall.tokenRatio)} of full context; consolidations first try ${report.consolidations.filter((c) => c.firstTryPass).length}/${report.consolidations.length}`,
      goal: "≥ full − 3 points; temporal ≥ full − 5; ≤ 10 % of the tokens",
      met: gap >= -3 && temporalGap >= -5 && overall.tokenRatio <= 0.1,
    });
  }
}
