import { join } from "node:path";
import { gateCommand } from "./gate-command.ts";
import type { Io } from "./output.ts";
import { EXIT } from "./output.ts";
import { packageRoot } from "./package-root.ts";

/**
 * The bundled walk-through: the example log gated twice, once with an honest summary (passes) and
 * once with a summary that bends it (refused with every reason). Exit 0 when both verdicts are as
 * expected, so `npm start` doubles as a smoke test.
 */
export async function demoCommand(args: { json: boolean }, io: Io): Promise<number> {
  const exampleDir = join(packageRoot(), "examples", "alpha", "/");
  const events = `${exampleDir}events.jsonl`;
  const policy = `${exampleDir}policy.json`;
  const runs = [
    { title: "honest summary", candidate: `${exampleDir}candidate-honest.json`, expected: EXIT.ok },
    { title: "bent summary", candidate: `${exampleDir}candidate-bent.json`, expected: EXIT.rejected },
  ];
  let asExpected = true;
  for (const run of runs) {
    if (!args.json)
      io.out(
        `\n== memgate gate --events examples/alpha/events.jsonl --candidate examples/alpha/${run.candidate.split("/").pop()} (${run.title})`,
      );
    const code = await gateCommand({ events, candidate: run.candidate, policy, json: args.json }, io);
    asExpected &&= code === run.expected;
  }
  if (!args.json)
    io.out(
      asExpected
        ? "\ndemo: the honest summary passed and the bent one was refused"
        : "\ndemo: a verdict was not the expected one",
    );
  return asExpected ? EXIT.ok : EXIT.rejected;
}
