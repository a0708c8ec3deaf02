// Runs every benchmark in its own process (so one's JIT and heap never colour another's numbers).
import { spawnSync } from "node:child_process";
import { readdirSync } from "node:fs";
import { join } from "node:path";

const here = import.meta.dirname;
const benches = readdirSync(here).filter(
  (name) => name.endsWith(".ts") && !["run-all.ts", "stats.ts"].includes(name),
);
let failed = 0;
for (const bench of benches) {
  const result = spawnSync(process.execPath, ["--import", "tsx", join(here, bench)], { stdio: "inherit" });
  if (result.status !== 0) failed++;
}
console.log(`${benches.length - failed} of ${benches.length} benchmarks ran`);
process.exitCode = failed === 0 ? 0 : 1;
