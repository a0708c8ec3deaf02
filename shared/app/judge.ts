import {
  type Assessment,
  type GateContext,
  type GateReason,
  type GateWarning,
  reason,
  type UndecidedText,
} from "#domain/gate/index.ts";
import type { SequencedEvent } from "#domain/schemas.ts";
import { contentWords } from "#domain/text-support.ts";
import { countTokens } from "#domain/tokens.ts";
import type { JudgeItem, JudgePort, Verdict } from "#ports/judge.ts";
import type { LanguageModel, ModelCallRecord } from "#ports/model.ts";
import { JudgeAnswer, modelSchema, parseModelAnswer } from "./model-output.ts";
import { ask, type ModelSettings } from "./one-prompt.ts";
import { eventLine, fillTemplate, renderedPrompt } from "./prompt-render.ts";
import { loadPrompt } from "./prompts.ts";

export const JUDGE_TEMPLATE = "judge-v1";
const JUDGE_SCHEMA = { name: "JudgeAnswer", json: modelSchema(JudgeAnswer) };

/** A language model as the judge: items batched so each prompt fits its context. */
export function modelJudge(model: LanguageModel, settings: ModelSettings): JudgePort {
  const template = loadPrompt(JUDGE_TEMPLATE);
  const room = settings.contextTokens - settings.maxOutputTokens - countTokens(template.text) - 200;
  return {
    name: model.name,
    async judge(items, signal) {
      const verdicts = new Map<string, { verdict: Verdict; reason: string }>();
      const calls: ModelCallRecord[] = [];
      for (const batch of batches(items.map(itemBlock), room)) {
        const rendered = renderedPrompt(
          template,
          JUDGE_SCHEMA.name,
          fillTemplate(template, { texts: batch.map((b) => b.block).join("\n\n") }),
        );
        const { answer, record } = await ask(model, settings, "judge", rendered, JUDGE_SCHEMA, 1, signal);
        calls.push(record);
        const parsed = parseModelAnswer(JudgeAnswer, answer.text);
        for (const { id } of batch) {
          const found = parsed.ok ? parsed.value.verdicts.find((v) => v.id === id) : undefined;
          verdicts.set(
            id,
            found
              ? { verdict: found.verdict, reason: found.reason }
              : {
                  verdict: "unclear",
                  reason: parsed.ok
                    ? "the judge gave no verdict for it"
                    : `the judge's answer was unreadable (${parsed.problem})`,
                },
          );
        }
      }
      return { verdicts, calls };
    },
  };
}

function itemBlock(item: JudgeItem): { id: string; block: string; tokens: number } {
  const block = [`### ${item.id}`, item.text, "cited events:", ...item.events.map((e) => eventLine(e))].join(
    "\n",
  );
  return { id: item.id, block, tokens: countTokens(block) };
}

function batches<T extends { tokens: number }>(blocks: readonly T[], room: number): T[][] {
  const out: T[][] = [];
  let current: T[] = [];
  let used = 0;
  for (const block of blocks) {
    if (current.length > 0 && used + block.tokens > room) {
      out.push(current);
      current = [];
      used = 0;
    }
    current.push(block);
    used += block.tokens;
  }
  if (current.length > 0) out.push(current);
  return out;
}

/** The events a summary sentence is weighed against: those sharing its content words, most shared first. */
const SUMMARY_EVENTS = 20;

function eventsFor(context: GateContext, text: UndecidedText): SequencedEvent[] {
  if (text.kind === "claim")
    return text.derivedFrom.flatMap((id) => {
      const event = context.eventsById.get(id);
      return event ? [event] : [];
    });
  const words = new Set(contentWords(text.text));
  return context.selection.validInputs
    .map((event) => ({ event, shared: contentWords(event.text ?? "").filter((w) => words.has(w)).length }))
    .filter(({ shared }) => shared > 0)
    .sort((a, b) => b.shared - a.shared || a.event.sequence - b.event.sequence)
    .slice(0, SUMMARY_EVENTS)
    .map(({ event }) => event);
}

/**
 * Puts the texts the gate could not decide to the judge; an `unsupported` verdict becomes a gate
 * reason (`unsupported-claim` for a claim or pending text, `summary-unsupported` for a summary
 * sentence), the detail saying that the judge decided and why.
 */
export async function judgeUndecided(
  context: GateContext,
  judged: Assessment,
  judge: JudgePort,
  signal: AbortSignal,
): Promise<{ reasons: GateReason[]; warnings: GateWarning[]; calls: ModelCallRecord[] }> {
  if (judged.undecided.length === 0) return { reasons: [], warnings: [], calls: [] };
  const items = judged.undecided.map((text, index) => ({
    id: `t-${index + 1}`,
    text: text.text,
    events: eventsFor(context, text),
    undecided: text,
  }));
  const { verdicts, calls } = await judge.judge(items, signal);
  const reasons = items.flatMap(({ id, undecided }) => {
    const verdict = verdicts.get(id);
    if (verdict?.verdict !== "unsupported") return [];
    return [
      reason(
        undecided.kind === "claim" ? "unsupported-claim" : "summary-unsupported",
        undecided.key,
        undecided.scope,
        undecided.kind === "claim" ? (undecided.derivedFrom[0] ?? null) : null,
        `${undecided.where} ("${undecided.text.slice(0, 120)}"): the judge ${judge.name} decided it is unsupported: ${verdict.reason}`,
      ),
    ];
  });
  // An unclear verdict refuses nothing; it is shown where people review (the report's warnings).
  const warnings = items.flatMap(({ id, undecided }): GateWarning[] => {
    const verdict = verdicts.get(id);
    return verdict?.verdict === "unclear"
      ? [
          {
            code: "judge-unclear",
            detail: `${undecided.where} ("${undecided.text.slice(0, 120)}"): the judge ${judge.name} could not decide: ${verdict.reason}`,
          },
        ]
      : [];
  });
  return { reasons, warnings, calls };
}
