// What a language model costs per build, segmented vs one prompt with everything, at 1k, 10k and
// 100k events in a fixed 8,192-token context: model calls and input tokens for a first build and
// for a rebuild after a 50-event tail. The model is an in-process stand-in that answers honestly
// and counts what it is sent (cl100k_base); the figures are prompt sizes, not timings.
// Run: npx tsx --import ./scripts/text-imports.mjs bench/model-costs.ts [sizes...]

import { renderConsolidation } from "#app/prompt-render.ts";
import { DEFAULT_PROMPT_VERSION, loadPrompt } from "#app/prompts.ts";
import { segmentedGenerator } from "#app/segmented.ts";
import { buildGateContext, gateCandidateText } from "#domain/gate/index.ts";
import { DEFAULT_TRUST_POLICY, MemoryEvent, type SequencedEvent } from "#domain/schemas.ts";
import { checkEventLog, selectInputs } from "#domain/selector.ts";
import { countTokens } from "#domain/tokens.ts";
import { honestSegmentAnswer } from "#harness/model-servers.ts";
import type { LanguageModel, ModelCall, SegmentCache } from "#ports/model.ts";
import { record } from "./results.ts";

const sizes = process.argv
  .slice(2)
  .map(Number)
  .filter((n) => n > 0);
const plan = sizes.length > 0 ? sizes : [1_000, 10_000, 100_000];
const SETTINGS = { contextTokens: 8_192, maxOutputTokens: 2_048 };
const TAIL = 50;

function event(i: number): SequencedEvent {
  const raw =
    i % 5 === 0
      ? {
          eventId: `e-${i}`,
          kind: "fact",
          text: `Project p${i % 40} has a budget of ${i % 90} k USD.`,
          assertions: [
            {
              key: `p${i % 40}/budget-${i}`,
              value: { quantity: String(i % 90), unit: "kUSD" },
              polarity: "affirmed",
            },
          ],
        }
      : i % 31 === 0
        ? {
            eventId: `e-${i}`,
            kind: "task",
            text: `Review ticket T-${i} by 2026-12-${String((i % 28) + 1).padStart(2, "0")}.`,
          }
        : {
            eventId: `e-${i}`,
            kind: i % 7 === 0 ? "constraint" : "fact",
            text:
              i % 7 === 0
                ? `Host h${i} must not run more than ${(i % 9) + 2} jobs at once.`
                : `Host h${i} sits in rack ${i % 40} and has ${(i % 64) + 1} GB of memory.`,
          };
  return { ...MemoryEvent.parse(raw), sequence: i };
}

function contextOf(events: readonly SequencedEvent[]) {
  const selection = selectInputs(checkEventLog(events), events.length, DEFAULT_TRUST_POLICY, "v2");
  return buildGateContext(selection, events.length);
}

/** Answers each prompt honestly (each event restated verbatim) and counts what it is sent. */
function countingModel(): LanguageModel & { calls: number; inputTokens: number } {
  const model = {
    name: "stand-in",
    calls: 0,
    inputTokens: 0,
    async complete(call: ModelCall) {
      model.calls++;
      const input = countTokens(call.system) + countTokens(call.prompt);
      model.inputTokens += input;
      const answer =
        call.kind === "summary"
          ? { summary: "Memory notes are kept as stated." }
          : honestSegmentAnswer(call.prompt);
      const text = JSON.stringify(answer);
      return { text, inputTokens: input, outputTokens: countTokens(text) };
    },
  };
  return model;
}

const rows: string[] = [];
let rebuildShareAt10k: number[] = [];
for (const size of plan) {
  const events = Array.from({ length: size }, (_, i) => event(i + 1));
  const tail = Array.from({ length: TAIL }, (_, i) => event(size + i + 1));
  const first = contextOf(events);
  const again = contextOf([...events, ...tail]);
  const prompt = loadPrompt(DEFAULT_PROMPT_VERSION);

  // One prompt with everything: the whole log every time (it does not fit the context at these sizes).
  const whole = (context: typeof first) => {
    const rendered = renderConsolidation(prompt, context);
    return countTokens(rendered.system) + countTokens(rendered.prompt);
  };
  const oneFirst = whole(first);
  const oneRebuild = whole(again);

  // Segmented, with the segment cache a store keeps between builds.
  const kept = new Map<string, string>();
  const cache: SegmentCache = {
    read: async (key) => kept.get(key),
    write: async (key, answer) => void kept.set(key, answer),
  };
  const model = countingModel();
  const generator = segmentedGenerator(model, SETTINGS);
  const build = async (context: typeof first, highWater: number) => {
    const before = { calls: model.calls, tokens: model.inputTokens };
    const generation = await generator.generate(
      {
        snapshot: { subject: "bench", highWater, inputEpoch: 0, expectedAlias: null },
        context,
        prompt,
        segments: cache,
      },
      new AbortController().signal,
    );
    const verdict = gateCandidateText(context, generation.answer).verdict;
    return { calls: model.calls - before.calls, tokens: model.inputTokens - before.tokens, verdict };
  };
  const segFirst = await build(first, size);
  const segRebuild = await build(again, size + TAIL);
  const share = segRebuild.tokens / segFirst.tokens;
  if (size >= 10_000) rebuildShareAt10k = [...rebuildShareAt10k, share];
  const line = `${size} events: one prompt ${oneFirst} tokens (${(oneFirst / SETTINGS.contextTokens).toFixed(1)}x the context) then ${oneRebuild} again; segmented ${segFirst.calls} calls / ${segFirst.tokens} tokens (${segFirst.verdict}), rebuild ${segRebuild.calls} calls / ${segRebuild.tokens} tokens (${(share * 100).toFixed(2)} %, ${segRebuild.verdict})`;
  console.log(line);
  rows.push(
    `${size}: rebuild ${(share * 100).toFixed(2)} % (${segRebuild.calls} of ${segFirst.calls} calls)`,
  );
}

record({
  bench: "model-costs",
  measures: `input tokens of a rebuild after a ${TAIL}-event tail vs the first build, segmented, ${SETTINGS.contextTokens}-token context (one prompt re-sends the whole log and does not fit)`,
  figure: rows.join("; "),
  goal: "rebuild ≤ 5 % of the first build at 10k and above",
  met: rebuildShareAt10k.length > 0 ? rebuildShareAt10k.every((share) => share <= 0.05) : null,
});
