// Writes, for each LoCoMo conversation, a request an independent reviewer (a stand-in model) reads
// whole: the instructions, the conversation turn by turn under each session's date, and the summary
// memgate serves for it (the recorded answers in bench/locomo/recorded to LOCOMO_PROMPT, by default
// consolidate-v8, replayed). The reviewer writes which claims the conversation does not support;
// bench/locomo/review holds the instructions and the reviews (<prompt>/<conversation>.json).
//
//   MEMGATE_CONTEXT_TOKENS=200000 MEMGATE_MAX_OUTPUT_TOKENS=32000 \
//     npx tsx --import ./scripts/text-imports.mjs \
//     scripts/locomo-review.ts LOCOMO.json OUT_DIR [INSTRUCTIONS.md]
//
// OUT_DIR/<conversation>.md is a request; its answer goes to OUT_DIR/answers/<conversation>.json.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { recall } from "#app/recall.ts";
import { renderServedRecallText } from "#app/recall-text.ts";
import { evaluateLocomo, LOCOMO_SETTINGS } from "#eval/locomo.ts";
import { parseLocomo } from "#io/locomo-file.ts";
import { openEmbeddedRuntime } from "#runtime/embedded.ts";

const [
  file,
  out,
  instructionsFile = join(import.meta.dirname, "..", "bench", "locomo", "review", "instructions.md"),
] = process.argv.slice(2);
if (file === undefined || out === undefined) {
  console.error("usage: locomo-review.ts LOCOMO.json OUT_DIR [INSTRUCTIONS.md]");
  process.exit(2);
}
const text = readFileSync(file, "utf8");
const conversations = parseLocomo(text, file);
const instructions = readFileSync(instructionsFile, "utf8");
const home = mkdtempSync(join(tmpdir(), "memgate-review-"));
const recorded = join(import.meta.dirname, "..", "bench", "locomo", "recorded");
const runtime = await openEmbeddedRuntime({
  store: "embedded",
  home,
  model: `replay:${recorded}`,
  prompt: process.env.LOCOMO_PROMPT ?? "consolidate-v8",
  progress: () => {},
});
try {
  // Consolidates and publishes each conversation as `memgate eval --locomo` does (no question is asked).
  await evaluateLocomo(runtime.deps, conversations, {
    budget: 1800,
    settings: LOCOMO_SETTINGS,
    concurrency: 5,
  });
  mkdirSync(join(out, "answers"), { recursive: true });
  for (const { id, sessions } of conversations) {
    // Each turn with its id (the claims cite them), under its session's date.
    const turns = sessions.flatMap((session) => [
      `\n### Session ${session.number} (${session.dateTime})\n`,
      ...session.turns.map((turn) => `${turn.eventId} ${turn.speaker}: ${turn.text}`),
    ]);
    // The summary without a query: its claims and pending items (no cold event is shown).
    const memory = renderServedRecallText(await recall(runtime.deps, id, { format: "text" }))
      .text.split("\n")
      .filter(
        (line) => !line.startsWith("note ") && !line.startsWith("# cold") && !line.startsWith("# served"),
      )
      .join("\n");
    const request = instructions.replaceAll("{{out}}", join(out, "answers", `${id}.json`));
    writeFileSync(
      join(out, `${id}.md`),
      `${request}\n\n## The conversation\n${turns.join("\n")}\n\n## The memory (what memgate serves)\n\n${memory}\n`,
    );
    console.log(
      `${join(out, `${id}.md`)}: ${memory.split("\n").filter((line) => line.includes(" ← ")).length} claims`,
    );
  }
} finally {
  runtime.close();
  rmSync(home, { recursive: true, force: true });
}
