// The Lambda handlers invoked in-process with realistic events against DynamoDB Local (with its
// stream) and moto (S3, SQS): the API, the outbox, the worker and the sweep, end to end.
import { ListObjectsV2Command } from "@aws-sdk/client-s3";
import { CreateSecretCommand, SecretsManagerClient } from "@aws-sdk/client-secrets-manager";
import {
  CreateQueueCommand,
  DeleteMessageCommand,
  GetQueueAttributesCommand,
  type Message,
  ReceiveMessageCommand,
  SendMessageCommand,
} from "@aws-sdk/client-sqs";
import type {
  APIGatewayProxyEventV2,
  APIGatewayProxyResultV2,
  Context,
  DynamoDBStreamEvent,
  SQSBatchResponse,
  SQSEvent,
} from "aws-lambda";
import { afterAll, beforeAll, describe, expect, inject, it, vi } from "vitest";
import { MemoryEvent } from "#domain/schemas.ts";
import { openAwsStores } from "#harness/aws-stores.ts";
import { honestSegmentAnswer, startModelServer } from "#harness/model-servers.ts";
import { MetricNames } from "#observability/metric-names.ts";
import { SAMPLE } from "../support/builders.ts";
import { lambdaEnvironment } from "../support/lambda-environment.ts";
import { httpApiEvent, lambdaContext, sqsEvent, streamEvent } from "../support/lambda-events.ts";
import { StreamReader } from "../support/stream-reader.ts";

const { budget, constraint, note } = SAMPLE;

type Handler<E, R> = (event: E, context: Context) => Promise<R>;
type ApiHandler = Handler<APIGatewayProxyEventV2, APIGatewayProxyResultV2>;
type WorkerHandler = Handler<SQSEvent, SQSBatchResponse>;
type OutboxHandler = Handler<DynamoDBStreamEvent, { batchItemFailures: unknown[] }>;
type SweepHandler = Handler<unknown, { requested: number }>;

const endpoints = { dynamoEndpoint: inject("dynamoEndpoint"), motoEndpoint: inject("motoEndpoint") };
let aws: Awaited<ReturnType<typeof openAwsStores>>;
let reader: StreamReader;
let queueArn: string;
let api: ApiHandler;
let worker: WorkerHandler;
let outbox: OutboxHandler;
const emitted: string[] = [];

/** Each handler module builds its runtime from the environment when imported: a cold start. */
async function coldStart<T>(
  load: () => Promise<{ handler: unknown }>,
  overrides: Record<string, string> = {},
): Promise<T> {
  const saved = { ...process.env };
  Object.assign(process.env, overrides);
  vi.resetModules();
  try {
    return (await load()).handler as T;
  } finally {
    process.env = saved;
  }
}
const loadApi = () => import("../../lambdas/api/handler.ts");
const loadWorker = () => import("../../lambdas/worker/handler.ts");
const loadOutbox = () => import("../../lambdas/outbox/handler.ts");
const loadSweep = () => import("../../lambdas/sweep/handler.ts");
const loadAudit = () => import("../../lambdas/audit/handler.ts");

beforeAll(async () => {
  aws = await openAwsStores(endpoints, undefined, { stream: true });
  Object.assign(process.env, lambdaEnvironment(aws, endpoints));
  reader = await StreamReader.open(aws.clients.dynamo, aws.store.tableName, endpoints.dynamoEndpoint);
  queueArn = await arnOf(aws.queueUrl);
  // Metrics leave as EMF lines on stdout: keep them to check names and dimensions.
  const write = process.stdout.write.bind(process.stdout);
  vi.spyOn(process.stdout, "write").mockImplementation((chunk: string | Uint8Array, ...rest: unknown[]) => {
    const text = String(chunk);
    if (text.includes('"_aws"')) {
      emitted.push(text);
      return true;
    }
    return write(chunk, ...(rest as []));
  });
  api = await coldStart<ApiHandler>(loadApi);
  worker = await coldStart<WorkerHandler>(loadWorker);
  outbox = await coldStart<OutboxHandler>(loadOutbox);
});
afterAll(() => {
  reader?.close();
  vi.restoreAllMocks();
});

async function arnOf(queueUrl: string): Promise<string> {
  const attributes = await aws.clients.sqs.send(
    new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ["QueueArn"] }),
  );
  return attributes.Attributes?.QueueArn as string;
}

let subjects = 0;
const freshSubject = () => `lambda/${process.pid}/${++subjects}`;

async function call(method: string, path: string, body?: unknown) {
  const result = await api(
    httpApiEvent(method, path, {
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      headers: { "content-type": "application/json" },
    }),
    lambdaContext("memgate-api"),
  );
  if (typeof result === "string") throw new Error("the API answered a bare string");
  return {
    status: result.statusCode,
    headers: result.headers ?? {},
    body: JSON.parse(result.body ?? "null"),
  };
}

const events = (subject: string) => `/v1/subjects/${encodeURIComponent(subject)}`;

/** Receives what is on a queue now (as the event source mapping would), all attributes. */
async function receive(queueUrl: string, waitSeconds = 1): Promise<Message[]> {
  const { Messages } = await aws.clients.sqs.send(
    new ReceiveMessageCommand({
      QueueUrl: queueUrl,
      MaxNumberOfMessages: 10,
      WaitTimeSeconds: waitSeconds,
      MessageSystemAttributeNames: ["All"],
    }),
  );
  return Messages ?? [];
}

/** Delivers messages to a worker handler; deletes the ones it did not report failed, as Lambda does. */
async function deliver(handler: WorkerHandler, queueUrl: string, messages: Message[]) {
  const response = await handler(sqsEvent(messages, queueArn), lambdaContext("memgate-worker"));
  const failed = new Set(response.batchItemFailures.map((f) => f.itemIdentifier));
  for (const message of messages)
    if (!failed.has(message.MessageId as string))
      await aws.clients.sqs.send(
        new DeleteMessageCommand({ QueueUrl: queueUrl, ReceiptHandle: message.ReceiptHandle }),
      );
  return response;
}

/** Runs the queue dry through the worker. */
async function drain(): Promise<void> {
  for (
    let messages = await receive(aws.queueUrl);
    messages.length > 0;
    messages = await receive(aws.queueUrl)
  )
    await deliver(worker, aws.queueUrl, messages);
}

/** Delivers every stream record committed since the last call to the outbox handler. */
async function followStream() {
  const records = await reader.poll();
  return outbox(streamEvent(records, reader.streamArn), lambdaContext("memgate-outbox"));
}

describe("the Lambdas on the local engines", () => {
  it("API → stream → outbox → SQS → worker → summary; a revocation made by a process that then died is followed by the outbox", async () => {
    const subject = freshSubject();
    const appended = await call("POST", `${events(subject)}/events`, { events: [constraint, budget, note] });
    expect(appended.status).toBe(200);
    expect(appended.body.highWater).toBe(3);
    expect((await followStream()).batchItemFailures).toEqual([]);
    await drain();
    const summary = await call("GET", `${events(subject)}/recall`);
    expect(summary.body.mode).toBe("summary");

    // Revoke through the store alone, as an API process killed right after its commit would
    // leave it: nothing but the stream knows a rebuild is due.
    await aws.store.append(subject, [
      MemoryEvent.parse({ eventId: "r-1", kind: "revocation", revokes: ["b-1"] }),
    ]);
    const raw = await call("GET", `${events(subject)}/recall`);
    expect(raw.body.mode).toBe("raw");
    expect(raw.body.events.map((e: { eventId: string }) => e.eventId)).toEqual(["c-1", "n-1"]);

    expect((await followStream()).batchItemFailures).toEqual([]);
    const artifacts = await call("GET", `${events(subject)}/artifacts`);
    expect(artifacts.body.artifacts.map((a: { status: string }) => a.status)).toEqual(["STALE"]);
    await drain();
    const rebuilt = await call("GET", `${events(subject)}/recall`);
    expect(rebuilt.body.mode).toBe("summary");
    expect(rebuilt.body.artifactId).not.toBe(summary.body.artifactId);
    expect(JSON.stringify(rebuilt.body)).not.toContain("12,500");
    expect(emitted.some((line) => line.includes(MetricNames.RebuildRequested))).toBe(true);
    expect(
      emitted.some((line) => line.includes(MetricNames.RecallServed) && line.includes('"mode":"raw"')),
    ).toBe(true);
  });

  it("subjects holding /, ?, # and % route as under memgate serve, though API Gateway hands rawPath decoded", async () => {
    for (const subject of [`a/b?c#d%25e/${process.pid}`, `100%/${process.pid}`, `x?y=1&z#/${process.pid}`]) {
      const event = httpApiEvent("GET", `${events(subject)}/clock`);
      // The shape API Gateway sends: the matched route, the path and its parameters decoded.
      expect(event.routeKey).toBe("GET /v1/subjects/{subject}/clock");
      expect(event.rawPath).toBe(`/v1/subjects/${subject}/clock`);
      expect(event.pathParameters).toEqual({ subject });
      const appended = await call("POST", `${events(subject)}/events`, {
        events: [{ eventId: "m-1", kind: "fact", text: "the subject's name survives the gateway" }],
      });
      expect(appended.status).toBe(200);
      const clock = await call("GET", `${events(subject)}/clock`);
      expect(clock.status).toBe(200);
      expect(clock.body).toMatchObject({ highWater: 1 });
    }
    const listed = await call("GET", "/v1/subjects");
    expect(JSON.stringify(listed.body)).toContain(JSON.stringify(`100%/${process.pid}`));
  });

  it("the API Lambda answers the contract's errors: 400 with the field, 404, 413", async () => {
    const bad = await call("POST", `${events(freshSubject())}/events`, {
      events: [{ eventId: "x", kind: "fact" }],
    });
    expect(bad).toMatchObject({ status: 400, body: { error: { field: "events[0].text" } } });
    expect((await call("GET", `${events("nobody")}/clock`)).status).toBe(404);
    const many = Array.from({ length: 1001 }, (_, i) => ({ eventId: `m-${i}`, kind: "note", text: "x" }));
    expect((await call("POST", `${events(freshSubject())}/events`, { events: many })).status).toBe(413);
    const openapi = await call("GET", "/v1/openapi.json");
    expect(openapi.body.openapi).toBe("3.1.0");
  });

  describe("the worker's outcomes", () => {
    async function queued(subject: string) {
      await call("POST", `${events(subject)}/events`, { events: [constraint, budget] });
      const snapshot = (await call("GET", `${events(subject)}/clock`)).body;
      return snapshot;
    }

    it("published: acknowledged, PublishLatency emitted", async () => {
      const subject = freshSubject();
      await queued(subject);
      const messages = await receive(aws.queueUrl);
      expect(messages.length).toBeGreaterThan(0);
      const response = await deliver(worker, aws.queueUrl, messages);
      expect(response.batchItemFailures).toEqual([]);
      expect((await call("GET", `${events(subject)}/recall`)).body.mode).toBe("summary");
      expect(
        emitted.some((line) => line.includes(MetricNames.PublishLatency) && line.includes('"tenant":"acme"')),
      ).toBe(true);
    });

    it("dropped (the epoch moved): acknowledged, nothing generated", async () => {
      const subject = freshSubject();
      await queued(subject);
      await call("POST", `${events(subject)}/revocations`, { eventIds: ["b-1"] });
      const messages = (await receive(aws.queueUrl)).filter(
        (m) => JSON.parse(m.Body ?? "{}").inputEpoch === 0,
      );
      expect(messages).toHaveLength(1);
      expect((await deliver(worker, aws.queueUrl, messages)).batchItemFailures).toEqual([]);
      expect((await call("GET", `${events(subject)}/artifacts`)).body.artifacts).toEqual([]);
      await drain();
    });

    it("REJECTED by the gate: acknowledged, GateRejected emitted with its reason", async () => {
      const rejecting = await coldStart<WorkerHandler>(loadWorker, { MEMGATE_MODEL: "number-nudge" });
      const subject = freshSubject();
      await queued(subject);
      const response = await deliver(rejecting, aws.queueUrl, await receive(aws.queueUrl));
      expect(response.batchItemFailures).toEqual([]);
      const listed = (await call("GET", `${events(subject)}/artifacts`)).body.artifacts;
      expect(listed.map((a: { status: string }) => a.status)).toEqual(["REJECTED"]);
      const line = emitted.find((l) => l.includes(MetricNames.GateRejected));
      expect(line).toBeDefined();
      expect(JSON.parse(line as string)).toMatchObject({ tenant: "acme", reason: expect.any(String) });
    });

    it("a segmented language model, its key read from Secrets Manager: PUBLISHED, segments kept in S3, ModelTokens per direction", async () => {
      const secrets = new SecretsManagerClient({
        endpoint: endpoints.motoEndpoint,
        region: "us-east-1",
        credentials: { accessKeyId: "test", secretAccessKey: "test" },
      });
      const { ARN } = await secrets.send(
        new CreateSecretCommand({
          Name: `memgate/openai-${process.pid}`,
          SecretString: JSON.stringify({ apiKey: "sk-from-secrets-manager" }),
        }),
      );
      const server = await startModelServer("openai", (request) =>
        request.system.includes("SummaryAnswer")
          ? { answer: { summary: "Memory notes are kept as stated." }, inputTokens: 40, outputTokens: 9 }
          : { answer: honestSegmentAnswer(request.prompt), inputTokens: 300, outputTokens: 30 },
      );
      try {
        const modelWorker = await coldStart<WorkerHandler>(loadWorker, {
          MEMGATE_MODEL: "segmented:openai:test-model",
          OPENAI_BASE_URL: server.url,
          MEMGATE_OPENAI_KEY_SECRET: ARN as string,
        });
        const subject = freshSubject();
        await queued(subject);
        emitted.length = 0;
        const response = await deliver(modelWorker, aws.queueUrl, await receive(aws.queueUrl));
        expect(response.batchItemFailures).toEqual([]);
        expect((await call("GET", `${events(subject)}/recall`)).body.mode).toBe("summary");
        // One segment (the constraint's text; the budget is an assertion, restated exactly) and the summary.
        expect(
          server.requests.map((r) => (r.system.includes("SummaryAnswer") ? "summary" : "segment")),
        ).toEqual(["segment", "summary"]);
        expect(server.requests.map((r) => r.headers.authorization)).toEqual([
          "Bearer sk-from-secrets-manager",
          "Bearer sk-from-secrets-manager",
        ]);
        const kept = await aws.clients.s3.send(
          new ListObjectsV2Command({
            Bucket: aws.bucket,
            Prefix: `segments/${encodeURIComponent(subject)}/`,
          }),
        );
        expect(kept.KeyCount).toBe(2);
        const tokens = emitted
          .filter((line) => line.includes(MetricNames.ModelTokens))
          .map((line) => JSON.parse(line) as { direction: string; ModelTokens: number });
        expect(tokens.map((t) => [t.direction, t.ModelTokens]).sort()).toEqual([
          ["input", 340],
          ["output", 39],
        ]);
      } finally {
        await server.close();
      }
    });

    it("a snapshot whose alias moved before the worker took it: dropped before the model is called, acknowledged", async () => {
      const subject = freshSubject();
      await queued(subject);
      const messages = (await receive(aws.queueUrl)).filter(
        (m) => JSON.parse(m.Body ?? "{}").subject === subject,
      );
      expect(messages).toHaveLength(1);
      // Another worker raced ahead with a fresher snapshot and published first. (The very same
      // snapshot, once its summary is published, is dropped before generating: nothing to do.)
      await call("POST", `${events(subject)}/events`, {
        events: [{ eventId: "n-late", kind: "note", text: "Lunch at noon." }],
      });
      const { lambdaRuntime } = await import("#adapters/aws/lambda-runtime.ts");
      const { run } = await import("#app/run.ts");
      const { takeSnapshot } = await import("#app/snapshot.ts");
      const deps = lambdaRuntime().deps;
      expect((await run(deps, await takeSnapshot(deps, subject))).status).toBe("PUBLISHED");
      const response = await deliver(worker, aws.queueUrl, messages);
      expect(response.batchItemFailures).toEqual([]);
      // Nothing generated for it (no CANDIDATE, no ABANDONED): the switch would have refused it anyway.
      const statuses = (await call("GET", `${events(subject)}/artifacts`)).body.artifacts.map(
        (a: { status: string }) => a.status,
      );
      expect(statuses).toEqual(["PUBLISHED"]);
    });

    it("a snapshot below where its epoch began (through 2 after a revocation at 3): refused, acknowledged, nothing generated", async () => {
      const subject = freshSubject();
      await queued(subject);
      await call("POST", `${events(subject)}/revocations`, { eventIds: ["b-1"] });
      const clock = (await call("GET", `${events(subject)}/clock`)).body;
      expect(clock).toMatchObject({ highWater: 3, inputEpoch: 1 });
      // What the outbox and the revocation asked for is left aside; the message is the one
      // `memgate snapshot --through 2` made before the switch refused such coverage.
      const pending = (await receive(aws.queueUrl)).filter(
        (m) => JSON.parse(m.Body ?? "{}").subject === subject,
      );
      for (const message of pending)
        await aws.clients.sqs.send(
          new DeleteMessageCommand({ QueueUrl: aws.queueUrl, ReceiptHandle: message.ReceiptHandle }),
        );
      await aws.clients.sqs.send(
        new SendMessageCommand({
          QueueUrl: aws.queueUrl,
          MessageBody: JSON.stringify({ subject, highWater: 2, inputEpoch: 1, expectedAlias: null }),
          MessageGroupId: `below-${subject}`,
          MessageDeduplicationId: `below-${subject}`,
        }),
      );
      const messages = (await receive(aws.queueUrl)).filter(
        (m) => JSON.parse(m.Body ?? "{}").subject === subject,
      );
      expect(messages).toHaveLength(1);
      emitted.length = 0;
      expect((await deliver(worker, aws.queueUrl, messages)).batchItemFailures).toEqual([]);
      // Counted as a refused snapshot (CasLost), as the worker counts every dead snapshot.
      expect(emitted.some((line) => line.includes(MetricNames.CasLost))).toBe(true);
      expect((await call("GET", `${events(subject)}/artifacts`)).body.artifacts).toEqual([]);
      expect((await call("GET", `${events(subject)}/recall`)).body.mode).toBe("raw");
      await drain();
    });

    it("a poison message is logged, counted and acknowledged, never retried", async () => {
      await aws.clients.sqs.send(
        new SendMessageCommand({
          QueueUrl: aws.queueUrl,
          MessageBody: "{not a snapshot",
          MessageGroupId: "poison",
          MessageDeduplicationId: `poison-${Date.now()}`,
        }),
      );
      const messages = (await receive(aws.queueUrl)).filter((m) => m.Body === "{not a snapshot");
      expect(messages).toHaveLength(1);
      expect((await deliver(worker, aws.queueUrl, messages)).batchItemFailures).toEqual([]);
      expect(emitted.some((line) => line.includes(MetricNames.PoisonMessage))).toBe(true);
    });

    it("an engine error is reported failed (SQS retries it)", async () => {
      const broken = await coldStart<WorkerHandler>(loadWorker, {
        MEMGATE_TABLE: "no-such-table",
        POWERTOOLS_LOG_LEVEL: "SILENT",
      });
      const subject = freshSubject();
      await queued(subject);
      const messages = await receive(aws.queueUrl);
      const response = await broken(sqsEvent(messages, queueArn), lambdaContext());
      expect(response.batchItemFailures.map((f) => f.itemIdentifier)).toEqual(
        messages.map((m) => m.MessageId),
      );
      // Not deleted: the messages come back after the queue's visibility timeout, as on AWS.
    });

    it("a model timeout is retried, then reaches the DLQ after maxReceiveCount", async () => {
      const suffix = `${process.pid}-${Date.now()}`;
      const dlq = await aws.clients.sqs.send(
        new CreateQueueCommand({
          QueueName: `timeout-dlq-${suffix}.fifo`,
          Attributes: { FifoQueue: "true" },
        }),
      );
      const queue = await aws.clients.sqs.send(
        new CreateQueueCommand({
          QueueName: `timeout-${suffix}.fifo`,
          Attributes: {
            FifoQueue: "true",
            VisibilityTimeout: "1",
            RedrivePolicy: JSON.stringify({
              deadLetterTargetArn: await arnOf(dlq.QueueUrl as string),
              maxReceiveCount: 2,
            }),
          },
        }),
      );
      const queueUrl = queue.QueueUrl as string;
      const slow = await coldStart<WorkerHandler>(loadWorker, {
        MEMGATE_MODEL: "slow",
        MEMGATE_GENERATION_TIMEOUT_MS: "200",
        MEMGATE_QUEUE_URL: queueUrl,
      });
      const subject = freshSubject();
      await call("POST", `${events(subject)}/events`, { events: [constraint] });
      const clock = (await call("GET", `${events(subject)}/clock`)).body;
      await aws.clients.sqs.send(
        new SendMessageCommand({
          QueueUrl: queueUrl,
          MessageBody: JSON.stringify({
            subject,
            highWater: clock.highWater,
            inputEpoch: clock.inputEpoch,
            expectedAlias: null,
          }),
          MessageGroupId: "g",
          MessageDeduplicationId: "timeout-1",
        }),
      );
      let attempts = 0;
      for (let round = 0; round < 10 && attempts < 2; round++) {
        const messages = await receive(queueUrl, 2);
        if (messages.length === 0) continue;
        attempts++;
        const response = await deliver(slow, queueUrl, messages);
        expect(response.batchItemFailures).toHaveLength(1);
      }
      expect(attempts).toBe(2);
      await new Promise((resolve) => setTimeout(resolve, 1_200));
      expect(await receive(queueUrl, 1)).toEqual([]); // past maxReceiveCount: moved on receive
      const dead = await receive(dlq.QueueUrl as string, 2);
      expect(dead.map((m) => JSON.parse(m.Body ?? "{}").subject)).toEqual([subject]);
      expect(emitted.some((line) => line.includes(MetricNames.GenerationFailed))).toBe(true);
    });
  });

  it("the sweep Lambda requests what the stream missed", async () => {
    const sweep = await coldStart<SweepHandler>(loadSweep);
    const subject = freshSubject();
    await aws.store.append(subject, [MemoryEvent.parse(note)]);
    const result = await sweep({}, lambdaContext("memgate-sweep"));
    expect(result.requested).toBeGreaterThan(0);
    const bodies = (await receive(aws.queueUrl)).map((m) => JSON.parse(m.Body ?? "{}").subject);
    expect(bodies).toContain(subject);
    await drain();
  });

  it("the audit Lambda emits StaleVisible and FalseFact per subject, and its heartbeat once a day's round completes", async () => {
    const auditor =
      await coldStart<
        Handler<unknown, { status: string; subjects: number; staleVisible: number; falseFact: number }>
      >(loadAudit);
    await call("POST", `${events(freshSubject())}/events`, { events: [constraint, budget] });
    await drain();
    const before = emitted.length;
    const result = await auditor({}, lambdaContext("memgate-audit"));
    expect(result).toMatchObject({ status: "complete", staleVisible: 0, falseFact: 0 });
    expect(result.subjects).toBeGreaterThan(0);
    const lines = emitted.slice(before);
    const perSubject = lines.filter((l) => l.includes(MetricNames.StaleVisible));
    expect(perSubject).toHaveLength(result.subjects);
    expect(JSON.parse(perSubject.at(-1) as string)).toMatchObject({
      tenant: "acme",
      StaleVisible: 0,
      FalseFact: 0,
    });
    expect(lines.filter((l) => l.includes(MetricNames.AuditHeartbeat))).toHaveLength(1);

    // The same day again: the round is complete, nothing is audited and no heartbeat is sent.
    const again = emitted.length;
    expect(await auditor({}, lambdaContext("memgate-audit"))).toMatchObject({ status: "idle" });
    expect(emitted.slice(again).filter((l) => l.includes(MetricNames.AuditHeartbeat))).toEqual([]);
  });

  it("a missing setting fails the cold start with one line naming it", async () => {
    await expect(coldStart(loadWorker, { MEMGATE_TABLE: "" })).rejects.toThrow(/MEMGATE_TABLE/);
  });
});
