import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { appendEvents } from "#app/append.ts";
import { renderConsolidation } from "#app/prompt-render.ts";
import { loadPrompt } from "#app/prompts.ts";
import { run } from "#app/run.ts";
import { readInputs, takeSnapshot } from "#app/snapshot.ts";
import {
  honestSegmentAnswer,
  type ModelServer,
  type ReceivedRequest,
  startModelServer,
} from "#harness/model-servers.ts";
import { modelDeps } from "./fixtures.ts";

/**
 * The compressing prompts (consolidate-v3, segment-v2, summary-v2): chosen by the prompt version
 * (one prompt and segmented alike), the checklist names the words each cue class counts in the
 * source itself, and the older templates keep rendering as before (render-determinism pins v2).
 */
const EVENTS = [
  {
    eventId: "w-1",
    kind: "constraint",
    trust: "user",
    text: "外包报价不要超过每人天2,800元；超过的话必须找财务的周总监审批。",
  },
  { eventId: "w-2", kind: "preference", trust: "user", text: "跟外包沟通一律走企业微信群，不要私聊。" },
  {
    eventId: "w-3",
    kind: "constraint",
    trust: "user",
    text: "Never run VACUUM FULL on ledger_entries during business hours (08:00-20:00 Lisbon).",
    assertions: [
      {
        key: "db.vacuum_full_in_business_hours",
        scope: "db:payments",
        value: { bool: true },
        polarity: "negated",
      },
    ],
  },
  { eventId: "w-4", kind: "task", trust: "user", text: "SRE-1452: ask for the 8 TB quota by Dec 18." },
];

const isSummary = (request: ReceivedRequest) => request.system.includes("SummaryAnswer");

describe("the compressing prompts", () => {
  let server: ModelServer;
  beforeAll(async () => {
    server = await startModelServer("openai", (request) =>
      isSummary(request)
        ? { answer: { summary: "Vendor quotes, ledger maintenance and an open quota task." } }
        : { answer: honestSegmentAnswer(request.prompt) },
    );
  });
  afterAll(() => server.close());

  it("consolidate-v3 names each class by what its words mean and lists the words the source holds", async () => {
    const { deps } = modelDeps("deterministic-v1");
    await appendEvents(deps, "v3", EVENTS);
    const { context } = await readInputs(deps, "v3", (await takeSnapshot(deps, "v3")).highWater);
    const { prompt } = renderConsolidation(loadPrompt("consolidate-v3"), context);
    expect(prompt).not.toMatch(/\{\{\w+\}\}/);
    // 每人天 (per person-day) holds the every word 每, as the gate counts it.
    expect(prompt).toContain(
      "- w-1: its restatement keeps 2,800; negations 1 (不要); at-least / more-than words 2 (超过); must words 1 (必须); every words 1 (每); if / unless words 1 (的话)\n",
    );
    // 不 inside 不要 is part of that negation, not one of its own.
    expect(prompt).toContain("- w-2: its restatement keeps negations 1 (不要)\n");
    expect(prompt).toContain(
      '- w-3: key "db.vacuum_full_in_business_hours", scope "db:payments", value {"bool":true}, negated',
    );
    // What the whole-event check asks of w-3's claims beyond the negated rule: the window's numbers.
    expect(prompt).toContain("- w-3: the text of its claims keeps 08, 00, 20\n");
    expect(prompt).toContain("- w-4: an open task: a pending item");
    expect(prompt).toContain("- at-most words: at most, no more than, not more than, up to,");
    expect(prompt).toContain("aim for at most a third of the inputs");
    expect(renderConsolidation(loadPrompt("consolidate-v3"), context, { budget: 900 }).prompt).toContain(
      "The answer must fit 900 tokens",
    );
    // The older template keeps its own wording of the same checklist.
    expect(renderConsolidation(loadPrompt("consolidate-v2"), context).prompt).toContain(
      "- w-1: restate its text; keep 2,800; keep the same count of negations (1), lower bounds (2), strong modal words (1)",
    );
  });

  it("segmented generation with consolidate-v3 asks segment-v2 and summary-v2, restating only what a structured event's text adds", async () => {
    const { deps } = modelDeps(
      "segmented:openai:small-model",
      {
        openAiBaseUrl: server.url,
        openAiApiKey: "sk-test",
        settings: { contextTokens: 8192, maxOutputTokens: 1024 },
      },
      { prompt: loadPrompt("consolidate-v3"), generationTimeoutMs: 60_000 },
    );
    await appendEvents(deps, "v3", EVENTS);
    const before = server.requests.length;
    const outcome = await run(deps, await takeSnapshot(deps, "v3"));
    expect(outcome.status).toBe("PUBLISHED");
    if (outcome.status !== "PUBLISHED") return;
    const sent = server.requests.slice(before);
    const segment = sent.find((request) => !isSummary(request) && request.prompt.includes('"id":"w-3"'));
    expect(segment?.system).toContain("memgate segment-v2");
    expect(segment?.prompt).toContain(
      // The window of "during business hours (08:00-20:00)" is what the whole-event check asks its claims to keep.
      "- w-3: its assertions are restated exactly elsewhere: restate what its text adds to them, keeping 08, 00, 20",
    );
    expect(sent.find(isSummary)?.system).toContain("memgate summary-v2");
    const manifest = await deps.artifacts.readManifest("v3", outcome.artifactId);
    expect(manifest.promptVersion).toBe("segment-v2+summary-v2");
  });
});
