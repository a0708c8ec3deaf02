// Writes the synthetic evaluation dataset and its gold (the generator is the gold):
// examples/eval/synthetic.jsonl and examples/eval/synthetic-gold.jsonl.
//   npx tsx scripts/make-eval-dataset.ts [SUBJECTS] [SEED]
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { syntheticDataset } from "#eval/synthetic.ts";

const subjects = Number(process.argv[2] ?? 20);
const seed = Number(process.argv[3] ?? 2026);
const folder = join(import.meta.dirname, "..", "examples", "eval");
mkdirSync(folder, { recursive: true });
const { events, gold } = syntheticDataset(subjects, seed);
writeFileSync(join(folder, "synthetic.jsonl"), `${events.map((e) => JSON.stringify(e)).join("\n")}\n`);
writeFileSync(join(folder, "synthetic-gold.jsonl"), `${gold.map((g) => JSON.stringify(g)).join("\n")}\n`);
console.log(
  `wrote ${events.length} events of ${subjects} subjects and ${gold.length} gold facts to ${folder}`,
);
