import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { MemoryQueue } from "#adapters/embedded/memory-queue.ts";
import { SqliteStore } from "#adapters/embedded/sqlite-store.ts";
import { type ModelOptions, modelNamed } from "#adapters/models/models.ts";
import { appendEvents } from "#app/append.ts";
import type { Deps } from "#app/deps.ts";
import { NO_FAILPOINTS } from "#app/failpoints.ts";
import type { ModelSettings } from "#app/one-prompt.ts";
import { loadPrompt } from "#app/prompts.ts";
import { run } from "#app/run.ts";
import { readInputs, takeSnapshot } from "#app/snapshot.ts";
import { consolidate } from "#domain/consolidator.ts";
import type { ConsolidationOutput } from "#domain/schemas.ts";

/** A small subject with every kind of must-preserve item: numbers, a unit, free text, a conflict, an open task. */
export const SUBJECT_EVENTS = [
  {
    eventId: "e-1",
    kind: "fact",
    source: "user:frank",
    trust: "user",
    text: "The budget is 12,500 USD.",
    assertions: [{ key: "project/budget", value: { quantity: "12500", unit: "USD" }, polarity: "affirmed" }],
  },
  {
    eventId: "e-2",
    kind: "constraint",
    trust: "user",
    text: "Backups must be encrypted and never leave eu-west-1.",
  },
  { eventId: "e-3", kind: "fact", trust: "user", text: "The staging cluster in Frankfurt runs 3 nodes." },
  {
    eventId: "e-4",
    kind: "decision",
    trust: "user",
    text: "We will not use MongoDB.",
    assertions: [{ key: "project/database", value: { entity: "mongodb" }, polarity: "negated" }],
  },
  {
    eventId: "e-5",
    kind: "fact",
    trust: "user",
    text: "Launch is on 2026-12-03.",
    assertions: [{ key: "project/launch", value: { date: "2026-12-03" }, polarity: "affirmed" }],
  },
  {
    eventId: "e-6",
    kind: "fact",
    trust: "user",
    text: "Launch is on 2026-12-10.",
    assertions: [{ key: "project/launch", value: { date: "2026-12-10" }, polarity: "affirmed" }],
  },
  { eventId: "e-7", kind: "task", trust: "user", text: "Send invoice INV-20931 by 2026-12-05." },
];

/** The eight shared realistic logs, each `SUBJECT/events.jsonl` under LOGS. */
export const LOGS = join(import.meta.dirname, "../fixtures/model-answers");
export const LOG_SUBJECTS = [
  "devops-ana",
  "family-assistant",
  "health-coach-sam",
  "legal-team",
  "pm-wei",
  "research-lab",
  "support-bot",
  "travel-lin",
];
/** The four chat-heavy logs, under CHAT_LOGS. */
export const CHAT_LOGS = join(import.meta.dirname, "../fixtures/chat-answers");
export const CHAT_SUBJECTS = ["demo", "mb-emily", "mb-gary", "mb-leo"];

/** A fixture log's events, as appended. */
export function logEvents(subject: string, logs = LOGS): object[] {
  return readFileSync(join(logs, subject, "events.jsonl"), "utf8")
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => JSON.parse(line));
}

let counter = 0;

/** An embedded store in a fresh folder and the pipeline's dependencies with the named model. */
export function modelDeps(
  model: string,
  options: Partial<ModelOptions> & { settings?: ModelSettings } = {},
  overrides: Partial<Deps> = {},
): { deps: Deps; store: SqliteStore; home: string } {
  const home = mkdtempSync(join(tmpdir(), "memgate-models-"));
  const store = SqliteStore.open(home);
  const deps: Deps = {
    events: store,
    alias: store,
    artifacts: store,
    settings: store,
    queue: new MemoryQueue(),
    model: modelNamed(model, {
      settings: { contextTokens: 32_000, maxOutputTokens: 4_096 },
      retry: { attempts: 4, baseDelayMs: 5, maxDelayMs: 20 },
      ...options,
    }),
    prompt: loadPrompt(),
    now: () => new Date("2026-11-30T12:00:00Z"),
    newId: () => `a${++counter}`,
    failpoints: NO_FAILPOINTS,
    generationTimeoutMs: 10_000,
    progress: () => {},
    ...overrides,
  };
  return { deps, store, home };
}

/** What an honest model answers for the subject as it stands: the deterministic restatement. */
export async function honestAnswer(deps: Deps, subject: string): Promise<ConsolidationOutput> {
  const snapshot = await deps.events.snapshot(subject);
  const { context } = await readInputs(deps, subject, snapshot.highWater);
  return consolidate(context);
}

/**
 * A fixture log appended and consolidated by recorded answers (`replay:DIR`), published: its
 * outcome and manifest (a refusal or failure throws, naming the subject).
 */
export async function publishedFromRecordings(
  dir: string,
  subject: string,
  logs = LOGS,
  overrides: Partial<Deps> = {},
) {
  const { deps } = modelDeps(`replay:${dir}`, {}, overrides);
  await appendEvents(deps, subject, logEvents(subject, logs));
  const outcome = await run(deps, await takeSnapshot(deps, subject));
  if (outcome.status !== "PUBLISHED") throw new Error(`${subject}: ${JSON.stringify(outcome)}`);
  return { outcome, manifest: await deps.artifacts.readManifest(subject, outcome.artifactId) };
}
