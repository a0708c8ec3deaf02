import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { appendEvents, revokeEvents } from "#app/append.ts";
import type { Deps } from "#app/deps.ts";
import { run } from "#app/run.ts";
import { takeSnapshot } from "#app/snapshot.ts";
import { budgetTokens } from "#domain/gate/index.ts";
import type { ConsolidationOutput } from "#domain/schemas.ts";
import { countTokens } from "#domain/tokens.ts";
import {
  honestSegmentAnswer,
  type ModelServer,
  type ReceivedRequest,
  startModelServer,
} from "#harness/model-servers.ts";
import { modelDeps } from "./fixtures.ts";

/**
 * Segmented consolidation over the OpenAI wire: a log far bigger than the model's context is
 * written segment by segment, every prompt fits, a rebuild asks only for what changed, and repair
 * re-asks only the segments the gate pointed at.
 */
const isSummary = (request: ReceivedRequest) => request.system.includes("SummaryAnswer");
const HONEST_SUMMARY = { summary: "Memory notes are kept as stated." };

function hostEvents(from: number, to: number) {
  return Array.from({ length: to - from + 1 }, (_, i) => {
    const n = from + i;
    if (n % 97 === 0)
      return {
        eventId: `s-${n}`,
        kind: "task",
        trust: "user",
        text: `Check the backup of host h${n} by 2026-12-05.`,
      };
    return {
      eventId: `s-${n}`,
      kind: n % 11 === 0 ? "constraint" : "fact",
      trust: "user",
      text:
        n % 11 === 0
          ? `Host h${n} must not run more than ${(n % 9) + 2} jobs.`
          : `Host h${n} is in rack ${n % 40} and has ${(n % 64) + 1} GB of memory.`,
    };
  });
}

describe("segmented consolidation over the wire", () => {
  let server: ModelServer;
  beforeAll(async () => {
    server = await startModelServer("openai", (request) =>
      isSummary(request) ? { answer: HONEST_SUMMARY } : { answer: honestSegmentAnswer(request.prompt) },
    );
  });
  afterAll(() => server.close());

  const open = (contextTokens: number, maxOutputTokens: number, overrides: Partial<Deps> = {}) =>
    modelDeps(
      "segmented:openai:small-model",
      {
        openAiBaseUrl: server.url,
        openAiApiKey: "sk-test",
        settings: { contextTokens, maxOutputTokens },
      },
      { generationTimeoutMs: 300_000, ...overrides },
    ).deps;

  it("20,000 events in a 4,096-token context: every prompt fits; a 50-event tail and a revocation re-ask only their segments", async () => {
    const deps = open(4096, 1024);
    for (let from = 1; from <= 20_000; from += 1000)
      await appendEvents(deps, "fleet", hostEvents(from, from + 999));
    const sent = () => server.requests.length;

    let before = sent();
    const first = await run(deps, await takeSnapshot(deps, "fleet"));
    expect(first.status).toBe("PUBLISHED");
    if (first.status !== "PUBLISHED") return;
    const firstRequests = server.requests.slice(before);
    const firstSegments = firstRequests.filter((r) => !isSummary(r));
    expect(firstSegments.length).toBeGreaterThan(500);
    for (const request of firstRequests) {
      // Each answer may take what its prompt leaves of the context, at most the output cap.
      const answerRoom = Number(request.body.max_tokens);
      expect(answerRoom).toBeLessThanOrEqual(1024);
      expect(countTokens(request.system) + countTokens(request.prompt) + answerRoom).toBeLessThanOrEqual(
        4096,
      );
    }
    const manifest = await deps.artifacts.readManifest("fleet", first.artifactId);
    expect(manifest.modelSnapshot).toBe("segmented:openai:small-model");
    expect(manifest.promptVersion).toBe("segment-v2+summary-v2");
    expect(manifest.generation?.segments).toEqual({ total: firstSegments.length, reused: 0 });

    // A 50-event tail: only the last segment and the new ones are asked; the rest come from the cache.
    await appendEvents(deps, "fleet", hostEvents(20_001, 20_050));
    before = sent();
    const tail = await run(deps, await takeSnapshot(deps, "fleet"));
    expect(tail.status).toBe("PUBLISHED");
    if (tail.status !== "PUBLISHED") return;
    const tailSegments = server.requests.slice(before).filter((r) => !isSummary(r));
    const tailManifest = await deps.artifacts.readManifest("fleet", tail.artifactId);
    const segments = tailManifest.generation?.segments ?? { total: 0, reused: 0 };
    expect(tailSegments.length).toBe(segments.total - segments.reused);
    expect(tailSegments.length).toBeGreaterThan(0);
    expect(tailSegments.length).toBeLessThanOrEqual(12);
    const tailCost = tailManifest.generation?.inputTokens ?? 0;
    expect(tailCost).toBeLessThan((manifest.generation?.inputTokens ?? 0) * 0.05);

    // Revoking one event re-asks its segment (and the next one only when the revoked event ended it).
    await revokeEvents(deps, "fleet", ["s-10001"], "wrong host");
    before = sent();
    const revoked = await run(deps, await takeSnapshot(deps, "fleet"));
    expect(revoked.status).toBe("PUBLISHED");
    const revokedSegments = server.requests.slice(before).filter((r) => !isSummary(r));
    expect(revokedSegments.length).toBeGreaterThanOrEqual(1);
    expect(revokedSegments.length).toBeLessThanOrEqual(2);
    expect(
      revokedSegments.some((r) => r.prompt.includes('"id":"s-10002"') || r.prompt.includes('"id":"s-10000"')),
    ).toBe(true);
    expect(revokedSegments.every((r) => !r.prompt.includes('"id":"s-10001"'))).toBe(true);
  }, 300_000);

  it("repair re-asks only the segment the gate pointed at, with its reasons, and publishes on the second attempt", async () => {
    const deps = open(3072, 512);
    await appendEvents(deps, "rack", hostEvents(1, 200));
    const bent = "s-55"; // a constraint: "must not run more than … jobs"
    server.script = (request) => {
      if (isSummary(request)) return { answer: HONEST_SUMMARY };
      const answer = honestSegmentAnswer(request.prompt) as {
        claims: Array<{ text: string; derivedFrom: string[] }>;
      };
      if (!request.prompt.includes("previous answer was refused"))
        for (const claim of answer.claims)
          if (claim.derivedFrom[0] === bent) claim.text = claim.text.replace(" not", "");
      return { answer };
    };
    const before = server.requests.length;
    const outcome = await run(deps, await takeSnapshot(deps, "rack"));
    expect(outcome.status).toBe("PUBLISHED");
    if (outcome.status !== "PUBLISHED") return;
    const requests = server.requests.slice(before);
    const repairs = requests.filter((r) => r.prompt.includes("previous answer was refused"));
    expect(repairs).toHaveLength(1);
    expect(repairs[0]?.prompt).toContain(`polarity-flipped (event ${bent}`);
    const manifest = await deps.artifacts.readManifest("rack", outcome.artifactId);
    expect(manifest.generation?.attempts).toBe(2);
    const secondAttempt =
      manifest.generation?.calls.filter((call) => call.attempt === 2 && call.kind === "segment") ?? [];
    expect(secondAttempt.filter((call) => !call.reused)).toHaveLength(1);
    const attempts = await deps.artifacts.readAttempts("rack", outcome.artifactId);
    expect(attempts[0]?.report.reasons.map((r) => r.code)).toContain("polarity-flipped");
  });

  it("under a token budget (given, or the store's setting), restatements of events with nothing must-preserve go cold first; the rest is kept", async () => {
    server.script = (request) =>
      isSummary(request) ? { answer: HONEST_SUMMARY } : { answer: honestSegmentAnswer(request.prompt) };
    const plain = Array.from({ length: 30 }, (_, i) => ({
      eventId: `p-${i + 1}`,
      kind: "fact",
      trust: "user",
      text: `The team likes the ${["blue", "green", "quiet", "new", "old", "small"][i % 6]} dashboard theme for reviews.`,
    }));
    const events = [...plain, ...hostEvents(1, 12)];
    const unbounded = open(4096, 1024);
    await appendEvents(unbounded, "themes", events);
    const full = await run(unbounded, await takeSnapshot(unbounded, "themes"));
    if (full.status !== "PUBLISHED") throw new Error(`expected PUBLISHED, got ${full.status}`);
    const tokens =
      full.gate.stats.tokens ??
      budgetTokens(await unbounded.artifacts.readArtifact("themes", full.artifactId));

    const budget = tokens - 150;
    const bounded = open(4096, 1024, { budget });
    await appendEvents(bounded, "themes", events);
    const fitted = await run(bounded, await takeSnapshot(bounded, "themes"));
    expect(fitted.status).toBe("PUBLISHED");
    if (fitted.status !== "PUBLISHED") return;
    expect(fitted.gate.stats.tokens).toBeLessThanOrEqual(budget);
    const body = (await bounded.artifacts.readArtifact("themes", fitted.artifactId)) as {
      coldRefs: string[];
    };
    expect(body.coldRefs.length).toBeGreaterThan(0);
    expect(body.coldRefs.every((id) => id.startsWith("p-"))).toBe(true);

    // The store's budget setting (memgate settings --budget) is the same budget when none is given.
    const bySetting = open(4096, 1024);
    await bySetting.settings.updateSettings({ budget });
    await appendEvents(bySetting, "themes", events);
    const set = await run(bySetting, await takeSnapshot(bySetting, "themes"));
    expect(set.status).toBe("PUBLISHED");
    if (set.status !== "PUBLISHED") return;
    expect(set.gate.stats.tokens).toBeLessThanOrEqual(budget);
    expect(await bySetting.artifacts.readArtifact("themes", set.artifactId)).toEqual(body);
  });

  it("an open task that carries assertions reaches a pending item, and a structured event keeps what its text says beyond its assertions", async () => {
    server.script = (request) =>
      isSummary(request) ? { answer: HONEST_SUMMARY } : { answer: honestSegmentAnswer(request.prompt) };
    const deps = open(4096, 1024);
    await appendEvents(deps, "ledger", [
      {
        eventId: "l-1",
        kind: "task",
        trust: "user",
        text: "SRE-1452: ask for the soft quota to go from 6 TB to 8 TB by Dec 18.",
        assertions: [
          {
            key: "task.SRE-1452.due",
            scope: "ticket:SRE-1452",
            value: { date: "2026-12-18" },
            polarity: "affirmed",
          },
        ],
      },
      {
        eventId: "l-2",
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
      { eventId: "l-3", kind: "fact", trust: "user", text: "The ledger batch runs from 02:00 to 02:40." },
    ]);
    const before = server.requests.length;
    const outcome = await run(deps, await takeSnapshot(deps, "ledger"));
    expect(outcome.status).toBe("PUBLISHED");
    if (outcome.status !== "PUBLISHED") return;
    const segmentPrompts = server.requests.slice(before).filter((r) => !isSummary(r));
    expect(segmentPrompts.some((r) => r.prompt.includes('"id":"l-1"'))).toBe(true);
    const body = (await deps.artifacts.readArtifact("ledger", outcome.artifactId)) as ConsolidationOutput;
    expect(body.pending).toEqual([
      { text: "SRE-1452: ask for the soft quota to go from 6 TB to 8 TB by Dec 18.", derivedFrom: ["l-1"] },
    ]);
    const vacuum = body.claims.find((claim) => claim.key === "db.vacuum_full_in_business_hours");
    expect(vacuum?.polarity).toBe("negated");
    expect(vacuum?.text).toContain("(08:00-20:00 Lisbon)");
    expect(body.claims.filter((claim) => claim.derivedFrom.includes("l-2"))).toHaveLength(1);
  });

  it("a model that never fixes its answer is REJECTED after the configured attempts, every attempt kept", async () => {
    const deps = open(3072, 512, { repairAttempts: 3 });
    await appendEvents(deps, "stubborn", hostEvents(1, 60));
    server.script = (request) => {
      if (isSummary(request)) return { answer: HONEST_SUMMARY };
      const answer = honestSegmentAnswer(request.prompt) as {
        claims: Array<{ text: string; derivedFrom: string[] }>;
      };
      for (const claim of answer.claims)
        if (claim.derivedFrom[0] === "s-33") claim.text = claim.text.replace(" not", "");
      return { answer };
    };
    const outcome = await run(deps, await takeSnapshot(deps, "stubborn"));
    expect(outcome.status).toBe("REJECTED");
    if (outcome.status !== "REJECTED") return;
    expect(outcome.gate.reasons.map((r) => r.code)).toContain("polarity-flipped");
    const manifest = await deps.artifacts.readManifest("stubborn", outcome.artifactId);
    expect(manifest.generation?.attempts).toBe(3);
    expect(await deps.artifacts.readAttempts("stubborn", outcome.artifactId)).toHaveLength(2);
  });
});
