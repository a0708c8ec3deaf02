// Converts the MemoryBank chat data (Zhong et al., AAAI 2024; MIT licence) into an evaluation
// dataset: one subject per user, each user turn a fact the user stated (trust user, source
// user:<name>, occurredAt the day), each assistant turn a note (trust tool). No gold: `memgate
// eval` measures token reduction and must-preserve recall on it.
//   npx tsx scripts/memorybank-to-dataset.ts [memory_bank_en.json] [out.jsonl]
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { z } from "zod";

const Turn = z.object({ query: z.string(), response: z.string() });
const User = z.object({ name: z.string(), history: z.record(z.string(), z.array(Turn)) });
const MemoryBank = z.record(z.string(), User);

const input =
  process.argv[2] ??
  join(import.meta.dirname, "..", "..", "shared", "data", "memorybank", "memory_bank_en.json");
const output = process.argv[3] ?? join(import.meta.dirname, "..", "examples", "eval", "memorybank.jsonl");
const bank = MemoryBank.parse(JSON.parse(readFileSync(input, "utf8")));
const lines: string[] = [];
for (const user of Object.values(bank)) {
  const name = user.name.trim();
  const slug = name.toLowerCase().replace(/[^a-z0-9]+/g, "-");
  const subject = `memorybank/${slug}`;
  for (const [day, turns] of Object.entries(user.history).sort(([a], [b]) => a.localeCompare(b)))
    turns.forEach((turn, index) => {
      const base = `${slug}-${day}-${index + 1}`;
      lines.push(
        JSON.stringify({
          subject,
          eventId: `${base}-u`,
          kind: "fact",
          text: turn.query.trim(),
          trust: "user",
          source: `user:${slug}`,
          occurredAt: day,
        }),
        JSON.stringify({
          subject,
          eventId: `${base}-a`,
          kind: "note",
          text: turn.response.trim(),
          trust: "tool",
          source: "agent:companion",
          occurredAt: day,
        }),
      );
    });
}
writeFileSync(output, `${lines.join("\n")}\n`);
console.log(`wrote ${lines.length} events of ${Object.keys(bank).length} users to ${output}`);
