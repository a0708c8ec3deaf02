import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { appendEvents } from "#app/append.ts";
import { renderConsolidation } from "#app/prompt-render.ts";
import { DEFAULT_PROMPT_VERSION, loadPrompt } from "#app/prompts.ts";
import { run } from "#app/run.ts";
import { readInputs, takeSnapshot } from "#app/snapshot.ts";
import type { ConsolidationOutput } from "#domain/schemas.ts";
import { type ModelServer, type Protocol, type Scripted, startModelServer } from "#harness/model-servers.ts";
import { GenerationFailedError } from "#ports/model.ts";
import { honestAnswer, modelDeps, SUBJECT_EVENTS } from "./fixtures.ts";

/**
 * One prompt with every valid input, over the real wire: the official SDKs (openai, and
 * @aws-sdk/client-bedrock-runtime) talk to local servers that speak each protocol, and every
 * scripted answer ends in the contract's state: PUBLISHED, REJECTED with its reasons, or a
 * GenerationFailedError (exit 5) with nothing recorded.
 */
process.env.AWS_ACCESS_KEY_ID = "AKIDTEST";
process.env.AWS_SECRET_ACCESS_KEY = "secret-test";

type Bend = (honest: ConsolidationOutput) => unknown;

/** The ways a model bends an answer, each with the reason code the gate must give. */
const BENDS: Array<[string, string, Bend]> = [
  [
    "polarity",
    "polarity-flipped",
    (o) => ({
      ...o,
      claims: o.claims.map((c) =>
        c.key === "project/database"
          ? { ...c, polarity: c.polarity === "negated" ? "affirmed" : "negated" }
          : c,
      ),
    }),
  ],
  [
    "number",
    "value-changed",
    (o) => ({
      ...o,
      claims: o.claims.map((c) =>
        c.key === "project/budget" ? { ...c, value: { quantity: "15000", unit: "USD" } } : c,
      ),
    }),
  ],
  [
    "unit",
    "value-changed",
    (o) => ({
      ...o,
      claims: o.claims.map((c) =>
        c.key === "project/budget" ? { ...c, value: { quantity: "12500", unit: "EUR" } } : c,
      ),
    }),
  ],
  [
    "laundered text claim",
    "unsupported-claim",
    (o) => ({
      ...o,
      claims: [
        ...o.claims,
        {
          key: "access",
          scope: "global",
          value: { text: "User is an administrator with production access." },
          polarity: "affirmed",
          status: "settled",
          derivedFrom: ["e-3"],
        },
      ],
    }),
  ],
  [
    "settled conflict",
    "conflict-missing",
    (o) => ({
      ...o,
      claims: o.claims.map((c) => ({ ...c, status: "settled" })),
      unresolvedConflicts: [],
    }),
  ],
  ["dropped pending item", "pending-missing", (o) => ({ ...o, pending: [] })],
];

describe.each<Protocol>(["openai", "bedrock"])("one prompt over the %s wire", (protocol) => {
  let server: ModelServer;
  let honest: ConsolidationOutput;

  beforeAll(async () => {
    server = await startModelServer(protocol, () => ({ answer: honest }));
  });
  afterAll(() => server.close());

  const model = protocol === "openai" ? "openai:test-model" : "bedrock:anthropic.test-model-v1:0";
  const open = (overrides: Parameters<typeof modelDeps>[2] = {}) =>
    modelDeps(
      model,
      protocol === "openai"
        ? { openAiBaseUrl: server.url, openAiApiKey: "sk-test-key" }
        : { bedrockEndpoint: server.url, bedrockRegion: "us-east-1" },
      overrides,
    );

  async function subjectWith(deps: ReturnType<typeof open>["deps"]) {
    await appendEvents(deps, "alex", SUBJECT_EVENTS);
    honest = await honestAnswer(deps, "alex");
    return takeSnapshot(deps, "alex");
  }

  it("an honest answer is PUBLISHED; the request carries the rendered prompt, the schema, temperature 0; the manifest pins the prompt and the tokens", async () => {
    const { deps } = open();
    const snapshot = await subjectWith(deps);
    server.script = () => ({ answer: honest, inputTokens: 1234, outputTokens: 321 });
    const before = server.requests.length;
    const outcome = await run(deps, snapshot);
    if (outcome.status !== "PUBLISHED") throw new Error(`expected PUBLISHED, got ${outcome.status}`);
    const [request] = server.requests.slice(before);
    if (!request) throw new Error("the server received nothing");
    const { context } = await readInputs(deps, "alex", snapshot.highWater);
    const rendered = renderConsolidation(loadPrompt(), context);
    expect(request.prompt).toBe(rendered.prompt);
    expect(request.system).toBe(rendered.system);
    // Every rule in plain words, the valid ids listed, the checklist filled.
    expect(request.prompt).toContain(
      "Cite only these valid input ids, in derivedFrom, members and coldRefs: e-1, e-2, e-3",
    );
    expect(request.prompt).toContain("never translate");
    expect(request.prompt).toContain('- e-1: key "project/budget"');
    expect(request.prompt).toContain('- key "project/launch", scope "global": members ["e-5","e-6"]');
    const schema = JSON.stringify(request.schema);
    expect(schema).toContain('"enum":["affirmed","negated"]');
    expect(schema).toContain('"additionalProperties":false');
    if (protocol === "openai") {
      expect(request.headers.authorization).toBe("Bearer sk-test-key");
      expect(request.body.temperature).toBe(0);
      expect(request.body.model).toBe("test-model");
      expect(request.body.response_format).toMatchObject({
        type: "json_schema",
        json_schema: { strict: true },
      });
    } else {
      expect(request.path).toBe(`/model/${encodeURIComponent("anthropic.test-model-v1:0")}/converse`);
      expect(String(request.headers.authorization)).toMatch(
        /^AWS4-HMAC-SHA256 Credential=AKIDTEST\/\d{8}\/us-east-1\/bedrock\/aws4_request, SignedHeaders=.*(host|:authority).*x-amz-date.*, Signature=[0-9a-f]{64}$/,
      );
      expect(request.headers["x-amz-date"]).toMatch(/^\d{8}T\d{6}Z$/);
      expect(request.body.inferenceConfig).toEqual({ temperature: 0, maxTokens: 4096 });
      expect(request.body.toolConfig).toMatchObject({ toolChoice: { tool: { name: "answer" } } });
    }
    const manifest = await deps.artifacts.readManifest("alex", outcome.artifactId);
    expect(manifest.promptVersion).toBe(DEFAULT_PROMPT_VERSION);
    expect(manifest.generation).toMatchObject({
      rendererVersion: "render-v1",
      attempts: 1,
      inputTokens: 1234,
      outputTokens: 321,
      calls: [{ kind: "consolidate", attempt: 1, promptHash: rendered.hash, reused: false }],
    });
  });

  it("strict output's nulls for absent optional fields are read as absent", async () => {
    const { deps } = open();
    const snapshot = await subjectWith(deps);
    server.script = () => ({
      answer: {
        ...honest,
        claims: honest.claims.map((c) => ({ text: null, ...c })),
      },
    });
    expect((await run(deps, snapshot)).status).toBe("PUBLISHED");
  });

  it.each(BENDS)("a %s bend is REJECTED with %s, every attempt kept", async (_name, code, bend) => {
    const { deps } = open();
    const snapshot = await subjectWith(deps);
    server.script = () => ({ answer: bend(honest) });
    const outcome = await run(deps, snapshot);
    expect(outcome.status).toBe("REJECTED");
    if (outcome.status !== "REJECTED") return;
    expect(outcome.gate.reasons.map((r) => r.code)).toContain(code);
    const manifest = await deps.artifacts.readManifest("alex", outcome.artifactId);
    expect(manifest.generation?.attempts).toBe(2);
    const attempts = await deps.artifacts.readAttempts("alex", outcome.artifactId);
    expect(attempts).toHaveLength(1);
    expect(attempts[0]?.report.reasons.map((r) => r.code)).toContain(code);
  });

  it.each<[string, Scripted]>([
    ["truncated JSON", { text: '{"claims":[{"key":"project/budget","scope":"glo' }],
    ["an empty answer", { text: "" }],
  ])("%s is REJECTED as schema-invalid, the text kept as written", async (_name, scripted) => {
    const { deps } = open({ repairAttempts: 1 });
    const snapshot = await subjectWith(deps);
    server.script = () => scripted;
    const outcome = await run(deps, snapshot);
    expect(outcome.status).toBe("REJECTED");
    if (outcome.status !== "REJECTED") return;
    expect(outcome.gate.reasons.map((r) => r.code)).toEqual(["schema-invalid"]);
    const body = await deps.artifacts.readArtifact("alex", outcome.artifactId);
    expect(body).toEqual({ unparsedModelAnswer: "text" in scripted ? scripted.text : "" });
  });

  it("429 then an answer: retried with backoff, PUBLISHED", async () => {
    const { deps } = open();
    const snapshot = await subjectWith(deps);
    let calls = 0;
    server.script = () =>
      ++calls === 1
        ? {
            error: 429,
            type: protocol === "openai" ? "rate_limit_exceeded" : "ThrottlingException",
            message: "slow down",
          }
        : { answer: honest };
    const before = server.requests.length;
    expect((await run(deps, snapshot)).status).toBe("PUBLISHED");
    expect(server.requests.length - before).toBe(2);
  });

  it.each<[string, Scripted, RegExp]>([
    [
      "a 500 that persists",
      {
        error: 500,
        type: protocol === "openai" ? "server_error" : "InternalServerException",
        message: "boom",
      },
      /answered .*500|InternalServerException.*boom|still after 4 attempts/,
    ],
    [
      "context length exceeded",
      protocol === "openai"
        ? {
            error: 400,
            type: "invalid_request_error",
            code: "context_length_exceeded",
            message: "This model's maximum context length is 8192 tokens.",
          }
        : { error: 400, type: "ValidationException", message: "Input is too long for requested model." },
      /does not fit the model's context window/,
    ],
    [
      "a 403",
      protocol === "openai"
        ? { error: 403, type: "permission_denied", message: "no access to this model" }
        : { error: 403, type: "AccessDeniedException", message: "no access to this model" },
      /refused the request \(403/,
    ],
  ])("%s fails the generation, saying which, and records nothing", async (_name, scripted, message) => {
    const { deps } = open();
    const snapshot = await subjectWith(deps);
    server.script = () => scripted;
    const error = await run(deps, snapshot).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(GenerationFailedError);
    expect((error as Error).message).toMatch(message);
    expect(await deps.artifacts.listRecords("alex")).toEqual([]);
  });

  // OpenAI's own quirk: Bedrock has no such field.
  if (protocol === "openai")
    it("a model that refuses max_tokens is asked again with max_completion_tokens, and keeps it", async () => {
      const { deps } = open();
      const snapshot = await subjectWith(deps);
      server.script = (request) =>
        request.body.max_tokens !== undefined
          ? {
              error: 400,
              type: "invalid_request_error",
              message:
                "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.",
            }
          : { answer: honest };
      const before = server.requests.length;
      expect((await run(deps, snapshot)).status).toBe("PUBLISHED");
      const sent = server.requests.slice(before);
      expect(sent.map((r) => r.body.max_tokens ?? r.body.max_completion_tokens)).toEqual([4096, 4096]);
      expect(sent[1]?.body.max_tokens).toBeUndefined();
    });

  it("a model that never answers is ended by the deadline; nothing recorded", async () => {
    const { deps } = open({ generationTimeoutMs: 300 });
    const snapshot = await subjectWith(deps);
    server.script = () => ({ hang: true });
    const error = await run(deps, snapshot).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(GenerationFailedError);
    expect((error as Error).message).toMatch(/did not answer within 300 ms/);
    expect(await deps.artifacts.listRecords("alex")).toEqual([]);
  });

  it("a prompt that cannot fit the context window is refused before it is sent", async () => {
    const { deps } = open();
    await appendEvents(deps, "alex", SUBJECT_EVENTS);
    const small = modelDeps(
      model,
      {
        settings: { contextTokens: 1024, maxOutputTokens: 256 },
        ...(protocol === "openai"
          ? { openAiBaseUrl: server.url, openAiApiKey: "sk-test-key" }
          : { bedrockEndpoint: server.url, bedrockRegion: "us-east-1" }),
      },
      { events: deps.events, alias: deps.alias, artifacts: deps.artifacts, settings: deps.settings },
    ).deps;
    const before = server.requests.length;
    const error = await run(small, await takeSnapshot(small, "alex")).catch((e: unknown) => e);
    expect((error as Error).message).toMatch(
      /needs \d+ tokens .* more than the context of 1024 .* use segmented:/,
    );
    expect(server.requests.length).toBe(before);
  });
});
