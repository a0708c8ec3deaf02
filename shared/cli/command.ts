import type { Deps } from "#app/deps.ts";
import { Snapshot, type Snapshot as SnapshotMessage, Subject } from "#domain/schemas.ts";
import type { SelectorVersion } from "#domain/validity.ts";
import { readUserText } from "#io/read-text.ts";
import { InputError } from "#ports/errors.ts";
import { checkModelName, type EmbeddedRuntimeOptions, openEmbeddedRuntime } from "#runtime/embedded.ts";
import { describeIssues, firstIssue } from "#runtime/issues.ts";
import type { Io } from "./output.ts";
import { UsageError } from "./output.ts";

/** The flags of one command line, as node:util's parseArgs gives them. */
export type Values = Record<string, string | boolean | string[] | undefined>;

export type Options = Record<string, { type: "string" | "boolean"; multiple?: boolean }>;

/** One `memgate` command: its usage text, its flags and what it does (the exit code). */
export interface Command {
  usage: string;
  options: Options;
  run(values: Values, positionals: string[], io: Io): Promise<number>;
}

/** Flags every store command takes. */
export const STORE_OPTIONS = {
  home: { type: "string" },
  store: { type: "string" },
  model: { type: "string" },
  prompt: { type: "string" },
  budget: { type: "string" },
  "timeout-ms": { type: "string" },
} as const;

/** A store command: the store flags beside its own. */
export function storeCommand(usage: string, options: Options, run: Command["run"]): Command {
  return { usage, options: { ...STORE_OPTIONS, ...options }, run };
}

/** A flag that takes text (undefined when not given). */
export function text(values: Values, flag: string): string | undefined {
  const value = values[flag];
  return typeof value === "string" ? value : undefined;
}

/** A repeatable flag (`--block A --block B`). */
export function texts(values: Values, flag: string): string[] {
  const value = values[flag];
  return Array.isArray(value) ? value : typeof value === "string" ? [value] : [];
}

/** A whole-number flag, digits only (no exponent, sign or fraction), at most `max`. */
export function boundedInt(values: Values, flag: string, max: number): number | undefined {
  const value = values[flag];
  if (value === undefined) return undefined;
  if (typeof value !== "string" || !/^\d{1,15}$/.test(value) || Number(value) > max)
    throw new UsageError(`--${flag} must be a whole number from 0 to ${max}, got "${String(value)}"`);
  return Number(value);
}

/** Far above any summary's budget, far below where token counting or JSON numbers misbehave. */
const MAX_BUDGET_TOKENS = 100_000_000;
const MAX_TIMEOUT_MS = 3_600_000;

export interface RuntimeNeeds {
  selectorVersion?: SelectorVersion;
  /** The command only reads: on a missing embedded home it says so and creates nothing. */
  readOnly?: boolean;
  /** Only prompts are rendered: no model is called. */
  renderOnly?: boolean;
  /** The process serves requests for as long as it runs (serve, mcp). */
  longRunning?: boolean;
}

/**
 * Opens the embedded runtime the flags describe (the store, the model, the prompt), runs `work`
 * (given the options it was opened with, for a thread that opens its own), always closes. Every flag is checked before a store is opened: a refused command creates nothing.
 */
export async function withRuntime<T>(
  values: Values,
  io: Io,
  work: (deps: Deps, options: EmbeddedRuntimeOptions) => Promise<T>,
  needs: RuntimeNeeds = {},
): Promise<T> {
  const store = text(values, "store") ?? "embedded";
  if (store !== "embedded" && store !== "aws")
    throw new UsageError(`--store must be embedded or aws, got "${store}"`);
  const budget = boundedInt(values, "budget", MAX_BUDGET_TOKENS);
  const timeoutMs = boundedInt(values, "timeout-ms", MAX_TIMEOUT_MS);
  const model = text(values, "model");
  if (model !== undefined && !needs.renderOnly) checkModelName(model);
  const options: EmbeddedRuntimeOptions = {
    store,
    home: text(values, "home"),
    mustExist: needs.readOnly === true,
    model,
    prompt: text(values, "prompt"),
    budget,
    timeoutMs,
    selectorVersion: needs.selectorVersion,
    renderOnly: needs.renderOnly,
    longRunning: needs.longRunning,
    progress: (line) => io.err(`memgate: ${line}`),
  };
  const runtime = await openEmbeddedRuntime(options);
  try {
    return await work(runtime.deps, options);
  } finally {
    runtime.close();
  }
}

/** The SUBJECT argument under the contract's rule (1–128 characters after NFC, no control characters). */
export function subjectArg(positionals: string[], index = 0): string {
  const parsed = Subject.safeParse(need(positionals, index, "SUBJECT"));
  if (!parsed.success) throw new UsageError(`SUBJECT: ${firstIssue(parsed.error, "SUBJECT").message}`);
  return parsed.data;
}

/** A positional argument the command cannot do without. */
export function need(positionals: string[], index: number, what: string): string {
  const value = positionals[index];
  if (value === undefined || value === "") throw new UsageError(`${what} is required`);
  return value;
}

/** A snapshot message from a file (what `memgate snapshot` printed). */
export async function readSnapshot(path: string): Promise<SnapshotMessage> {
  let json: unknown;
  try {
    json = JSON.parse(await readUserText(path, "snapshot file"));
  } catch (error) {
    if (error instanceof InputError) throw error;
    throw new InputError(`${path}: not valid JSON`, { cause: error });
  }
  const parsed = Snapshot.safeParse(json);
  if (!parsed.success) throw new InputError(`${path}: ${describeIssues(parsed.error)}`);
  return parsed.data;
}

/** The result as JSON with --json, else the human line. */
export function print(io: Io, values: Values, json: unknown, human: string): void {
  io.out(values.json === true ? JSON.stringify(json) : human);
}
