import { z } from "zod";
import { appendEvents } from "#app/append.ts";
import type { Deps } from "#app/deps.ts";
import { modelSchema, parseModelAnswer } from "#app/model-output.ts";
import type { ModelSettings } from "#app/one-prompt.ts";
import { fillTemplate, type RenderedPrompt, renderedPrompt } from "#app/prompt-render.ts";
import { loadPrompt } from "#app/prompts.ts";
import { recall } from "#app/recall.ts";
import { renderServedRecallText } from "#app/recall-text.ts";
import { run } from "#app/run.ts";
import { takeSnapshot } from "#app/snapshot.ts";
import { countTokens } from "#domain/tokens.ts";
import {
  type LOCOMO_CATEGORIES,
  type LocomoCategory,
  type LocomoConversation,
  type LocomoQuestion,
  locomoTranscript,
} from "#io/locomo-file.ts";
import { GenerationFailedError, type LanguageCallKind, type LanguageModel } from "#ports/model.ts";

/**
 * The LoCoMo evaluation (issue: an agent answers from memgate as well as from the whole log). Each
 * conversation is appended to a throwaway store and consolidated by the configured model (gated
 * and published as always); then every question is asked of the answering model twice in the same
 * run, once with what recall serves for it (the question as `query`, the text rendering within
 * `budget` tokens) and once with the whole conversation, and a grading model labels each answer
 * against the gold answer. Without an answering model only what needs no model is measured: how
 * often the served text holds an evidence turn, and the tokens of both.
 */

export const ANSWER_TEMPLATE = "answer-v1";
export const GRADE_TEMPLATE = "grade-v1";
/** Answers graded in one grading call (they are independent; ids say nothing of where they came from). */
export const GRADES_PER_CALL = 20;
/** Answering and grading calls: room for a whole conversation, short answers, a batch of grades. */
export const LOCOMO_SETTINGS = { contextTokens: 128_000, maxOutputTokens: 2_048 };

const QuestionAnswer = z.strictObject({ answer: z.string() });
const Grades = z.strictObject({
  grades: z.array(
    z.strictObject({ id: z.string(), label: z.enum(["CORRECT", "WRONG"]), reason: z.string() }),
  ),
});
const ANSWER_SCHEMA = { name: "QuestionAnswer", json: modelSchema(QuestionAnswer) };
const GRADE_SCHEMA = { name: "Grades", json: modelSchema(Grades) };

export interface LocomoOptions {
  /** Recall's text budget for each question (tokens, cl100k_base). */
  budget: number;
  answerModel?: LanguageModel | undefined;
  gradeModel?: LanguageModel | undefined;
  /** Context and answer sizes of the answering and grading calls. */
  settings: ModelSettings;
  /** Model calls in flight at once. */
  concurrency: number;
  /**
   * The models answer and judge every `every`th question of each conversation (its 1st, then the
   * 1 + every-th, …); evidence and tokens are measured over all. Default 1: every question.
   */
  every?: number | undefined;
  progress?: (line: string) => void;
  signal?: AbortSignal;
}

export type Mode = "memory" | "full";

export interface LocomoAnswer {
  id: string;
  conversation: string;
  category: LocomoCategory;
  question: string;
  gold: string;
  evidence: string[];
  /** Whether the served text names an evidence turn (a claim, task or event citing it). */
  evidenceServed: boolean;
  memoryTokens: number;
  fullTokens: number;
  answers: Partial<Record<Mode, string>>;
  labels: Partial<Record<Mode, "CORRECT" | "WRONG">>;
}

export interface LocomoFigures {
  questions: number;
  /** Questions answered and judged in both modes (all of them unless `every` > 1). */
  judged: number;
  evidenceServed: number;
  /** Mean tokens a question's answer reads: what recall served, and the whole conversation. */
  memoryTokens: number;
  fullTokens: number;
  /** memoryTokens / fullTokens. */
  tokenRatio: number;
  /** Share labelled CORRECT; null without answering and grading models. */
  memoryAccuracy: number | null;
  fullAccuracy: number | null;
}

export interface LocomoConsolidation {
  conversation: string;
  events: number;
  status: string;
  artifactId: string | null;
  attempts: number;
  firstTryPass: boolean;
  claims: number;
}

export interface LocomoReport {
  budget: number;
  /** Every how many questions of a conversation were answered and judged. */
  every: number;
  /** The consolidating prompt's version (`--prompt`). */
  prompt: string;
  consolidations: LocomoConsolidation[];
  byCategory: Record<(typeof LOCOMO_CATEGORIES)[LocomoCategory] | "overall", LocomoFigures>;
  perQuestion: LocomoAnswer[];
}

export async function evaluateLocomo(
  deps: Deps,
  conversations: readonly LocomoConversation[],
  options: LocomoOptions,
): Promise<LocomoReport> {
  const progress = options.progress ?? (() => {});
  const signal = options.signal ?? new AbortController().signal;
  const consolidations: LocomoConsolidation[] = [];
  const answers: LocomoAnswer[] = [];
  const every = options.every ?? 1;
  const asked: LocomoAnswer[] = [];
  // What each question's answer reads: recall's text for it, and each conversation whole.
  const servedTexts = new Map<string, string>();
  const transcripts = new Map<string, string>();
  // Every conversation is consolidated at once (a model answers them side by side), each with
  // artifact ids of its own counting, so the same run names the same artifacts in the same texts
  // (recorded answers to the questions replay) whatever order the consolidations finish in.
  const outcomes = new Map<string, LocomoConsolidation>();
  await inParallel(conversations, options.concurrency, async (conversation) => {
    let ids = 0;
    const own = { ...deps, newId: () => `${conversation.id}.${++ids}` };
    progress(`${conversation.id}: appending ${conversation.events.length} turns and consolidating`);
    await appendEvents(own, conversation.id, conversation.events);
    const outcome = await run(own, await takeSnapshot(own, conversation.id));
    const generated = "gate" in outcome ? outcome : null;
    const attempts = generated && "generation" in generated ? (generated.generation?.attempts ?? 1) : 1;
    outcomes.set(conversation.id, {
      conversation: conversation.id,
      events: conversation.events.length,
      status: outcome.status,
      artifactId: generated?.artifactId ?? null,
      attempts,
      firstTryPass: outcome.status === "PUBLISHED" && attempts === 1,
      claims: generated?.gate.stats.claims ?? 0,
    });
    progress(`${conversation.id}: ${outcome.status} after ${attempts} attempt(s)`);
  });
  for (const conversation of conversations) {
    consolidations.push(outcomes.get(conversation.id) as LocomoConsolidation);
    const transcript = locomoTranscript(conversation);
    transcripts.set(conversation.id, transcript);
    const fullTokens = countTokens(transcript);
    for (const [index, question] of conversation.questions.entries()) {
      const { answer, text } = await servedFor(deps, conversation, question, fullTokens, options.budget);
      answers.push(answer);
      if (index % every === 0) asked.push(answer);
      servedTexts.set(answer.id, text);
    }
  }
  if (options.answerModel && options.gradeModel) {
    const material = (answer: LocomoAnswer, mode: Mode) =>
      (mode === "memory" ? servedTexts : transcripts).get(
        mode === "memory" ? answer.id : answer.conversation,
      ) ?? "";
    await askAll(asked, material, options.answerModel, options, signal, progress);
    await gradeAll(asked, options.gradeModel, options, signal, progress);
  }
  return {
    budget: options.budget,
    every,
    prompt: deps.prompt.version,
    consolidations,
    byCategory: figures(answers),
    perQuestion: answers,
  };
}

/** What recall serves for one question: its text (what the answer reads) and whether it cites evidence. */
async function servedFor(
  deps: Deps,
  conversation: LocomoConversation,
  question: LocomoQuestion,
  fullTokens: number,
  budget: number,
): Promise<{ answer: LocomoAnswer; text: string }> {
  const answer = await recall(deps, conversation.id, { query: question.question, budget, format: "text" });
  const text = renderServedRecallText(answer).text;
  const cited = new Set<string>([
    ...answer.claims.flatMap((claim) => claim.derivedFrom),
    ...answer.pending.flatMap((item) => item.derivedFrom),
    ...[...answer.tail, ...answer.events, ...answer.cold].map((event) => event.eventId),
  ]);
  const result: LocomoAnswer = {
    id: question.id,
    conversation: conversation.id,
    category: question.category,
    question: question.question,
    gold: question.gold,
    evidence: question.evidence,
    evidenceServed: question.evidence.some((id) => cited.has(id)),
    memoryTokens: answer.servedTokens,
    fullTokens,
    answers: {},
    labels: {},
  };
  return { answer: result, text };
}

/** One call to a language model, refused before it is sent when it cannot fit the model's context. */
async function complete(
  model: LanguageModel,
  settings: ModelSettings,
  kind: LanguageCallKind,
  rendered: RenderedPrompt,
  schema: { name: string; json: Record<string, unknown> },
  signal: AbortSignal,
) {
  const needed = countTokens(rendered.system) + countTokens(rendered.prompt);
  if (needed + settings.maxOutputTokens > settings.contextTokens)
    throw new GenerationFailedError(
      `${model.name}: the ${kind} prompt needs ${needed} tokens and the answer up to ${settings.maxOutputTokens}, more than the context of ${settings.contextTokens}`,
    );
  return model.complete(
    {
      kind,
      system: rendered.system,
      prompt: rendered.prompt,
      promptHash: rendered.hash,
      schemaName: schema.name,
      schema: schema.json,
      maxOutputTokens: settings.maxOutputTokens,
    },
    signal,
  );
}

/** Runs `work` over `items`, at most `concurrency` at once, in order of start. */
async function inParallel<T>(items: readonly T[], concurrency: number, work: (item: T) => Promise<void>) {
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const item = items[next++] as T;
      await work(item);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(concurrency, items.length)) }, worker));
}

async function askAll(
  answers: LocomoAnswer[],
  materialOf: (answer: LocomoAnswer, mode: Mode) => string,
  model: LanguageModel,
  options: LocomoOptions,
  signal: AbortSignal,
  progress: (line: string) => void,
) {
  const template = loadPrompt(ANSWER_TEMPLATE);
  const calls = answers.flatMap((answer) => (["memory", "full"] as const).map((mode) => ({ answer, mode })));
  let done = 0;
  await inParallel(calls, options.concurrency, async ({ answer, mode }) => {
    const material = materialOf(answer, mode);
    const rendered = renderedPrompt(
      template,
      ANSWER_SCHEMA.name,
      fillTemplate(template, {
        about:
          mode === "memory"
            ? "what an agent's memory serves for this question: claims about the conversation and the turns it holds, each turn with its date and id"
            : "the whole conversation, each session under its date",
        material,
        question: answer.question,
      }),
    );
    const said = await complete(model, options.settings, "answer", rendered, ANSWER_SCHEMA, signal);
    const parsed = parseModelAnswer(QuestionAnswer, said.text);
    answer.answers[mode] = parsed.ok ? parsed.value.answer : "";
    if (++done % 50 === 0 || done === calls.length) progress(`answered ${done} of ${calls.length}`);
  });
}

/**
 * Grades every answer, GRADES_PER_CALL to a call. The answers of both modes are mixed in an order
 * that depends on nothing but their ids, and each carries an opaque id: the grader cannot tell
 * which came from memory.
 */
async function gradeAll(
  answers: LocomoAnswer[],
  model: LanguageModel,
  options: LocomoOptions,
  signal: AbortSignal,
  progress: (line: string) => void,
) {
  const template = loadPrompt(GRADE_TEMPLATE);
  const items = answers
    .flatMap((answer) =>
      (["memory", "full"] as const).map((mode) => ({ answer, mode, key: opaqueId(answer.id, mode) })),
    )
    .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  const batches: (typeof items)[] = [];
  for (let i = 0; i < items.length; i += GRADES_PER_CALL) batches.push(items.slice(i, i + GRADES_PER_CALL));
  let done = 0;
  await inParallel(batches, options.concurrency, async (batch) => {
    const blocks = batch.map(
      ({ answer, mode, key }) =>
        `### ${key}\nQuestion: ${answer.question}\nGold answer: ${answer.gold}\nAnswer: ${answer.answers[mode] ?? ""}`,
    );
    const rendered = renderedPrompt(
      template,
      GRADE_SCHEMA.name,
      fillTemplate(template, { answers: blocks.join("\n\n") }),
    );
    const said = await complete(model, options.settings, "grade", rendered, GRADE_SCHEMA, signal);
    const parsed = parseModelAnswer(Grades, said.text);
    for (const { answer, mode, key } of batch) {
      const grade = parsed.ok ? parsed.value.grades.find((g) => g.id === key) : undefined;
      // An answer the grader gave no label is counted WRONG: a missing grade never helps a mode.
      answer.labels[mode] = grade?.label ?? "WRONG";
    }
    done += batch.length;
    progress(`graded ${done} of ${items.length}`);
  });
}

/** A grading id that says nothing of the mode: a short hash of the question id and the mode. */
function opaqueId(questionId: string, mode: Mode): string {
  let hash = 2166136261;
  for (const c of `${questionId}\u0000${mode}`) {
    hash ^= c.codePointAt(0) ?? 0;
    hash = Math.imul(hash, 16777619) >>> 0;
  }
  return `a${hash.toString(36).padStart(7, "0")}`;
}

function figures(answers: readonly LocomoAnswer[]): LocomoReport["byCategory"] {
  const of = (subset: readonly LocomoAnswer[]): LocomoFigures => {
    const n = subset.length;
    const mean = (f: (a: LocomoAnswer) => number) =>
      n === 0 ? 0 : subset.reduce((sum, a) => sum + f(a), 0) / n;
    const judged = subset.filter((a) => a.labels.memory !== undefined && a.labels.full !== undefined);
    const accuracy = (mode: Mode) =>
      judged.length === 0 ? null : judged.filter((a) => a.labels[mode] === "CORRECT").length / judged.length;
    const memoryTokens = mean((a) => a.memoryTokens);
    const fullTokens = mean((a) => a.fullTokens);
    return {
      questions: n,
      judged: judged.length,
      evidenceServed: mean((a) => (a.evidenceServed ? 1 : 0)),
      memoryTokens,
      fullTokens,
      tokenRatio: fullTokens === 0 ? 0 : memoryTokens / fullTokens,
      memoryAccuracy: accuracy("memory"),
      fullAccuracy: accuracy("full"),
    };
  };
  const byName = (category: LocomoCategory) => of(answers.filter((a) => a.category === category));
  return {
    "multi-hop": byName(1),
    temporal: byName(2),
    "open-domain": byName(3),
    "single-hop": byName(4),
    overall: of(answers),
  };
}
