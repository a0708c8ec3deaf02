import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { evaluate } from "#eval/evaluate.ts";
import { parseDataset, parseGold } from "#io/eval-files.ts";
import { readUserText } from "#io/read-text.ts";
import { checkModelName, openEmbeddedRuntime } from "#runtime/embedded.ts";
import { type Command, text } from "./command.ts";
import type { Io } from "./output.ts";
import { EXIT, UsageError } from "./output.ts";

export const EVAL_USAGE = `memgate eval --dataset FILE.jsonl [--gold FILE.jsonl] [--sample N] [--seed S] [--model NAME] [--json]

Rebuilds each (sampled) subject of a dataset from its raw events on a throwaway store (nothing is
published anywhere) and measures the answer: key-fact recall (gold facts kept: a fact in words
only when served hot with its words; without gold, the must-preserve set), false new facts (claims
an independent checker finds unsupported by their cited events), conflict retention, served vs raw
tokens as recall text (what an agent reads, cl100k_base), token reduction (JSON), first-try pass
rate and stale-visible. Exit 1 when the false-new-fact rate or stale-visible is above 0.`;

const count = (value: string | undefined, flag: string): number | undefined => {
  if (value === undefined) return undefined;
  if (!/^\d{1,9}$/.test(value)) throw new UsageError(`${flag} must be a whole number, got "${value}"`);
  return Number(value);
};

export async function evalCommand(
  args: {
    dataset?: string | undefined;
    gold?: string | undefined;
    sample?: string | undefined;
    seed?: string | undefined;
    model?: string | undefined;
    json: boolean;
  },
  io: Io,
): Promise<number> {
  if (!args.dataset) throw new UsageError("--dataset FILE.jsonl is required");
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
    dataset: { type: "string" },
    gold: { type: "string" },
    sample: { type: "string" },
    seed: { type: "string" },
    model: { type: "string" },
  },
  run: (values, _positionals, io) =>
    evalCommand(
      {
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
