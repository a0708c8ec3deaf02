import { randomUUID } from "node:crypto";
import { TransactionCanceledException } from "@aws-sdk/client-dynamodb";
import { paginateQuery } from "@aws-sdk/lib-dynamodb";
import { beforeAll, describe, expect, inject, it } from "vitest";
import { chunkForTransactions } from "#adapters/aws/dynamo-items.ts";
import { DynamoStore } from "#adapters/aws/dynamo-store.ts";
import { createMemgateTable } from "#adapters/aws/table.ts";
import { MemoryEvent } from "#domain/schemas.ts";
import { dynamoClient } from "#harness/aws-stores.ts";
import { candidateRecord } from "#harness/candidate-record.ts";
import { StoreContentionError } from "#ports/errors.ts";

/**
 * What DynamoDB Local never does, injected with an SDK middleware on a real table: a
 * TransactionConflict (what real DynamoDB returns under contention), and a failure between the
 * chunks of a large append (a Lambda dying mid-batch).
 */
type Fault = (command: string) => Error | null;

let store: DynamoStore;
let fault: Fault = () => null;

beforeAll(async () => {
  const client = dynamoClient({
    dynamoEndpoint: inject("dynamoEndpoint"),
    motoEndpoint: inject("motoEndpoint"),
  });
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const error = fault(String(context.commandName));
      if (error) throw error;
      return next(args);
    },
    { step: "initialize", name: "memgateFaultInjection" },
  );
  const table = `memgate-faults-${randomUUID().slice(0, 8)}`;
  await createMemgateTable(client, table);
  store = new DynamoStore(client, table);
});

const conflict = () =>
  new TransactionCanceledException({
    message:
      "Transaction cancelled, please refer cancellation reasons for specific reasons [TransactionConflict]",
    $metadata: {},
    CancellationReasons: [{ Code: "TransactionConflict" }],
  });

/** Fails the next `count` TransactWriteItems with `make()`, then lets them through. */
function failTransactions(count: number, make: () => Error): void {
  let left = count;
  fault = (command) => (command === "TransactWriteItemsCommand" && left-- > 0 ? make() : null);
}

const event = (i: number, extra: Record<string, unknown> = {}) =>
  MemoryEvent.parse({
    eventId: `e-${i}`,
    kind: "fact",
    text: `fact ${i}`,
    assertions: [{ key: `k-${i % 7}`, value: { quantity: String(i), unit: "km" }, polarity: "affirmed" }],
    ...extra,
  });

describe("DynamoDB faults that local engines never produce", () => {
  it("an append that meets a TransactionConflict plans again and commits once", async () => {
    const subject = "conflicted-append";
    failTransactions(2, conflict);
    const result = await store.append(subject, [event(1), event(2)]);
    fault = () => null;
    expect(result.appended).toEqual(["e-1", "e-2"]);
    expect((await store.snapshot(subject)).highWater).toBe(2);
  });

  it("an append that keeps losing is StoreContentionError (exit 3, retryable), with nothing written", async () => {
    const subject = "always-conflicted";
    failTransactions(100, conflict);
    await expect(store.append(subject, [event(1)])).rejects.toBeInstanceOf(StoreContentionError);
    fault = () => null;
    expect((await store.snapshot(subject)).highWater).toBe(0);
    // The identical re-send, once the contention is gone, appends it.
    expect((await store.append(subject, [event(1)])).appended).toEqual(["e-1"]);
  });

  it("a switch that meets a TransactionConflict has no winner: retryable, the alias untouched", async () => {
    const subject = "conflicted-publish";
    await store.append(subject, [event(1)]);
    await store.recordArtifact(candidateRecord(subject, "s-1", 1, 0, null));
    const request = { subject, artifactId: "s-1", expectedAlias: null, inputEpoch: 0, newCoversThrough: 1 };
    failTransactions(1, conflict);
    await expect(store.publishIfUnchanged(request)).rejects.toBeInstanceOf(StoreContentionError);
    expect(await store.readAlias(subject)).toBeNull();
    expect((await store.getRecord(subject, "s-1"))?.status).toBe("CANDIDATE");
    // The same snapshot, retried, wins.
    expect(await store.publishIfUnchanged(request)).toEqual({
      artifactId: "s-1",
      sourceEpoch: 0,
      coversThrough: 1,
    });
  });

  it("a batch that dies between its chunks leaves a committed prefix; the re-sent batch completes it", async () => {
    const subject = "chunked";
    const batch = Array.from({ length: 150 }, (_, i) => event(i + 1));
    const chunks = chunkForTransactions(batch);
    expect(chunks.length).toBeGreaterThan(1);
    let transactions = 0;
    fault = (command) =>
      command === "TransactWriteItemsCommand" && ++transactions === 2 ? new Error("socket hang up") : null;
    await expect(store.append(subject, batch)).rejects.toThrow("socket hang up");
    fault = () => null;
    // Readers see the first chunk whole and nothing of the second.
    const snapshot = await store.snapshot(subject);
    const first = chunks[0]?.length ?? 0;
    expect(snapshot.highWater).toBe(first);
    expect((await store.eventsThrough(subject, snapshot.highWater)).map((e) => e.eventId)).toEqual(
      batch.slice(0, first).map((e) => e.eventId),
    );
    const resent = await store.append(subject, batch);
    expect(resent.duplicates).toHaveLength(first);
    expect(resent.appended).toHaveLength(batch.length - first);
    expect((await store.snapshot(subject)).highWater).toBe(batch.length);
  });

  it("a key asserted by a thousand events keeps every index item small, and a contradiction is still found", async () => {
    const subject = "hot-key";
    const same = Array.from({ length: 1000 }, (_, i) =>
      MemoryEvent.parse({
        eventId: `h-${i}`,
        kind: "fact",
        text: "the bucket holds backups",
        assertions: [{ key: "bucket/purpose", value: { text: "backups" }, polarity: "affirmed" }],
      }),
    );
    for (let i = 0; i < same.length; i += 250) await store.append(subject, same.slice(i, i + 250));
    const items = [];
    const pages = paginateQuery(
      { client: store.doc },
      {
        TableName: store.tableName,
        KeyConditionExpression: "pk = :pk AND begins_with(sk, :k)",
        ExpressionAttributeValues: { ":pk": `S#${subject}`, ":k": "K#" },
      },
    );
    for await (const page of pages) items.push(...(page.Items ?? []));
    expect(items).toHaveLength(1000);
    expect(Math.max(...items.map((item) => JSON.stringify(item).length))).toBeLessThan(400);
    const contradiction = await store.append(subject, [
      MemoryEvent.parse({
        eventId: "h-other",
        kind: "fact",
        text: "the bucket holds logs",
        assertions: [{ key: "bucket/purpose", value: { text: "logs" }, polarity: "affirmed" }],
      }),
    ]);
    expect(contradiction.epochMoved).toBe(true);
  });
});
