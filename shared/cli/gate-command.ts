import type { GateReport } from "#domain/gate/index.ts";
import { gateEventLog } from "#domain/gate/index.ts";
import { DEFAULT_TRUST_POLICY } from "#domain/schemas.ts";
import { EventLogError } from "#domain/selector.ts";
import { parseEventLines, parsePolicy } from "#io/event-file.ts";
import { readUserText } from "#io/read-text.ts";
import { InputError } from "#ports/errors.ts";
import { type Command, text } from "./command.ts";
import type { Io } from "./output.ts";
import { EXIT, UsageError } from "./output.ts";

export const GATE_USAGE = `memgate gate --events FILE.jsonl --candidate FILE.json [--policy FILE.json] [--budget TOKENS] [--json]

Checks a candidate summary against the events it claims to compress, offline (no store).
Exit 0 pass, 1 rejected (every reason listed), 2 bad usage or unreadable/invalid events or policy.`;

export interface GateArgs {
  events?: string | undefined;
  candidate?: string | undefined;
  policy?: string | undefined;
  budget?: string | undefined;
  json: boolean;
}

export async function gateCommand(args: GateArgs, io: Io): Promise<number> {
  if (!args.events) throw new UsageError("--events FILE.jsonl is required");
  if (!args.candidate) throw new UsageError("--candidate FILE.json is required");
  let budget: number | undefined;
  if (args.budget !== undefined) {
    budget = Number(args.budget);
    if (!Number.isInteger(budget) || budget <= 0)
      throw new UsageError(`--budget must be a positive whole number of tokens, got "${args.budget}"`);
  }
  const events = parseEventLines(await readUserText(args.events, "events file"), args.events, {
    assignSequence: true,
  });
  const { textSupport, summarySupport, restatementSupport, ...policy } = args.policy
    ? parsePolicy(await readUserText(args.policy, "policy file"), args.policy)
    : {
        ...DEFAULT_TRUST_POLICY,
        textSupport: undefined,
        summarySupport: undefined,
        restatementSupport: undefined,
      };
  const candidateText = await readUserText(args.candidate, "candidate file");
  let report: GateReport;
  try {
    report = gateEventLog(events, policy, candidateText, {
      ...(budget === undefined ? {} : { budget }),
      ...(textSupport === undefined ? {} : { textSupport }),
      ...(summarySupport === undefined ? {} : { summarySupport }),
      ...(restatementSupport === undefined ? {} : { restatementSupport }),
    });
  } catch (error) {
    if (error instanceof EventLogError)
      throw new InputError(`${args.events}: ${error.problems.join("; ")}`, { cause: error });
    throw error;
  }
  io.out(args.json ? JSON.stringify(report) : formatGateReport(report));
  return report.verdict === "pass" ? EXIT.ok : EXIT.rejected;
}

export const GATE_COMMAND: Command = {
  usage: GATE_USAGE,
  options: {
    events: { type: "string" },
    candidate: { type: "string" },
    policy: { type: "string" },
    budget: { type: "string" },
  },
  run: (values, _positionals, io) =>
    gateCommand(
      {
        events: text(values, "events"),
        candidate: text(values, "candidate"),
        policy: text(values, "policy"),
        budget: text(values, "budget"),
        json: values.json === true,
      },
      io,
    ),
};

/** The human report: the verdict, then one line per reason, then what was checked. */
export function formatGateReport(report: GateReport): string {
  const lines: string[] = [];
  const count = report.reasons.length;
  lines.push(
    report.verdict === "pass"
      ? "PASS: the candidate keeps every must-preserve item"
      : `REJECT: ${count} reason${count === 1 ? "" : "s"}`,
  );
  const codeWidth = Math.max(0, ...report.reasons.map((r) => r.code.length));
  const idWidth = Math.max(0, ...report.reasons.map((r) => (r.eventId ?? "-").length));
  for (const r of report.reasons) {
    const where =
      r.key === null ? "" : ` [${r.key}${r.scope && r.scope !== "global" ? ` @ ${r.scope}` : ""}]`;
    lines.push(`  ${r.code.padEnd(codeWidth)}  ${(r.eventId ?? "-").padEnd(idWidth)}  ${r.detail}${where}`);
  }
  for (const warning of report.warnings ?? []) lines.push(`  warning ${warning.code}: ${warning.detail}`);
  const s = report.stats;
  const tokens = s.tokens === null ? "" : `, ${s.tokens} tokens${s.budget === null ? "" : ` of ${s.budget}`}`;
  lines.push(
    `checked ${s.events} events (${s.validInputs} valid inputs), ${s.mustPreserve} must-preserve items, ${s.conflicts} conflicts, ${s.claims} claims, ${s.pending} pending${tokens}`,
  );
  return lines.join("\n");
}
