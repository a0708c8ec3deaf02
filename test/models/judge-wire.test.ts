import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { judgeNamed } from "#adapters/models/models.ts";
import { appendEvents } from "#app/append.ts";
import { audit } from "#app/audit.ts";
import { recall } from "#app/recall.ts";
import { run } from "#app/run.ts";
import { takeSnapshot } from "#app/snapshot.ts";
import type { ConsolidationOutput } from "#domain/schemas.ts";
import { MemoryEvent } from "#domain/schemas.ts";
import { evaluate } from "#eval/evaluate.ts";
import { type ModelServer, type ReceivedRequest, startModelServer } from "#harness/model-servers.ts";
import { honestAnswer, modelDeps, SUBJECT_EVENTS } from "./fixtures.ts";

/**
 * The judge port over the OpenAI wire: the worker puts to it what the gate let through without
 * full support (a claim text with a word its source lacks); `unsupported` refuses the candidate
 * with the gate's code, the detail saying the judge decided and why, and the repair loop treats
 * it like any gate reason.
 */
const isJudge = (request: ReceivedRequest) => request.system.includes("JudgeAnswer");

/** The staging fact restated with one word its event does not hold: 4 of 5 content words supported. */
function embellished(honest: ConsolidationOutput): ConsolidationOutput {
  return {
    ...honest,
    claims: honest.claims.map((claim) =>
      claim.derivedFrom[0] === "e-3" && "text" in claim.value
        ? { ...claim, value: { text: "The staging cluster in Frankfurt runs 3 nodes in production." } }
        : claim,
    ),
  };
}

describe("the model judge", () => {
  let server: ModelServer;
  let honest: ConsolidationOutput;
  let judgeSays: "supported" | "unsupported" | "unclear" = "unsupported";
  /** The text the double weighs (others are supported); null: it says judgeSays of everything. */
  let weighs: string | null = "in production";
  beforeAll(async () => {
    server = await startModelServer("openai", (request) => {
      if (!isJudge(request)) {
        const repairing = request.prompt.includes("previous answer was refused");
        return { answer: repairing ? honest : embellished(honest) };
      }
      // Every summary sentence is judged too: the double weighs only the embellished text.
      const blocks = [...request.prompt.matchAll(/^### (\S+)\n(.*)$/gm)].map((m) => ({
        id: m[1],
        embellished: weighs === null || (m[2] ?? "").includes(weighs),
      }));
      return {
        answer: {
          verdicts: blocks.map(({ id, embellished }) => ({
            id,
            verdict: embellished ? judgeSays : "supported",
            reason:
              judgeSays === "unsupported"
                ? "the event says nothing about production"
                : judgeSays === "unclear"
                  ? "production may be implied by staging, or not"
                  : "it restates the event",
          })),
        },
      };
    });
  });
  afterAll(() => server.close());

  const open = (repairAttempts: number) => {
    const options = { openAiBaseUrl: server.url, openAiApiKey: "sk-judge" };
    const judge = judgeNamed("openai:judge-model", {
      ...options,
      settings: { contextTokens: 32_000, maxOutputTokens: 2_048 },
    });
    return modelDeps("openai:writer-model", options, { judge, repairAttempts }).deps;
  };

  it("an unsupported verdict refuses the candidate with unsupported-claim, naming the judge and its reason", async () => {
    judgeSays = "unsupported";
    const deps = open(1);
    await appendEvents(deps, "alex", SUBJECT_EVENTS);
    honest = await honestAnswer(deps, "alex");
    const before = server.requests.length;
    const outcome = await run(deps, await takeSnapshot(deps, "alex"));
    expect(outcome.status).toBe("REJECTED");
    if (outcome.status !== "REJECTED") return;
    const [refusal] = outcome.gate.reasons;
    expect(refusal).toMatchObject({ code: "unsupported-claim", eventId: "e-3" });
    expect(refusal?.detail).toMatch(
      /the judge openai:judge-model decided it is unsupported: the event says nothing about production/,
    );
    const judgeRequest = server.requests.slice(before).find(isJudge);
    expect(judgeRequest?.prompt).toContain("The staging cluster in Frankfurt runs 3 nodes in production.");
    expect(judgeRequest?.prompt).toContain(
      '{"id":"e-3","kind":"fact","text":"The staging cluster in Frankfurt runs 3 nodes.","trust":"user"}',
    );
    const manifest = await deps.artifacts.readManifest("alex", outcome.artifactId);
    expect(manifest.generation?.calls.map((c) => c.kind)).toEqual(["consolidate", "judge"]);
  });

  it("the repair loop treats the judge's refusal like a gate reason: the second attempt publishes", async () => {
    judgeSays = "unsupported";
    const deps = open(2);
    await appendEvents(deps, "alex", SUBJECT_EVENTS);
    honest = await honestAnswer(deps, "alex");
    const before = server.requests.length;
    const outcome = await run(deps, await takeSnapshot(deps, "alex"));
    expect(outcome.status).toBe("PUBLISHED");
    const repair = server.requests
      .slice(before)
      .find((r) => r.prompt.includes("previous answer was refused"));
    expect(repair?.prompt).toContain("the judge openai:judge-model decided it is unsupported");
  });

  it("the audit asks the judge about served summaries: an unsupported text is a false fact, contained at once", async () => {
    judgeSays = "unsupported";
    // Published without a judge: the embellished text passes the deterministic rules (support 0.8).
    const deps = open(1);
    const { judge, ...withoutJudge } = deps;
    await appendEvents(deps, "alex", SUBJECT_EVENTS);
    honest = await honestAnswer(deps, "alex");
    expect((await run(withoutJudge, await takeSnapshot(deps, "alex"))).status).toBe("PUBLISHED");
    expect((await audit(withoutJudge, { subjects: ["alex"] })).falseFact).toBe(0);
    const report = await audit(deps, { subjects: ["alex"] });
    expect(report).toMatchObject({ served: 1, falseFact: 1, judged: 1 });
    expect(report.findings[0]?.detail).toMatch(
      /^unsupported-claim memory:e-3 \(e-3\): .*the judge openai:judge-model decided/,
    );
    expect((await recall(deps, "alex")).mode).toBe("raw");
    expect(judge).toBeDefined();
  });

  it("the evaluation's false-new-fact rate counts what the judge finds unsupported, and says not measured without one", async () => {
    const options = { openAiBaseUrl: server.url, openAiApiKey: "sk-judge" };
    const judge = judgeNamed("openai:judge-model", {
      ...options,
      settings: { contextTokens: 32_000, maxOutputTokens: 2_048 },
    });
    const dataset = new Map([["alex", SUBJECT_EVENTS.map((e) => MemoryEvent.parse(e))]]);
    judgeSays = "unsupported";
    weighs = null;
    const judged = await evaluate(modelDeps("deterministic-v1", {}, { judge }).deps, dataset, null);
    expect(judged.judgeFalseNewFactRate).toBe(1);
    expect(judged.falseNewFactRate).toBeGreaterThan(0);
    const plain = await evaluate(modelDeps("deterministic-v1").deps, dataset, null);
    expect(plain.judgeFalseNewFactRate).toBeNull();
    expect(plain.falseNewFactRate).toBe(0);
    weighs = "in production";
  });

  it("an unclear verdict refuses nothing and is shown as a judge-unclear warning", async () => {
    judgeSays = "unclear";
    const deps = open(1);
    await appendEvents(deps, "alex", SUBJECT_EVENTS);
    honest = await honestAnswer(deps, "alex");
    const outcome = await run(deps, await takeSnapshot(deps, "alex"));
    expect(outcome.status).toBe("PUBLISHED");
    expect(outcome.status !== "dropped" && outcome.gate.warnings).toEqual([
      expect.objectContaining({
        code: "judge-unclear",
        detail: expect.stringContaining("could not decide: production may be implied"),
      }),
    ]);
  });

  it("a supported verdict lets the candidate through", async () => {
    judgeSays = "supported";
    const deps = open(1);
    await appendEvents(deps, "alex", SUBJECT_EVENTS);
    honest = await honestAnswer(deps, "alex");
    expect((await run(deps, await takeSnapshot(deps, "alex"))).status).toBe("PUBLISHED");
  });
});
