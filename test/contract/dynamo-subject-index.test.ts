// Subjects listed from the global index bySubject on DynamoDB Local: pages by Query, never a Scan,
// once the backfill has listed the clocks written before the index; until then the listing falls
// back to the Scan, so an older subject is never missing; the backfill resumes where it stopped.
import { UpdateItemCommand } from "@aws-sdk/client-dynamodb";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { DynamoStore } from "#adapters/aws/dynamo-store.ts";
import { MemoryEvent, TrustPolicy } from "#domain/schemas.ts";
import { openAwsStores, type RequestCounter } from "#harness/aws-stores.ts";

const endpoints = { dynamoEndpoint: inject("dynamoEndpoint"), motoEndpoint: inject("motoEndpoint") };
const note = MemoryEvent.parse({ eventId: "n-1", kind: "note", text: "Likes tea." });
const counter: RequestCounter = { count: 0, operations: [] };
let aws: Awaited<ReturnType<typeof openAwsStores>>;
const subjects = ["a/1", "b?2", "c#3", "d%4", "e 5"].map((s) => `${s}-${process.pid}`);

/** What a clock written before the index looks like: no subjectList. */
async function unlist(subject: string) {
  await aws.clients.dynamo.send(
    new UpdateItemCommand({
      TableName: aws.store.tableName,
      Key: { pk: { S: `S#${subject}` }, sk: { S: "CLOCK" } },
      UpdateExpression: "REMOVE subjectList",
    }),
  );
}

async function allPages(store: DynamoStore, limit: number) {
  const seen: string[] = [];
  let after: string | null = null;
  for (;;) {
    const page = await store.subjectsPage(after, limit);
    seen.push(...page.subjects);
    if (!page.more) return seen;
    after = page.subjects.at(-1) ?? null;
  }
}

beforeAll(async () => {
  aws = await openAwsStores(endpoints, counter);
  for (const subject of subjects.slice(0, 4)) await aws.store.append(subject, [note]);
  // A subject whose clock a trust policy created before any event: listed too.
  await aws.store.setTrustPolicy(
    subjects[4] as string,
    TrustPolicy.parse({ minTrust: "tool" }),
    { clock: { highWater: 0, inputEpoch: 0 }, policy: await aws.store.storedPolicy(subjects[4] as string) },
    false,
  );
  await unlist(subjects[1] as string);
  await unlist(subjects[3] as string);
});

afterAll(() => aws?.clients.dynamo.destroy());

describe("DynamoDB: the subject index", () => {
  it("falls back to the Scan before the backfill, missing none of the older subjects", async () => {
    counter.operations.length = 0;
    expect(await allPages(aws.store, 2)).toEqual([...subjects].sort());
    expect(counter.operations).toContain("ScanCommand");
  });

  it("backfills a page at a time, resuming where it stopped, then pages by Query alone", async () => {
    // DynamoDB Local's Scan pages are 1 MB: one page holds this table, so one run completes it.
    const first = await aws.store.indexSubjects({ maxPages: 1 });
    expect(first).toEqual({ added: 2, complete: true });
    expect(await aws.store.indexSubjects()).toEqual({ added: 0, complete: true });

    // A second process (another Lambda container) learns the index is complete from the table.
    const other = new DynamoStore(aws.clients.dynamo, aws.store.tableName);
    counter.operations.length = 0;
    expect(await allPages(other, 2)).toEqual([...subjects].sort());
    expect(await other.listSubjects()).toEqual([...subjects].sort());
    expect(counter.operations).not.toContain("ScanCommand");
    expect(counter.operations).toContain("QueryCommand");
  });

  it("lists a new subject by its first append, without any backfill", async () => {
    const late = `f-${process.pid}`;
    await aws.store.append(late, [note]);
    expect((await aws.store.subjectsPage(subjects.at(-1) as string, 10)).subjects).toContain(late);
    const first = await aws.store.subjectsPage(null, 1);
    expect(first).toEqual({ subjects: [[...subjects, late].sort()[0]], more: true });
  });
});
