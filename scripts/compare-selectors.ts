import { readdirSync, readFileSync } from "node:fs";
import { consolidate } from "#domain/consolidator.ts";
import { buildGateContext, gateCandidateText } from "#domain/gate/index.ts";
import { DEFAULT_TRUST_POLICY } from "#domain/schemas.ts";
import { checkEventLog, selectInputs } from "#domain/selector.ts";
import { parseEventLines } from "#io/event-file.ts";

const dir = process.argv[2] ?? "test/fixtures/model-answers";
for (const name of readdirSync(dir).filter((n) => !n.endsWith(".md"))) {
  const events = checkEventLog(
    parseEventLines(readFileSync(`${dir}/${name}/events.jsonl`, "utf8"), name, { assignSequence: true }),
  );
  const H = events.length;
  for (const v of ["v1", "v2"] as const) {
    const s = selectInputs(events, H, DEFAULT_TRUST_POLICY, v);
    console.log(
      name,
      v,
      "valid",
      s.validInputs.length,
      "conflicts",
      s.conflicts.map((c) => `${c.key}@${c.scope}[${c.members.join(",")}]`).join(" | "),
    );
  }
  const ctx = buildGateContext(selectInputs(events, H, DEFAULT_TRUST_POLICY), events.length);
  const det = gateCandidateText(ctx, JSON.stringify(consolidate(ctx)));
  const real = gateCandidateText(ctx, readFileSync(`${dir}/${name}/answer.json`, "utf8"));
  console.log(
    "  deterministic:",
    det.verdict,
    det.reasons.map((r) => `${r.code}:${r.eventId}`).join(","),
    " model:",
    real.verdict,
    real.reasons.map((r) => `${r.code}:${r.eventId ?? r.key}`).join(","),
  );
}
