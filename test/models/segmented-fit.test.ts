import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { appendEvents } from "#app/append.ts";
import type { ModelSettings } from "#app/one-prompt.ts";
import { checklistStyle, promptTokens, segmentChecklistByEvent } from "#app/prompt-render.ts";
import { loadPrompt, segmentedTemplates } from "#app/prompts.ts";
import { run } from "#app/run.ts";
import { answerNeed, answerRoom, fitSegment, fitSummary, planSegments } from "#app/segment-plan.ts";
import { segmentedEvents } from "#app/segmented.ts";
import { readInputs, takeSnapshot } from "#app/snapshot.ts";
import type { GateReason } from "#domain/gate/index.ts";
import { inputRefs, inputRoot, sha256 } from "#domain/hashing.ts";
import type { Claim, SequencedEvent } from "#domain/schemas.ts";
import { countTokens } from "#domain/tokens.ts";
import {
  honestSegmentAnswer,
  type ModelServer,
  promptEvents,
  type ReceivedRequest,
  startModelServer,
} from "#harness/model-servers.ts";
import { CHAT_LOGS, CHAT_SUBJECTS, logEvents as events, LOG_SUBJECTS, LOGS, modelDeps } from "./fixtures.ts";

/**
 * Segmented builds in the small contexts local models run at (2,048 and 4,096 tokens), answers up
 * to the default 4,096: every prompt, the summary's too, fits with the room its answer is given; a
 * segment that would not is split; one event too big alone is named with the context that holds it.
 * The model is honest and scripted over the real OpenAI wire: it restates exactly the events of the
 * prompt it is sent (parsed from the request), so plan, render, send, merge, gate and publish all run.
 */
const SHARED = LOG_SUBJECTS.map((subject) => [subject, LOGS] as const);
const CHAT = CHAT_SUBJECTS.map((subject) => [subject, CHAT_LOGS] as const);

const isSummary = (request: ReceivedRequest) => request.system.includes("SummaryAnswer");
const HONEST_SUMMARY = { summary: "Memory notes are kept as stated." };

/** A runbook with one event too big for a 2,048-token context on its own. */
const RUNBOOK = [
  { eventId: "r-1", kind: "fact", trust: "user", text: "The cluster has 60 nodes." },
  {
    eventId: "r-2",
    kind: "constraint",
    trust: "user",
    text: Array.from(
      { length: 60 },
      (_, i) =>
        `Rule ${i + 1}: the on-call engineer must not restart node n${i + 1} between 09:00 and 17:00 UTC.`,
    ).join(" "),
  },
  { eventId: "r-3", kind: "fact", trust: "user", text: "Node n7 runs the billing jobs." },
];

describe("segmented builds in small contexts, over the wire", () => {
  let server: ModelServer;
  beforeAll(async () => {
    server = await startModelServer("openai", (request) =>
      isSummary(request) ? { answer: HONEST_SUMMARY } : { answer: honestSegmentAnswer(request.prompt) },
    );
  });
  afterAll(() => server.close());

  const open = (settings: ModelSettings) =>
    modelDeps(
      "segmented:openai:small-model",
      { openAiBaseUrl: server.url, openAiApiKey: "sk-test", settings },
      { generationTimeoutMs: 120_000 },
    ).deps;

  /** The requests a build sent, each within the context with the answer room it asked for. */
  function expectEveryPromptFits(requests: readonly ReceivedRequest[], settings: ModelSettings) {
    for (const request of requests) {
      const room = Number(request.body.max_tokens);
      expect(room).toBeGreaterThan(0);
      expect(room).toBeLessThanOrEqual(settings.maxOutputTokens);
      expect(countTokens(request.system) + countTokens(request.prompt) + room).toBeLessThanOrEqual(
        settings.contextTokens,
      );
    }
  }

  const folder = new Map<string, string>([...SHARED, ...CHAT]);
  it.each(
    [...folder.keys()].flatMap((subject) => [
      [subject, 4096],
      [subject, 2048],
    ]),
  )(
    "%s in a %i-token context: every prompt fits and the honest answers publish on the first try",
    async (subject, contextTokens) => {
      const settings = { contextTokens: Number(contextTokens), maxOutputTokens: 4096 };
      const deps = open(settings);
      await appendEvents(
        deps,
        String(subject),
        events(String(subject), folder.get(String(subject)) as string),
      );
      const before = server.requests.length;
      const snapshot = await takeSnapshot(deps, String(subject));
      const outcome = await run(deps, snapshot);
      if (outcome.status !== "PUBLISHED") throw new Error(`${subject}: ${JSON.stringify(outcome)}`);
      const requests = server.requests.slice(before);
      expectEveryPromptFits(requests, settings);
      expect(requests.filter(isSummary)).toHaveLength(1);

      // Every event a model restates reaches exactly one segment, and each segment is recorded under
      // the input root of exactly its events and the hash of exactly the prompt sent.
      const manifest = await deps.artifacts.readManifest(String(subject), outcome.artifactId);
      expect(manifest.generation?.attempts).toBe(1);
      const { context } = await readInputs(deps, String(subject), snapshot.highWater);
      const byId = new Map(context.selection.validInputs.map((event) => [event.eventId, event]));
      const segments = requests.filter((request) => !isSummary(request));
      expect(manifest.generation?.segments).toEqual({ total: segments.length, reused: 0 });
      const sent = segments.flatMap((request) => promptEvents(request.prompt).map((event) => event.id));
      expect(sent.sort()).toEqual(
        segmentedEvents(context)
          .map((event) => event.eventId)
          .sort(),
      );
      const recorded = new Map(
        (manifest.generation?.calls ?? []).map((call) => [call.promptHash, call.segment ?? "summary"]),
      );
      for (const request of segments) {
        const own = promptEvents(request.prompt).map((event) => byId.get(event.id) as SequencedEvent);
        expect(recorded.get(sha256(`${request.system}\n\n${request.prompt}`))).toBe(
          inputRoot(inputRefs(own)),
        );
      }
    },
  );

  it("an event too big for a segment of its own is named with the context that would hold it, and that context builds", async () => {
    const small = open({ contextTokens: 2048, maxOutputTokens: 4096 });
    await appendEvents(small, "runbook", RUNBOOK);
    const failure = await run(small, await takeSnapshot(small, "runbook")).then(
      () => undefined,
      (error: Error) => error.message,
    );
    const needed = /\(MEMGATE_CONTEXT_TOKENS\) holds: set it to at least (\d+)$/.exec(failure ?? "");
    expect(failure).toMatch(
      /^event r-2 does not fit a segment of its own: .* more than the context of 2048 \(MEMGATE_CONTEXT_TOKENS\) holds/,
    );
    expect(Number(needed?.[1])).toBeGreaterThan(2048);

    const settings = { contextTokens: Number(needed?.[1]), maxOutputTokens: 4096 };
    const enough = open(settings);
    await appendEvents(enough, "runbook", RUNBOOK);
    const before = server.requests.length;
    const outcome = await run(enough, await takeSnapshot(enough, "runbook"));
    expect(outcome.status).toBe("PUBLISHED");
    expectEveryPromptFits(server.requests.slice(before), settings);
  });
});

describe("segment sizing", () => {
  const segmentTemplate = loadPrompt(segmentedTemplates(loadPrompt().version).segment);
  const summaryTemplate = loadPrompt(segmentedTemplates(loadPrompt().version).summary);

  async function logContext(subject: string, log: readonly object[]) {
    const deps = open();
    await appendEvents(deps, subject, log);
    const snapshot = await takeSnapshot(deps, subject);
    const { context } = await readInputs(deps, subject, snapshot.highWater);
    return { context, checklist: segmentChecklistByEvent(context, checklistStyle(segmentTemplate)) };
  }
  const open = () => modelDeps("deterministic-v1").deps;

  it("a small context cuts a log into more segments, each fitting with the room its answer needs, its events all there in order", async () => {
    const { context, checklist } = await logContext("support-bot", events("support-bot", LOGS));
    const logEvents = segmentedEvents(context);
    const large = planSegments(segmentTemplate, checklist, logEvents, {
      contextTokens: 32_000,
      maxOutputTokens: 4096,
    });
    const small = planSegments(segmentTemplate, checklist, logEvents, {
      contextTokens: 2048,
      maxOutputTokens: 4096,
    });
    expect(small.length).toBeGreaterThan(large.length);
    for (const segment of small) {
      expect(segment.answerTokens).toBe(
        answerRoom({ contextTokens: 2048, maxOutputTokens: 4096 }, segment.rendered),
      );
      expect(segment.answerTokens).toBeGreaterThanOrEqual(answerNeed(segment.events));
      expect(promptTokens(segment.rendered) + segment.answerTokens).toBeLessThanOrEqual(2048);
    }
    expect(small.flatMap((segment) => segment.events)).toEqual(logEvents);
  });

  it("on repair, a segment shows the reasons about its own events, fewer when they leave its answer no room", async () => {
    const { context, checklist } = await logContext("legal-team", events("legal-team", LOGS));
    const [first, second] = segmentedEvents(context) as [SequencedEvent, SequencedEvent];
    const reasons: GateReason[] = [first, second].flatMap((event) =>
      Array.from({ length: 40 }, (_, i) => ({
        code: "unsupported-claim" as const,
        key: null,
        scope: null,
        eventId: event.eventId,
        detail: `the claim's words ${i} "restated beyond what the event says, at some length" are in none of its events`,
      })),
    );
    const repair = { request: { attempt: 2, previous: "{}", reasons }, reasons };
    const settings = { contextTokens: 2048, maxOutputTokens: 4096 };
    const fitted = fitSegment(segmentTemplate, checklist, [first, second], settings, repair);
    expect(fitted.map((segment) => segment.events.map((event) => event.eventId))).toEqual([
      [first.eventId],
      [second.eventId],
    ]);
    for (const [index, segment] of fitted.entries()) {
      const own = [first, second][index] as SequencedEvent;
      const other = [second, first][index] as SequencedEvent;
      expect(segment.rendered.prompt).toContain(`unsupported-claim (event ${own.eventId})`);
      expect(segment.rendered.prompt).not.toContain(`(event ${other.eventId})`);
      expect(segment.rendered.prompt).toMatch(/and \d+ more reasons of these kinds/);
      expect(promptTokens(segment.rendered) + segment.answerTokens).toBeLessThanOrEqual(2048);
    }
  });

  it("an event too big alone names what would hold it: the context, the answer cap, or both", async () => {
    const { context, checklist } = await logContext("runbook", RUNBOOK);
    const big = segmentedEvents(context).filter((event) => event.eventId === "r-2");
    const fail = (contextTokens: number, maxOutputTokens: number) =>
      (() => {
        try {
          fitSegment(segmentTemplate, checklist, big, { contextTokens, maxOutputTokens });
        } catch (error) {
          return (error as Error).message;
        }
        throw new Error("expected the event not to fit");
      })();
    const need = answerNeed(big);
    const room = "(MEMGATE_CONTEXT_TOKENS) holds: set it to at least";
    const cap = `more than the answer cap of 1000 (MEMGATE_MAX_OUTPUT_TOKENS) allows: set it to at least ${need}`;
    expect(fail(2048, 4096)).toContain(room);
    expect(fail(2048, 4096)).not.toContain("MEMGATE_MAX_OUTPUT_TOKENS");
    expect(fail(32_000, 1000)).toContain(`its answer room for ${need}, ${cap}`);
    expect(fail(32_000, 1000)).not.toContain("MEMGATE_CONTEXT_TOKENS");
    expect(fail(2048, 1000)).toContain(room);
    expect(fail(2048, 1000)).toContain(`; and ${cap}`);
    // The sizes it names are enough.
    const needed = Number(/holds: set it to at least (\d+)/.exec(fail(2048, 1000))?.[1]);
    expect(
      fitSegment(segmentTemplate, checklist, big, { contextTokens: needed, maxOutputTokens: need }),
    ).toHaveLength(1);
  });

  it("the summary prompt shows as many claims as leave its answer room, contested first, and names the rest as not shown", () => {
    const claim = (i: number, status: Claim["status"]): Claim => ({
      key: `host.h${i}.rack`,
      scope: "global",
      value: { text: `Host h${i} is in rack ${i % 40} and has ${(i % 64) + 1} GB of memory.` },
      polarity: "affirmed",
      status,
      derivedFrom: [`s-${i}`],
    });
    const claims = [...Array.from({ length: 400 }, (_, i) => claim(i, "settled")), claim(999, "contested")];
    for (const contextTokens of [2048, 4096]) {
      const settings = { contextTokens, maxOutputTokens: 4096 };
      const { rendered, answerTokens } = fitSummary(summaryTemplate, claims, settings);
      expect(promptTokens(rendered) + answerTokens).toBeLessThanOrEqual(contextTokens);
      expect(answerTokens).toBeGreaterThanOrEqual(512);
      expect(rendered.prompt).toContain("host.h999.rack");
      expect(rendered.prompt).toContain("- (more claims are not shown)");
      // The others in their order, from the first: a tail append leaves what is shown as it was.
      const shown = [...rendered.prompt.matchAll(/- host\.h(\d+)\.rack \(settled\)/g)].map((m) =>
        Number(m[1]),
      );
      expect(shown.length).toBeGreaterThan(10);
      expect(shown).toEqual(Array.from({ length: shown.length }, (_, i) => i));
    }
    expect(() => fitSummary(summaryTemplate, claims, { contextTokens: 600, maxOutputTokens: 4096 })).toThrow(
      /the summary prompt needs \d+ tokens without a claim/,
    );
  });
});
