// Runs every benchmark in its own process (so one's JIT and heap never colour another's numbers),
// then writes the one table of their figures beside their goals: bench/results.md and
// bench/results.json, naming the machine they ran on.
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { cpus, totalmem } from "node:os";
import { join } from "node:path";
import type { BenchRow } from "./results.ts";

const here = import.meta.dirname;
const only = process.argv.slice(2);
const benches = readdirSync(here).filter(
  (name) =>
    name.endsWith(".ts") &&
    !["run-all.ts", "stats.ts", "results.ts"].includes(name) &&
    (only.length === 0 || only.includes(name.replace(/\.ts$/, ""))),
);
const rows: BenchRow[] = [];
let failed = 0;
for (const bench of benches) {
  const textImports = join(here, "..", "scripts", "text-imports.mjs");
  const result = spawnSync(
    process.execPath,
    ["--import", "tsx", "--import", textImports, join(here, bench)],
    {
      encoding: "utf8",
      stdio: ["ignore", "pipe", "inherit"],
      maxBuffer: 64 * 1024 * 1024,
    },
  );
  for (const line of result.stdout.split("\n")) {
    if (line.startsWith("RESULT ")) rows.push(JSON.parse(line.slice(7)) as BenchRow);
    else if (line !== "") console.log(line);
  }
  if (result.status !== 0) failed++;
}
// A partial run (named benchmarks) updates their rows and keeps the others of the last full run.
if (only.length > 0 && existsSync(join(here, "results.json"))) {
  const previous = JSON.parse(readFileSync(join(here, "results.json"), "utf8")) as { rows: BenchRow[] };
  const fresh = new Set(rows.map((row) => row.bench));
  rows.unshift(...previous.rows.filter((row) => !fresh.has(row.bench)));
  rows.sort((a, b) => a.bench.localeCompare(b.bench));
}
const machine = `${cpus().length} × ${cpus()[0]?.model ?? "unknown CPU"}, ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}`;
const ranAt = new Date().toISOString();
writeFileSync(join(here, "results.json"), `${JSON.stringify({ machine, ranAt, rows }, null, 2)}\n`);
const cell = (text: string) => text.replaceAll("|", "\\|");
writeFileSync(
  join(here, "results.md"),
  [
    "# Benchmark results",
    "",
    `Machine: ${machine}. Run: ${ranAt} (\`npm run bench\`; one run, ratios measured within it).`,
    "",
    "| bench | measures | figure | goal | met |",
    "|---|---|---|---|---|",
    ...rows.map(
      (row) =>
        `| ${row.bench} | ${cell(row.measures)} | ${cell(row.figure)} | ${cell(row.goal)} | ${row.met === null ? "—" : row.met ? "yes" : "NO"} |`,
    ),
    "",
  ].join("\n"),
);
// The project's formatter lays the table out (padded columns), so `npm run lint` stays clean.
spawnSync(
  join(here, "..", "node_modules", ".bin", "biome"),
  ["format", "--write", join(here, "results.md")],
  {
    stdio: "ignore",
  },
);
console.log(
  `${benches.length - failed} of ${benches.length} benchmarks ran; ${rows.length} rows in bench/results.md`,
);
process.exitCode = failed === 0 ? 0 : 1;
