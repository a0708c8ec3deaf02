import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { appendEvents } from "#app/append.ts";
import { loadPrompt } from "#app/prompts.ts";
import { run } from "#app/run.ts";
import { takeSnapshot } from "#app/snapshot.ts";
import {
  CHAT_LOGS,
  CHAT_SUBJECTS,
  logEvents as events,
  LOGS,
  modelDeps,
  publishedFromRecordings,
  LOG_SUBJECTS as SUBJECTS,
} from "./fixtures.ts";

/**
 * Real answers to the compressing prompts, replayed through the whole pipeline: consolidate-v3 (the
 * first to ask for compression), consolidate-v4 and consolidate-v5, the default (below). Each
 * was written once by a language model given only the request memgate sent over the OpenAI wire
 * (`memgate generate --model record:DIR:openai:…` against scripts/stand-in-model.ts), and recorded
 * under the hash of the prompt it answered: test/fixtures/recorded-v3 holds the records as written,
 * and the requests as received sit beside each log's answers (request-v3.md). A replay finds an
 * answer only when this renderer gives the log the same bytes, so the test also pins the prompt.
 * Seven of eight passed the gate on the first try; pm-wei's first answer restated a source's label
 * (agent:planner) as words no event holds, and its repair, also a real answer, was published.
 */
const RECORDED = join(import.meta.dirname, "../fixtures/recorded-v3");
const RECORDED_V4 = join(import.meta.dirname, "../fixtures/recorded-v4");
const RECORDED_V5 = join(import.meta.dirname, "../fixtures/recorded-v5");
const RECORDED_SEGMENTED = join(import.meta.dirname, "../fixtures/recorded-v3-segmented");

/** Attempts each build took: every answer passed on the first try but one. */
const ATTEMPTS: Record<string, number> = { "pm-wei": 2 };

/** pm-wei's first answer restated its source's label (agent:planner) as words no event holds; its repair was published. */
async function pmWeiRefusedFirst(recorded: string, options = {}) {
  const { deps } = modelDeps(`replay:${recorded}`, {}, options);
  await appendEvents(deps, "pm-wei", events("pm-wei"));
  const outcome = await run(deps, await takeSnapshot(deps, "pm-wei"));
  if (outcome.status !== "PUBLISHED") throw new Error(JSON.stringify(outcome));
  const [refused] = await deps.artifacts.readAttempts("pm-wei", outcome.artifactId);
  expect(refused?.report.reasons.map((r) => [r.code, r.eventId])).toEqual([["unsupported-claim", "wei-12"]]);
}

/** consolidate-v3 is no longer the default: its replays ask for it by name. */
const V3 = { prompt: loadPrompt("consolidate-v3") };

describe("real answers to consolidate-v3, replayed", () => {
  it.each(SUBJECTS)("%s is published from its recorded answer", async (subject) => {
    const { outcome, manifest } = await publishedFromRecordings(RECORDED, subject, LOGS, V3);
    expect(manifest.promptVersion).toBe("consolidate-v3");
    expect(manifest.generation?.attempts).toBe(ATTEMPTS[subject] ?? 1);
    expect(outcome.gate.reasons).toEqual([]);
  });

  it("pm-wei's refused first answer is kept with its reason", () => pmWeiRefusedFirst(RECORDED, V3));

  it("legal-team in a 12,000-token context: five segment-v2 answers and a summary-v2 answer, every one real, publish on the first try", async () => {
    const { deps } = modelDeps(
      `segmented:replay:${RECORDED_SEGMENTED}`,
      { settings: { contextTokens: 12_000, maxOutputTokens: 2_048 } },
      V3,
    );
    await appendEvents(deps, "legal-team", events("legal-team"));
    const outcome = await run(deps, await takeSnapshot(deps, "legal-team"));
    if (outcome.status !== "PUBLISHED") throw new Error(JSON.stringify(outcome));
    const manifest = await deps.artifacts.readManifest("legal-team", outcome.artifactId);
    expect(manifest.promptVersion).toBe("segment-v2+summary-v2");
    expect(manifest.generation?.segments).toEqual({ total: 5, reused: 0 });
    expect(manifest.generation?.attempts).toBe(1);
    // Its open tasks, some with assertions restated by code, each reached a pending item (the gate's
    // pending-missing would have refused it otherwise).
    expect(outcome.gate.stats.openTasks).toBeGreaterThan(0);
    expect(outcome.gate.reasons).toEqual([]);
  });
});

/**
 * Real answers to consolidate-v4, recorded the same way (test/fixtures/recorded-v4; each request
 * beside its log's answers as request-v4.md): the eight shared logs and the four chat-heavy ones
 * (test/fixtures/chat-answers). Every one passed the gate on the first try.
 */
const ALL_LOGS = [
  ...SUBJECTS.map((subject) => [subject, LOGS] as const),
  ...CHAT_SUBJECTS.map((subject) => [subject, CHAT_LOGS] as const),
];

/** consolidate-v4 is no longer the default: its replays ask for it by name. */
const V4 = { prompt: loadPrompt("consolidate-v4") };
const V5 = { prompt: loadPrompt("consolidate-v5") };

describe("real answers to consolidate-v4, replayed", () => {
  it.each(ALL_LOGS)("%s is published from its recorded answer on the first try", async (subject, logs) => {
    const { outcome, manifest } = await publishedFromRecordings(RECORDED_V4, subject, logs, V4);
    expect(manifest.promptVersion).toBe("consolidate-v4");
    expect(manifest.generation?.attempts).toBe(1);
    expect(outcome.gate.reasons).toEqual([]);
  });
});

/**
 * Real answers to consolidate-v5 (the default before consolidate-v7), recorded the same way (test/fixtures/recorded-v5;
 * requests as request-v5.md) for the same twelve logs. Eleven passed on the first try; pm-wei's
 * first answer again wrote its source's label (agent:planner) as words no event holds, and its
 * repair, also a real answer, was published.
 */
describe("real answers to consolidate-v5, replayed", () => {
  it.each(ALL_LOGS)("%s is published from its recorded answers", async (subject, logs) => {
    const { outcome, manifest } = await publishedFromRecordings(RECORDED_V5, subject, logs, V5);
    expect(manifest.promptVersion).toBe("consolidate-v5");
    expect(manifest.generation?.attempts).toBe(ATTEMPTS[subject] ?? 1);
    expect(outcome.gate.reasons).toEqual([]);
  });

  it("pm-wei's refused first answer is kept with its reason", () => pmWeiRefusedFirst(RECORDED_V5, V5));
});
