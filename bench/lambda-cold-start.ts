// The cold start of each Lambda bundle: a fresh Node process importing the bundle (module
// evaluation and the composition root, what Lambda's init phase runs), median of 5, beside the
// cost of starting Node itself with nothing to import, measured in the same run.
import { spawnSync } from "node:child_process";
import { copyFileSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
// @ts-expect-error: a plain ES module script without types
import { buildLambdas } from "../scripts/bundle-lambdas.mjs";
import { record } from "./results.ts";

const ENV = {
  PATH: process.env.PATH,
  MEMGATE_TENANT: "bench",
  MEMGATE_TABLE: "memgate-bench",
  MEMGATE_BUCKET: "memgate-bench",
  MEMGATE_QUEUE_URL: "https://sqs.us-east-1.amazonaws.com/123456789012/memgate.fifo",
  AWS_REGION: "us-east-1",
};

function importMs(entry: string | null): number {
  const script =
    entry === null
      ? "const s = performance.now(); console.log(performance.now() - s);"
      : `const s = performance.now(); await import(${JSON.stringify(entry)}); console.log(performance.now() - s);`;
  const started = performance.now();
  const result = spawnSync(process.execPath, ["--input-type=module", "-e", script], {
    encoding: "utf8",
    env: ENV,
  });
  if (result.status !== 0) throw new Error(result.stderr.slice(0, 500));
  return performance.now() - started;
}

const median = (values: number[]) =>
  [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;

const built: Record<string, { outfile: string }> = await buildLambdas(
  mkdtempSync(join(tmpdir(), "memgate-bench-")),
);
const bare = median(Array.from({ length: 5 }, () => importMs(null)));
console.log(
  `lambda cold start (process start + bundle import, median of 5; bare node ${bare.toFixed(0)} ms)`,
);
const cold: string[] = [];
for (const [name, { outfile }] of Object.entries(built)) {
  const folder = mkdtempSync(join(tmpdir(), `memgate-${name}-`));
  const entry = join(folder, "index.mjs");
  copyFileSync(outfile, entry);
  const total = median(Array.from({ length: 5 }, () => importMs(entry)));
  cold.push(`${name} ${total.toFixed(0)}`);
  console.log(
    `  ${name.padEnd(7)} ${total.toFixed(0)} ms total, ${(total - bare).toFixed(0)} ms for the bundle (${(total / bare).toFixed(2)}x bare node)`,
  );
}
record({
  bench: "lambda-cold-start",
  measures:
    "each Lambda bundle imported by a fresh Node process from an empty folder (process start included, median of 5)",
  figure: `${cold.join(", ")} ms (bare node ${bare.toFixed(0)} ms)`,
  goal: "none (reported)",
  met: null,
});
