// The functions' policies against what their handlers really call. Each Lambda runs in process
// against DynamoDB Local and moto behind its own recording proxy, through every use case it
// serves (append, recall, review, settings, policy; generate with a segmented model whose key is
// in Secrets Manager, publish, shadow, reject; the outbox, the sweep and the audit containing what
// they find); every AWS call is written down as IAM authorises it and compared with the policy the
// stack gives that function: nothing called is missing from it, and nothing in it goes uncalled.

import { DeleteItemCommand, UpdateItemCommand } from "@aws-sdk/client-dynamodb";
import { DeleteObjectCommand, ListObjectsV2Command } from "@aws-sdk/client-s3";
import { CreateSecretCommand, SecretsManagerClient } from "@aws-sdk/client-secrets-manager";
import {
  DeleteMessageCommand,
  GetQueueAttributesCommand,
  type Message,
  ReceiveMessageCommand,
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
import { honestSegmentAnswer, type ModelServer, startModelServer } from "#harness/model-servers.ts";
import { SAMPLE } from "../support/builders.ts";
import { httpApiEvent, lambdaContext, sqsEvent, streamEvent } from "../support/lambda-events.ts";
import { type IamCall, type RecordingProxy, startRecordingProxy } from "../support/recording-proxy.ts";
import { StreamReader } from "../support/stream-reader.ts";
import { flat, functionPolicies, listOf, synth, tenant } from "./templates.ts";

const { budget, constraint, note } = SAMPLE;

type Handler<E, R> = (event: E, context: Context) => Promise<R>;
type FunctionName = "api" | "worker" | "outbox" | "sweep" | "audit";
const FUNCTIONS: FunctionName[] = ["api", "worker", "outbox", "sweep", "audit"];

const endpoints = { dynamoEndpoint: inject("dynamoEndpoint"), motoEndpoint: inject("motoEndpoint") };
const SECRET = "arn:aws:secretsmanager:us-east-1:123456789012:secret:memgate/openai-AbCdEf";
let aws: Awaited<ReturnType<typeof openAwsStores>>;
let reader: StreamReader;
let queueArn: string;
let model: ModelServer;
const proxies = {} as Record<FunctionName, RecordingProxy>;
let api: Handler<APIGatewayProxyEventV2, APIGatewayProxyResultV2>;
let worker: Handler<SQSEvent, SQSBatchResponse>;
let outbox: Handler<DynamoDBStreamEvent, unknown>;
let sweep: Handler<unknown, unknown>;
let audit: Handler<unknown, { staleVisible: number; falseFact: number }>;

/**
 * Runs `work` with the AWS endpoints of `fn`'s proxy: the SDK reads them from the environment,
 * so each function's calls reach its own recorder (the test calls one function at a time).
 */
async function as<T>(fn: FunctionName, work: () => Promise<T>): Promise<T> {
  const saved = { ...process.env };
  for (const service of ["DYNAMODB", "S3", "SQS", "SECRETS_MANAGER"])
    process.env[`AWS_ENDPOINT_URL_${service}`] = proxies[fn].url;
  try {
    return await work();
  } finally {
    process.env = saved;
  }
}

/**
 * Imports a handler module afresh (its cold start) with `fn`'s endpoints and extra settings. The
 * SQS client sends to the queue URL's host, so the function's queue URL names its proxy too.
 */
async function coldStart<T>(fn: FunctionName, settings: Record<string, string> = {}): Promise<T> {
  vi.resetModules();
  const queueUrl = new URL(aws.queueUrl);
  const proxied = new URL(proxies[fn].url);
  queueUrl.host = proxied.host;
  const overrides = { ...settings, MEMGATE_QUEUE_URL: queueUrl.toString() };
  Object.assign(process.env, overrides);
  const modules = {
    api: () => import("../../lambdas/api/handler.ts"),
    worker: () => import("../../lambdas/worker/handler.ts"),
    outbox: () => import("../../lambdas/outbox/handler.ts"),
    sweep: () => import("../../lambdas/sweep/handler.ts"),
    audit: () => import("../../lambdas/audit/handler.ts"),
  };
  const load: () => Promise<{ handler: unknown }> = modules[fn];
  try {
    return (await as(fn, load)).handler as T;
  } finally {
    for (const name of Object.keys(overrides)) delete process.env[name];
  }
}

beforeAll(async () => {
  // Powertools says so after every invocation that emitted nothing; the test does not check metrics.
  const warn = console.warn.bind(console);
  vi.spyOn(console, "warn").mockImplementation((...args: unknown[]) => {
    if (!String(args[0]).startsWith("No application metrics to publish")) warn(...args);
  });
  aws = await openAwsStores(endpoints, undefined, { stream: true });
  Object.assign(process.env, {
    AWS_REGION: "us-east-1",
    AWS_ACCESS_KEY_ID: "test",
    AWS_SECRET_ACCESS_KEY: "test",
    MEMGATE_TENANT: "acme",
    MEMGATE_TABLE: aws.store.tableName,
    MEMGATE_BUCKET: aws.bucket,
    MEMGATE_QUEUE_URL: aws.queueUrl,
    POWERTOOLS_TRACE_ENABLED: "false",
    POWERTOOLS_LOG_LEVEL: "ERROR",
    POWERTOOLS_METRICS_DISABLED: "true",
  });
  for (const fn of FUNCTIONS)
    proxies[fn] = await startRecordingProxy({
      dynamo: endpoints.dynamoEndpoint,
      moto: endpoints.motoEndpoint,
    });
  reader = await StreamReader.open(aws.clients.dynamo, aws.store.tableName, endpoints.dynamoEndpoint);
  const attributes = await aws.clients.sqs.send(
    new GetQueueAttributesCommand({ QueueUrl: aws.queueUrl, AttributeNames: ["QueueArn"] }),
  );
  queueArn = attributes.Attributes?.QueueArn as string;
  const secrets = new SecretsManagerClient({
    endpoint: endpoints.motoEndpoint,
    region: "us-east-1",
    credentials: { accessKeyId: "test", secretAccessKey: "test" },
  });
  const { ARN } = await secrets.send(
    new CreateSecretCommand({
      Name: `memgate/least-privilege-${process.pid}`,
      SecretString: JSON.stringify({ apiKey: "sk-test" }),
    }),
  );
  // A segmented language model that answers honestly, except about the vault, whose constraint
  // it drops every time (so the gate refuses it, and its repair).
  model = await startModelServer("openai", (request) =>
    request.system.includes("SummaryAnswer")
      ? { answer: { summary: "Memory notes are kept as stated." }, inputTokens: 40, outputTokens: 9 }
      : request.prompt.includes("vault")
        ? { answer: { claims: [], pending: [] }, inputTokens: 300, outputTokens: 3 }
        : { answer: honestSegmentAnswer(request.prompt), inputTokens: 300, outputTokens: 30 },
  );
  api = await coldStart("api");
  worker = await coldStart("worker", {
    MEMGATE_MODEL: "segmented:openai:test-model",
    OPENAI_BASE_URL: model.url,
    MEMGATE_OPENAI_KEY_SECRET: ARN as string,
  });
  outbox = await coldStart("outbox");
  sweep = await coldStart("sweep");
  audit = await coldStart("audit");
});

afterAll(async () => {
  vi.restoreAllMocks();
  reader?.close();
  await model?.close();
  for (const proxy of Object.values(proxies)) await proxy.close();
});

let subjects = 0;
const freshSubject = () => `least-privilege/${process.pid}/${++subjects}`;
const at = (subject: string) => `/v1/subjects/${encodeURIComponent(subject)}`;

async function call(method: string, path: string, body?: unknown) {
  const result = await as("api", () =>
    api(
      httpApiEvent(method, path, {
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        headers: { "content-type": "application/json" },
      }),
      lambdaContext("memgate-api"),
    ),
  );
  if (typeof result === "string") throw new Error("the API answered a bare string");
  const answer = { status: result.statusCode, body: JSON.parse(result.body ?? "null") };
  expect(answer.status, `${method} ${path}: ${result.body}`).toBeLessThan(400);
  return answer.body;
}

/** Runs the queue dry through the worker, deleting what it acknowledged (as Lambda does). */
async function drain(): Promise<void> {
  for (;;) {
    const { Messages } = await aws.clients.sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: aws.queueUrl,
        MaxNumberOfMessages: 1,
        WaitTimeSeconds: 1,
        MessageSystemAttributeNames: ["All"],
      }),
    );
    const messages: Message[] = Messages ?? [];
    if (messages.length === 0) return;
    const response = await as("worker", () =>
      worker(sqsEvent(messages, queueArn), lambdaContext("memgate-worker")),
    );
    expect(response.batchItemFailures).toEqual([]);
    for (const message of messages)
      await aws.clients.sqs.send(
        new DeleteMessageCommand({ QueueUrl: aws.queueUrl, ReceiptHandle: message.ReceiptHandle }),
      );
  }
}

async function followStream() {
  const records = await reader.poll();
  await as("outbox", () => outbox(streamEvent(records, reader.streamArn), lambdaContext("memgate-outbox")));
}

const vault = { eventId: "v-1", kind: "constraint", text: "Never write the vault code down." };

/** Each function's policy, as "action resource" pairs the recorder can observe. */
function observablePolicy(statements: ReturnType<typeof functionPolicies>[string]): Set<string> {
  const pairs = new Set<string>();
  for (const statement of statements) {
    for (const action of listOf(statement.Action) as string[])
      for (const resource of listOf(statement.Resource)) {
        const name = resourceClass(flat(resource));
        if (name !== null && !EVENT_SOURCE_ACTIONS.has(action)) pairs.add(`${action} ${name}`);
      }
  }
  return pairs;
}

/** What Lambda's event source mappings call with the function's role, not the function itself. */
const EVENT_SOURCE_ACTIONS = new Set([
  "sqs:ReceiveMessage",
  "sqs:DeleteMessage",
  "sqs:GetQueueAttributes",
  "dynamodb:DescribeStream",
  "dynamodb:GetRecords",
  "dynamodb:GetShardIterator",
  "dynamodb:ListStreams",
]);

/** A policy resource in the recorder's words; null for what it cannot see (logs, traces, keys). */
function resourceClass(arn: string): string | null {
  const table = /^<Table\w+\.Arn>(\/index\/(\w+))?$/.exec(arn);
  if (table) return table[2] ? `index/${table[2]}` : "table";
  const objects = /^<Artifacts\w+\.Arn>(\/(\w+)\/\*)?$/.exec(arn);
  if (objects) return objects[2] ? `objects/${objects[2]}/` : "bucket";
  if (/^<Snapshots\w+\.Arn>$/.test(arn)) return "queue";
  if (arn === SECRET) return "secret";
  return null;
}

describe("the functions' policies against the calls their handlers make", () => {
  it("allow every call each function makes, and nothing it never calls", { timeout: 300_000 }, async () => {
    // Shadow mode: candidates wait for a reviewer, who approves one and rejects another.
    await call("PUT", "/v1/settings", { publishMode: "shadow" });
    await call("GET", "/v1/settings");
    const [approved, rejected] = [freshSubject(), freshSubject()];
    await call("POST", `${at(approved)}/events`, { events: [constraint, budget] });
    await call("POST", `${at(rejected)}/events`, { events: [constraint, note] });
    await drain();
    expect((await call("GET", "/v1/subjects?limit=100")).subjects.length).toBeGreaterThanOrEqual(2);
    const shadowOf = async (subject: string) =>
      String((await call("GET", `${at(subject)}/review`)).shadows[0].artifactId);
    const summary = await shadowOf(approved);
    await call("POST", `/v1/artifacts/${encodeURIComponent(summary)}/approve`);
    await call("POST", `/v1/artifacts/${encodeURIComponent(await shadowOf(rejected))}/reject`);

    // Live mode: the worker publishes itself; the vault's answers are refused, repair included.
    await call("PUT", "/v1/settings", { publishMode: "live" });
    const [published, refused, swept, audited] = [
      freshSubject(),
      freshSubject(),
      freshSubject(),
      freshSubject(),
    ];
    for (const subject of [published, swept, audited])
      await call("POST", `${at(subject)}/events`, { events: [constraint, budget] });
    await call("POST", `${at(refused)}/events`, { events: [vault] });
    await drain();
    const statuses = async (subject: string) =>
      (await call("GET", `${at(subject)}/artifacts`)).artifacts.map((a: { status: string }) => a.status);
    expect(await statuses(published)).toEqual(["PUBLISHED"]);
    expect(await statuses(refused)).toEqual(["REJECTED"]);

    // An agent reads: recall within a budget (which reads the summary's recall index; one summary
    // from before recall indexes were written has none, which S3 reports as 404 only to a caller
    // that may list the bucket), the artifact, its claims and lineage, the clock; an admin reads
    // and sets a trust policy.
    expect((await call("GET", `${at(approved)}/recall?budget=2000`)).mode).toBe("summary");
    const listed = await aws.clients.s3.send(
      new ListObjectsV2Command({ Bucket: aws.bucket, Prefix: `recall/${encodeURIComponent(published)}/` }),
    );
    for (const object of listed.Contents ?? [])
      await aws.clients.s3.send(new DeleteObjectCommand({ Bucket: aws.bucket, Key: object.Key }));
    expect((await call("GET", `${at(published)}/recall?budget=2000`)).mode).toBe("summary");
    await call("GET", `/v1/artifacts/${encodeURIComponent(summary)}`);
    await call("GET", `/v1/artifacts/${encodeURIComponent(summary)}/claims`);
    await call("GET", `/v1/artifacts/${encodeURIComponent(summary)}/lineage?format=prov-json`);
    await call("GET", `${at(approved)}/clock`);
    const policy = await call("GET", `${at(approved)}/policy`);
    await call("PUT", `${at(approved)}/policy`, policy);
    await call("POST", `${at(approved)}/consolidations`);

    // An agent revokes: recall goes raw at once and the API marks the summary STALE itself.
    await call("POST", `${at(approved)}/revocations`, { eventIds: ["b-1"] });
    expect((await call("GET", `${at(approved)}/recall`)).mode).toBe("raw");

    // Revocations committed by a process that died at once: the outbox follows one, the sweep the other.
    await aws.store.append(published, [
      MemoryEvent.parse({ eventId: "r-1", kind: "revocation", revokes: ["b-1"] }),
    ]);
    await followStream();
    await aws.store.append(swept, [
      MemoryEvent.parse({ eventId: "r-1", kind: "revocation", revokes: ["b-1"] }),
    ]);
    // The audit's first round, before the sweep: the subjects' listing falls back to the Scan.
    await as("audit", () => audit({}, lambdaContext("memgate-audit")));
    await as("sweep", () => sweep({}, lambdaContext("memgate-sweep")));
    // The sweep has backfilled the subject index (a new table: nothing to add): pages by Query.
    expect((await call("GET", "/v1/subjects?limit=2")).next).not.toBeNull();

    // The raw layer edited under a served summary: the audit finds it and contains it.
    const edited = { ...constraint, text: "Backups need not be encrypted." };
    await aws.clients.dynamo.send(
      new UpdateItemCommand({
        TableName: aws.store.tableName,
        Key: { pk: { S: `S#${audited}` }, sk: { S: "E#c-1" } },
        UpdateExpression: "SET body = :body",
        ExpressionAttributeValues: { ":body": { S: JSON.stringify(MemoryEvent.parse(edited)) } },
      }),
    );
    // The next day's round (its checkpoint taken away), through the subject index.
    await aws.clients.dynamo.send(
      new DeleteItemCommand({
        TableName: aws.store.tableName,
        Key: { pk: { S: "TENANT" }, sk: { S: "AUDIT-ROUND" } },
      }),
    );
    const report = await as("audit", () => audit({}, lambdaContext("memgate-audit")));
    expect(report.staleVisible + report.falseFact).toBeGreaterThan(0);

    // What each function called against what its policy allows.
    const template = synth([
      tenant({ id: "acme", model: "segmented:openai:test-model", openAiKeySecretArn: SECRET }),
    ]).templates[0];
    if (!template) throw new Error("no template");
    const policies = functionPolicies(template);
    const differences = Object.fromEntries(
      FUNCTIONS.map((fn) => {
        const called = new Set(proxies[fn].calls.map((c: IamCall) => `${c.action} ${c.resource}`));
        const allowed = observablePolicy(policies[fn] ?? []);
        return [
          fn,
          {
            calledButNotAllowed: [...called].filter((pair) => !allowed.has(pair)).sort(),
            allowedButNeverCalled: [...allowed].filter((pair) => !called.has(pair)).sort(),
          },
        ];
      }),
    );
    const none = { calledButNotAllowed: [], allowedButNeverCalled: [] };
    expect(differences).toEqual(Object.fromEntries(FUNCTIONS.map((fn) => [fn, none])));
    for (const fn of FUNCTIONS)
      for (const put of proxies[fn].calls.filter((c) => c.action === "s3:PutObject"))
        expect(put.ifNoneMatch, `${fn} puts ${put.resource} once`).toBe("*");
  });
});
