import { parseArgs } from "node:util";
import { MODELS } from "#adapters/models/models.ts";
import { env, environmentProblem } from "#runtime/config.ts";
import { classifyError, type ErrorKind } from "#runtime/errors.ts";
import { ARTIFACT_COMMANDS } from "./artifact-commands.ts";
import { AUDIT_COMMAND } from "./audit-command.ts";
import type { Command, Values } from "./command.ts";
import { CONSOLIDATION_COMMANDS } from "./consolidation-commands.ts";
import { DEMO_COMMAND } from "./demo-command.ts";
import { EVAL_COMMAND } from "./eval-command.ts";
import { EVENT_COMMANDS } from "./event-commands.ts";
import { GATE_COMMAND } from "./gate-command.ts";
import type { Io } from "./output.ts";
import { EXIT, MEMGATE_VERSION, processIo, UsageError } from "./output.ts";
import { RECALL_COMMAND } from "./recall-command.ts";
import { SERVER_COMMANDS } from "./server-commands.ts";
import { SETTINGS_COMMANDS } from "./settings-commands.ts";

const USAGE = `memgate: consolidates agent memory into summaries that cannot silently change meaning

Usage: memgate <command> [options]

Commands:
  gate         check a candidate summary against its events, offline (no store)
  append       append memory events (JSON Lines) to a subject
  revoke       revoke an event: summaries that used it go STALE, recall falls back to raw
  clock        the subject's highWater, inputEpoch and alias
  snapshot     the snapshot message (clock and alias in one read) [--through H]
  generate     make a candidate summary from a snapshot and gate it (not readable yet)
  prompt       the rendered prompt(s) a model would be sent for a snapshot (nothing is sent)
  publish      the switch: publish a candidate through the alias compare-and-set
  run          generate + publish (the worker)
  consolidate  snapshot + run
  recall       the summary and its tail, or the raw valid events and why
  artifacts    every artifact of a subject with its status
  lineage      an artifact's derivation graph (--format prov-json|dot)
  review       SHADOW artifacts beside the current summary, with a must-preserve checklist
  approve      publish a reviewed SHADOW artifact
  recover      rebuild from the current valid inputs and roll forward through the CAS
  eval         measure consolidation on a dataset: key-fact recall, false new facts, conflicts, tokens
  audit        re-check what recall serves against the raw layer; contain what is stale or false
  sweep        request (and on the embedded store run) every rebuild that committed state calls for
  migrate      move subjects created before selector v3 onto it (the embedded store does it on open)
  policy       a subject's trust policy (minTrust, blocked sources, latest rules); raising it marks summaries STALE
  settings     the store's publish mode (live|shadow), recall bypass (on|off) and default latest rules
  serve        the HTTP API over the store, with the worker and the sweep in process
  mcp          memgate as an MCP server over stdio (tools remember, recall, forget, consolidate, explain)
  demo         the embedded walk-through (what npm start runs)

Store commands take --home DIR (default $MEMGATE_HOME or ./.memgate) or --store aws.

Run "memgate <command> --help" for a command's options. Every command takes --json.
Exit codes: 0 ok, 1 gate rejected, 2 bad usage or input, 3 store or engine failed (safe to retry),
4 publish refused, 5 generation failed. MEMGATE_DEBUG=1 prints the stack of an unexpected error.`;

/** Every command, by the group its file holds. */
const COMMANDS: Record<string, Command> = {
  gate: GATE_COMMAND,
  ...EVENT_COMMANDS,
  ...CONSOLIDATION_COMMANDS,
  recall: RECALL_COMMAND,
  ...ARTIFACT_COMMANDS,
  ...SETTINGS_COMMANDS,
  ...SERVER_COMMANDS,
  audit: AUDIT_COMMAND,
  eval: EVAL_COMMAND,
  demo: DEMO_COMMAND,
};

/** What each flag takes and does, one line each, for `memgate <command> --help`. */
const FLAG_HELP: Record<string, [string, string]> = {
  home: ["DIR", "the embedded store's folder (default $MEMGATE_HOME or ./.memgate)"],
  store: ["KIND", "embedded (default) or aws (MEMGATE_TABLE, MEMGATE_BUCKET, MEMGATE_QUEUE_URL)"],
  model: ["NAME", "the consolidating model (listed below)"],
  prompt: ["VERSION", "the prompt version under prompts/ (default consolidate-v8)"],
  budget: ["TOKENS", "token budget of the summary (cl100k_base); low-value inputs stay cold"],
  "timeout-ms": ["MS", "deadline of one generation (default 30000, $MEMGATE_GENERATION_TIMEOUT_MS)"],
  through: ["H", "cap the snapshot at sequence H (not above the log, not below the alias)"],
  format: ["FORMAT", "lineage: prov-json (default) or dot; recall: json (default) or text (CONTRACT §5a)"],
  selector: ["VERSION", "the selector to rebuild with: v3 (default), v2 or v1"],
  "min-trust": ["LEVEL", "the lowest trust that counts: untrusted, tool, user or verified"],
  block: ["SOURCE", "block a source (a trailing * blocks a prefix); repeatable"],
  unblock: ["SOURCE", "unblock a source; repeatable"],
  latest: ["RULE", 'a latest rule: a key glob ("stock.*") or {"key": glob, "scope": glob}; repeatable'],
  "drop-latest": ["RULE", "remove a latest rule; repeatable"],
  "latest-default": ["", "drop the subject's own latest rules: the store default applies"],
  "publish-mode": ["MODE", "live (publish through the CAS) or shadow (wait for review)"],
  bypass: ["on|off", "recall serves raw events only while on"],
  "rebuild-after": ["EVENTS", "rebuild a summary once this many events are not covered (default 50)"],
  run: ["", "also run the requested rebuilds here (on AWS that is the worker's job)"],
  cursor: ["C", "the nextCursor of the previous answer: the next page of events"],
  scope: ["S", "only that scope's claims, conflicts and events, and the global ones"],
  query: [
    "TEXT",
    "the question to answer: ranks the summary's claims and its inputs for it (its index, never the log)",
  ],
  port: ["PORT", "port to listen on (default 8787; 0 picks a free one)"],
  host: ["ADDRESS", "address to bind (default 127.0.0.1: loopback only)"],
  subject: ["SUBJECT", "the subject a tool call means when it names none"],
  sample: ["N", "audit or evaluate N subjects (a sample chosen by --seed)"],
  dataset: ["FILE", "MemoryEvent JSON Lines with a subject field"],
  gold: [
    "FILE",
    "gold facts, JSON Lines: subject, key, scope, value, polarity (or mention), evidence, contested",
  ],
  seed: ["S", "the seed of the sample (the same seed, the same subjects)"],
  token: ["T", "require Authorization: Bearer T on every route but /healthz (or $MEMGATE_TOKEN)"],
  "role-token": [
    "ROLE=T",
    "also accept T for the routes of ROLE: agent, reviewer or admin (repeatable; or $MEMGATE_ROLE_TOKENS)",
  ],
  events: ["FILE", "MemoryEvent JSON Lines"],
  candidate: ["FILE", "the candidate summary (ConsolidationOutput JSON)"],
  policy: ["FILE", 'trust policy JSON ({"minTrust": …, "blockedSources": […]})'],
  json: ["", "machine-readable output"],
  help: ["", "this help"],
};

function commandHelp(command: Command): string {
  const rows = [...Object.keys(command.options), "json", "help"].map((flag) => {
    const [argument, text] = FLAG_HELP[flag] ?? ["", ""];
    return [`--${flag}${argument ? ` ${argument}` : ""}`, text] as const;
  });
  const width = Math.max(...rows.map(([left]) => left.length));
  const lines = rows.map(([left, text]) => `  ${left.padEnd(width)}  ${text}`.trimEnd());
  const models =
    "model" in command.options
      ? `\n\nModels: deterministic-v1 (default); openai:MODEL (OPENAI_BASE_URL, OPENAI_API_KEY); bedrock:MODEL_ID (AWS credentials, region, AWS_ENDPOINT_URL_BEDROCK_RUNTIME); segmented:INNER; replay:DIR; record:DIR:INNER.\nSizes: MEMGATE_CONTEXT_TOKENS (default 32000), MEMGATE_MAX_OUTPUT_TOKENS (default 4096); repair attempts: MEMGATE_REPAIR_ATTEMPTS (default 2).\nTest doubles: ${Object.keys(
          MODELS,
        )
          .filter((name) => name !== "deterministic-v1")
          .join(", ")}`
      : "";
  return `${command.usage}\n\nOptions:\n${lines.join("\n")}${models}`;
}

/** Exit codes of CONTRACT §5 by what went wrong (1, the gate's refusal, is never an error). */
const EXIT_CODES: Record<ErrorKind, number> = {
  "bad-input": EXIT.badInput,
  "not-found": EXIT.badInput,
  "write-once-conflict": EXIT.badInput,
  "publish-refused": EXIT.publishRefused,
  "generation-failed": EXIT.generationFailed,
  contention: EXIT.engineFailed,
  throttled: EXIT.engineFailed,
  unavailable: EXIT.engineFailed,
  unexpected: EXIT.engineFailed,
};

/** One line for an unexpected failure: its kind and message, and how to see more. */
function describeFailure(error: unknown): string {
  const kind = error instanceof Error ? error.name : "error";
  const message = error instanceof Error ? error.message : String(error);
  const line = message.split("\n")[0] ?? "";
  return `${kind}: ${line.length > 300 ? `${line.slice(0, 300)}…` : line} (the store or an engine failed; safe to retry${env.MEMGATE_DEBUG === "1" ? "" : "; MEMGATE_DEBUG=1 shows the stack"})`;
}

/** The error's one line on stderr (with the usage line for a usage mistake); its exit code. */
function reportError(name: string, command: Command, error: unknown, io: Io): number {
  const { kind, message } = classifyError(error);
  switch (kind) {
    case "bad-input":
    case "not-found":
    case "write-once-conflict":
      io.err(
        error instanceof UsageError
          ? `memgate ${name}: ${message}\nusage: ${command.usage.split("\n")[0]}`
          : `memgate ${name}: ${message}`,
      );
      break;
    case "publish-refused":
    case "contention":
      io.err(`memgate: ${message}`);
      break;
    case "generation-failed":
      io.err(`memgate: generation failed: ${message}`);
      break;
    default:
      // The store, an engine or a defect: one line, exit 3 (1 is the gate's).
      io.err(`memgate ${name}: ${describeFailure(error)}`);
      if (env.MEMGATE_DEBUG === "1" && error instanceof Error && error.stack) io.err(error.stack);
  }
  return EXIT_CODES[kind];
}

/** Runs one memgate command line; returns the exit code. Never throws for user mistakes. */
export async function main(argv: readonly string[], io: Io = processIo): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === "--help" || name === "-h" || name === "help") {
    io.out(USAGE);
    return name === undefined ? EXIT.badInput : EXIT.ok;
  }
  if (name === "--version") {
    io.out(`memgate ${MEMGATE_VERSION}`);
    return EXIT.ok;
  }
  const command = COMMANDS[name];
  if (!command) {
    io.err(`memgate: unknown command "${name}"; run "memgate --help" for the list`);
    return EXIT.badInput;
  }
  if (environmentProblem !== null) {
    io.err(`memgate ${name}: ${environmentProblem}`);
    return EXIT.badInput;
  }
  let values: Values;
  let positionals: string[];
  try {
    ({ values, positionals } = parseArgs({
      args: [...rest],
      options: { ...command.options, json: { type: "boolean" }, help: { type: "boolean", short: "h" } },
      allowPositionals: true,
      strict: true,
    }));
  } catch (error) {
    io.err(
      `memgate ${name}: ${error instanceof Error ? error.message : String(error)}\nusage: ${command.usage.split("\n")[0]}`,
    );
    return EXIT.badInput;
  }
  if (values.help) {
    io.out(commandHelp(command));
    return EXIT.ok;
  }
  try {
    return await command.run(values, positionals, io);
  } catch (error) {
    return reportError(name, command, error, io);
  }
}
