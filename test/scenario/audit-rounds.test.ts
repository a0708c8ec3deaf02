// The scheduled audit in rounds on DynamoDB Local: invocations that run short of time each audit a
// part and leave a checkpoint, the next resumes after it, every subject is audited once a round, the
// round completes in the invocation that audits the last subject (and only then), a finished day
// is idle, the next day starts again, and of two invocations on one checkpoint only one goes on.
import { UpdateItemCommand } from "@aws-sdk/client-dynamodb";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { MemoryQueue } from "#adapters/embedded/memory-queue.ts";
import { appendEvents } from "#app/append.ts";
import type { SubjectAudit } from "#app/audit.ts";
import { type AuditRoundDeps, auditRound, SUBJECT_MARGIN_MS } from "#app/audit-round.ts";
import type { Deps } from "#app/deps.ts";
import { run } from "#app/run.ts";
import { takeSnapshot } from "#app/snapshot.ts";
import { MemoryEvent } from "#domain/schemas.ts";
import { openAwsStores, type RequestCounter } from "#harness/aws-stores.ts";
import { depsOver } from "#harness/pipeline-builders.ts";
import { SAMPLE } from "../support/builders.ts";

const { budget, constraint } = SAMPLE;

const endpoints = { dynamoEndpoint: inject("dynamoEndpoint"), motoEndpoint: inject("motoEndpoint") };
const JUDGE_MS = 1_000;

let aws: Awaited<ReturnType<typeof openAwsStores>>;
const counter: RequestCounter = { count: 0, operations: [] };
let today = new Date("2026-12-01T00:05:00Z");
const subjects = Array.from({ length: 7 }, (_, i) => `round/${process.pid}/${i + 1}`);
const tampered = subjects[4] as string;

function depsAt(): Deps & AuditRoundDeps {
  const deps = depsOver(
    { events: aws.store, alias: aws.store, artifacts: aws.artifacts, settings: aws.store },
    { queue: new MemoryQueue(), now: () => today },
  );
  return { ...deps, rounds: aws.store };
}

/** One invocation with time for `subjects` subjects, then no more (what Lambda's clock would say). */
async function invocation(allowed: number) {
  const seen: Array<[string, SubjectAudit]> = [];
  const report = await auditRound(depsAt(), {
    pageSize: 2,
    judgeTimeoutMs: JUDGE_MS,
    remainingMs: () => (seen.length < allowed ? 600_000 : JUDGE_MS + SUBJECT_MARGIN_MS),
    onSubject: (subject, found) => seen.push([subject, found]),
  });
  return { report, seen };
}

beforeAll(async () => {
  aws = await openAwsStores(endpoints, counter);
  const deps = depsAt();
  for (const subject of subjects) {
    await appendEvents(deps, subject, [budget, constraint]);
    expect((await run(deps, await takeSnapshot(deps, subject))).status).toBe("PUBLISHED");
  }
  // The raw layer edited under one served summary: the round must find it.
  await aws.clients.dynamo.send(
    new UpdateItemCommand({
      TableName: aws.store.tableName,
      Key: { pk: { S: `S#${tampered}` }, sk: { S: "E#c-1" } },
      UpdateExpression: "SET body = :body",
      ExpressionAttributeValues: {
        ":body": {
          S: JSON.stringify(MemoryEvent.parse({ ...constraint, text: "Backups need not be encrypted." })),
        },
      },
    }),
  );
  // A new table: its first sweep would do this; the rounds then read the index, never a Scan.
  expect(await aws.store.indexSubjects()).toEqual({ added: 0, complete: true });
});

afterAll(() => aws?.clients.dynamo.destroy());

describe("DynamoDB: the audit in rounds with a checkpoint", () => {
  it("resumes where the last invocation stopped and completes once every subject is audited", async () => {
    counter.operations.length = 0;
    const first = await invocation(3);
    expect(first.report).toMatchObject({ status: "paused", audited: 3 });
    expect(first.report.checkpoint).toMatchObject({
      round: "2026-12-01",
      after: subjects[2],
      complete: false,
    });

    const second = await invocation(3);
    expect(second.report).toMatchObject({ status: "paused", audited: 3 });
    const third = await invocation(3);
    expect(third.report.status).toBe("complete");
    const audited = [...first.seen, ...second.seen, ...third.seen].map(([subject]) => subject);
    expect(audited).toEqual([...subjects].sort());
    expect(third.report.checkpoint).toMatchObject({
      complete: true,
      subjects: 7,
      served: 7,
      staleVisible: 1,
    });
    expect(third.report.checkpoint?.falseFact).toBeGreaterThan(0);
    // Found and reported in the invocation that audited it, contained at once.
    const found = [...first.seen, ...second.seen, ...third.seen].find(([subject]) => subject === tampered);
    expect(found?.[1].contained).toHaveLength(1);
    expect(counter.operations).not.toContain("ScanCommand");
  });

  it("is idle for the rest of a day whose round is complete, and starts again the next day", async () => {
    expect((await invocation(10)).report).toMatchObject({ status: "idle", audited: 0 });
    today = new Date("2026-12-02T00:10:00Z");
    const next = await invocation(10);
    expect(next.report).toMatchObject({ status: "complete", audited: 7 });
    expect(next.report.checkpoint).toMatchObject({ round: "2026-12-02", subjects: 7, staleVisible: 0 });
  });

  it("lets one of two invocations on the same checkpoint go on", async () => {
    const read = await aws.store.checkpoint();
    if (read === null) throw new Error("no checkpoint");
    const next = { ...read, version: read.version + 1 };
    expect(await aws.store.saveCheckpoint(next, read.version)).toBe(true);
    expect(await aws.store.saveCheckpoint({ ...next, version: read.version + 2 }, read.version)).toBe(false);
    expect((await aws.store.checkpoint())?.version).toBe(read.version + 1);
  });
});
