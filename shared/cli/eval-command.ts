import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { languageModelNamed } from "#adapters/models/models.ts";
import { evaluate } from "#eval/evaluate.ts";
import { evaluateLocomo, LOCOMO_SETTINGS, type LocomoReport } from "#eval/locomo.ts";
import { parseDataset, parseGold } from "#io/eval-files.ts";
import { parseLocomo } from "#io/locomo-file.ts";
import { readUserText } from "#io/read-text.ts";
import { checkModelName, openEmbeddedRuntime } from "#runtime/embedded.ts";
import { type Command, text } from "./command.ts";
import type { Io } from "./output.ts";
import { EXIT, UsageError } from "./output.ts";

export const EVAL_USAGE = `memgate eval --dataset FILE.jsonl [--gold FILE.jsonl] [--sample N] [--seed S] [--model NAME] [--json]
memgate eval --locomo FILE.json [--conversations ID,ID] [--model NAME] [--prompt VERSION] [--answer-model NAME --judge-model NAME]
             [--every N] [--budget TOKENS] [--concurrency N] [--json]

Rebuilds each (sampled) subject of a dataset from its raw events on a throwaway store (nothing is
published anywhere) and measures the answer: key-fact recall (gold facts kept: a fact in words
only when served hot with its words; without gold, the must-preserve set), false new facts (claims
an independent checker finds unsupported by their cited events), conflict retention, served vs raw
tokens as recall text (what an agent reads, cl100k_base), token reduction (JSON), first-try pass
rate and stale-visible. Exit 1 when the false-new-fact rate or stale-visible is above 0.

With --locomo, runs the LoCoMo benchmark (a file in the format of its data/locomo10.json): each
conversation's turns are appended as notes (eventId = dia_id, occurredAt = the session's
date-time, source = the speaker) and consolidated by --model; every question of categories 1–4 is
answered by --answer-model twice, from what recall serves for it (the question as query, the text
within --budget tokens, default 1500) and from the whole conversation, and --judge-model labels
each answer against the gold answer. Prints per category the accuracy of both, the tokens each
answer read and their ratio, and how often the served text cited an evidence turn. Without the
answering and judging models only the evidence rate and the tokens are measured. --every N has
the models answer and judge only every Nth question of each conversation (its 1st, N+1st, …). Models are named
as for --model (record:DIR:… keeps every answer, replay:DIR answers from them).`;

const count = (value: string | undefined, flag: string): number | undefined => {
  if (value === undefined) return undefined;
  if (!/^\d{1,9}$/.test(value)) throw new UsageError(`${flag} must be a whole number, got "${value}"`);
  return Number(value);
};

export async function evalCommand(
  args: {
    locomo?: string | undefined;
    conversations?: string | undefined;
    prompt?: string | undefined;
    answerModel?: string | undefined;
    judgeModel?: string | undefined;
    budget?: string | undefined;
    concurrency?: string | undefined;
    every?: string | undefined;
    dataset?: string | undefined;
    gold?: string | undefined;
    sample?: string | undefined;
    seed?: string | undefined;
    model?: string | undefined;
    json: boolean;
  },
  io: Io,
): Promise<number> {
  if (args.locomo !== undefined) return locomoCommand({ ...args, locomo: args.locomo }, io);
  if (!args.dataset) throw new UsageError("--dataset FILE.jsonl or --locomo FILE.json is required");
  const sample = count(args.sample, "--sample");
  const seed = count(args.seed, "--seed");
  if (args.model !== undefined) checkModelName(args.model);
  const dataset = parseDataset(await readUserText(args.dataset, "dataset file"), args.dataset);
  const gold = args.gold ? parseGold(await readUserText(args.gold, "gold file"), args.gold) : null;
  const home = mkdtempSync(join(tmpdir(), "memgate-eval-"));
  const runtime = await openEmbeddedRuntime({
    store: "embedded",
    home,
    model: args.model,
    progress: () => {},
  });
  try {
    const { deps } = runtime;
    await deps.settings.updateSettings({ publishMode: "shadow" });
    const report = await evaluate(deps, dataset, gold, {
      ...(sample === undefined ? {} : { sample }),
      ...(seed === undefined ? {} : { seed }),
    });
    const { perSubject, ...summary } = report;
    const shown = (x: number | null) => (x === null ? "not measured" : x.toFixed(3));
    io.out(
      args.json
        ? JSON.stringify({ ...summary, perSubject })
        : [
            `${report.subjects} subjects (key facts from ${report.keyFactSource}); the gate refused ${report.gateRejected} answers`,
            `  key-fact recall      ${shown(report.keyFactRecall)}`,
            `  false-new-fact rate  ${shown(report.falseNewFactRate)}${(report.falseNewFactRate ?? 0) > 0 ? "  BLOCKING" : ""}`,
            `    of which the judge  ${shown(report.judgeFalseNewFactRate)}${deps.judge ? ` (${deps.judge.name})` : " (no judge: set MEMGATE_JUDGE)"}`,
            `  conflict retention   ${shown(report.conflictRetention)}`,
            `  served / raw tokens  ${shown(report.servedToRawTokens)} (recall text)`,
            `  token reduction      ${shown(report.tokenReduction)}`,
            `  first-try pass rate  ${shown(report.firstTryPassRate)}`,
            `  stale visible        ${report.staleVisible}${report.staleVisible > 0 ? "  BLOCKING" : ""}`,
          ].join("\n"),
    );
    return (report.falseNewFactRate ?? 0) > 0 || report.staleVisible > 0 ? EXIT.rejected : EXIT.ok;
  } finally {
    runtime.close();
    rmSync(home, { recursive: true, force: true });
  }
}

export const EVAL_COMMAND: Command = {
  usage: EVAL_USAGE,
  options: {
    locomo: { type: "string" },
    conversations: { type: "string" },
    prompt: { type: "string" },
    "answer-model": { type: "string" },
    "judge-model": { type: "string" },
    budget: { type: "string" },
    concurrency: { type: "string" },
    every: { type: "string" },
    dataset: { type: "string" },
    gold: { type: "string" },
    sample: { type: "string" },
    seed: { type: "string" },
    model: { type: "string" },
  },
  run: (values, _positionals, io) =>
    evalCommand(
      {
        locomo: text(values, "locomo"),
        conversations: text(values, "conversations"),
        prompt: text(values, "prompt"),
        answerModel: text(values, "answer-model"),
        judgeModel: text(values, "judge-model"),
        budget: text(values, "budget"),
        concurrency: text(values, "concurrency"),
        every: text(values, "every"),
        dataset: text(values, "dataset"),
        gold: text(values, "gold"),
        sample: text(values, "sample"),
        seed: text(values, "seed"),
        model: text(values, "model"),
        json: values.json === true,
      },
      io,
    ),
};

async function locomoCommand(
  args: Parameters<typeof evalCommand>[0] & { locomo: string },
  io: Io,
): Promise<number> {
  const budget = count(args.budget, "--budget") ?? 1500;
  const concurrency = count(args.concurrency, "--concurrency") ?? 4;
  const every = count(args.every, "--every") ?? 1;
  if (every < 1) throw new UsageError("--every must be 1 or more");
  if (concurrency < 1 || concurrency > 4096) throw new UsageError("--concurrency must be from 1 to 4096");
  if ((args.answerModel === undefined) !== (args.judgeModel === undefined))
    throw new UsageError(
      "--answer-model and --judge-model go together: answers are only counted once judged",
    );
  if (args.model !== undefined) checkModelName(args.model);
  const named = (name: string | undefined, role: string) => {
    if (name === undefined) return undefined;
    try {
      return languageModelNamed(name, undefined, role);
    } catch (error) {
      throw new UsageError(error instanceof Error ? error.message : String(error));
    }
  };
  const answerModel = named(args.answerModel, "the answering model");
  const gradeModel = named(args.judgeModel, "the judging model");
  let conversations = parseLocomo(await readUserText(args.locomo, "LoCoMo file"), args.locomo);
  if (args.conversations !== undefined) {
    const wanted = args.conversations.split(",").map((id) => id.trim());
    const unknown = wanted.filter((id) => !conversations.some((c) => c.id === id));
    if (unknown.length > 0)
      throw new UsageError(
        `--conversations: ${unknown.join(", ")} not in ${args.locomo} (it holds ${conversations.map((c) => c.id).join(", ")})`,
      );
    conversations = conversations.filter((c) => wanted.includes(c.id));
  }
  const home = mkdtempSync(join(tmpdir(), "memgate-locomo-"));
  const runtime = await openEmbeddedRuntime({
    store: "embedded",
    home,
    model: args.model,
    prompt: args.prompt,
    progress: (line) => io.err(line),
  });
  try {
    const report = await evaluateLocomo(runtime.deps, conversations, {
      budget,
      answerModel,
      gradeModel,
      settings: LOCOMO_SETTINGS,
      concurrency,
      every,
      progress: (line) => io.err(line),
    });
    io.out(args.json ? JSON.stringify(report) : locomoTable(report));
    return EXIT.ok;
  } finally {
    runtime.close();
    rmSync(home, { recursive: true, force: true });
  }
}

function locomoTable(report: LocomoReport): string {
  const percent = (x: number | null) => (x === null ? "    —" : `${(100 * x).toFixed(1).padStart(5)}`);
  const rows = Object.entries(report.byCategory).map(
    ([name, f]) =>
      `  ${name.padEnd(12)} ${String(f.questions).padStart(4)} ${String(f.judged).padStart(4)}  ${percent(f.memoryAccuracy)}  ${percent(f.fullAccuracy)}  ${f.memoryTokens.toFixed(0).padStart(6)}  ${f.fullTokens.toFixed(0).padStart(6)}  ${percent(f.tokenRatio)}  ${percent(f.evidenceServed)}`,
  );
  const consolidations = report.consolidations.map(
    (c) =>
      `  ${c.conversation}: ${c.status} (${c.attempts} attempt${c.attempts === 1 ? "" : "s"}), ${c.claims} claims over ${c.events} turns`,
  );
  return [
    `LoCoMo, ${report.perQuestion.length} questions${report.every > 1 ? `, every ${report.every}th answered and judged` : ""}, recall budget ${report.budget} tokens`,
    ...consolidations,
    `  category     n  judged memory%  full%  mem.tok  full.tok  ratio%  evidence%`,
    ...rows,
  ].join("\n");
}
