// The evaluation's metrics on both datasets in examples/eval (synthetic with gold; MemoryBank
// chats without gold), through `memgate eval`, with the deterministic model.
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { record } from "./results.ts";

const root = join(import.meta.dirname, "..");
const run = (args: string[]) => {
  const result = spawnSync(process.execPath, [join(root, "bin", "memgate.js"), "eval", ...args, "--json"], {
    encoding: "utf8",
    maxBuffer: 64 * 1024 * 1024,
  });
  return JSON.parse(result.stdout) as Record<string, number | null | string>;
};
const shown = (x: number | string | null | undefined) =>
  typeof x === "number" ? x.toFixed(3) : "not measured";
for (const [name, args] of [
  [
    "synthetic (gold)",
    [
      "--dataset",
      join(root, "examples/eval/synthetic.jsonl"),
      "--gold",
      join(root, "examples/eval/synthetic-gold.jsonl"),
    ],
  ],
  ["memorybank (no gold)", ["--dataset", join(root, "examples/eval/memorybank.jsonl")]],
] as const) {
  const report = run([...args]);
  const figure = `key-fact recall ${shown(report.keyFactRecall)}, false-new-fact rate ${shown(report.falseNewFactRate)}, conflict retention ${shown(report.conflictRetention)}, token reduction ${shown(report.tokenReduction)}, stale visible ${report.staleVisible}`;
  console.log(`eval ${name}: ${report.subjects} subjects: ${figure}`);
  record({
    bench: `eval-${name.split(" ")[0]}`,
    measures: `memgate eval on examples/eval ${name}, deterministic model`,
    figure,
    goal: "false-new-fact rate 0, stale visible 0",
    met: report.falseNewFactRate === 0 && report.staleVisible === 0,
  });
}
