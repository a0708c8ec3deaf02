import { ReceiveMessageCommand } from "@aws-sdk/client-sqs";
import { UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { beforeAll, describe, expect, inject, it } from "vitest";
import { MemoryEvent } from "#domain/schemas.ts";
import { openAwsStores, type RequestCounter } from "#harness/aws-stores.ts";
import { candidateRecord } from "#harness/candidate-record.ts";
import { describeStoreContract, type StoreUnderTest } from "./store-contract.ts";

let stores: Awaited<ReturnType<typeof openAwsStores>>;
const counter: RequestCounter = { count: 0, operations: [] };
beforeAll(async () => {
  stores = await openAwsStores(
    { dynamoEndpoint: inject("dynamoEndpoint"), motoEndpoint: inject("motoEndpoint") },
    counter,
  );
});

describeStoreContract(
  "AWS (DynamoDB Local, S3 and SQS on moto)",
  (): StoreUnderTest => ({
    events: stores.store,
    alias: stores.store,
    artifacts: stores.artifacts,
    queue: stores.queue,
    settings: stores.store,
    boundedTransactions: true,
  }),
);

describe("AWS request counts", () => {
  it("a snapshot is exactly one DynamoDB request, and so is a publish", async () => {
    const subject = "user-counted";
    await stores.store.append(subject, [MemoryEvent.parse({ eventId: "a", kind: "fact", text: "a" })]);
    await stores.artifacts.recordArtifact(candidateRecord(subject, "s-1", 1, 0, null));

    counter.count = 0;
    counter.operations = [];
    const snapshot = await stores.store.snapshot(subject);
    expect(counter.operations).toEqual(["TransactGetItemsCommand"]);

    counter.count = 0;
    counter.operations = [];
    await stores.store.publishIfUnchanged({
      subject,
      artifactId: "s-1",
      expectedAlias: snapshot.expectedAlias,
      inputEpoch: snapshot.inputEpoch,
      newCoversThrough: 1,
    });
    expect(counter.operations).toEqual(["TransactWriteItemsCommand"]);
  });
});

describe("the switch on DynamoDB Local", () => {
  it("sent again after it committed (an SDK retry of a lost response), it is the same transaction, not alias-moved", async () => {
    const subject = "user-switch-resent";
    await stores.store.append(subject, [MemoryEvent.parse({ eventId: "a", kind: "fact", text: "a" })]);
    await stores.artifacts.recordArtifact(candidateRecord(subject, "s-1", 1, 0, null));
    const request = { subject, artifactId: "s-1", expectedAlias: null, inputEpoch: 0, newCoversThrough: 1 };
    const published = await stores.store.publishIfUnchanged(request);
    expect(await stores.store.publishIfUnchanged(request)).toEqual(published);
    expect(await stores.store.readAlias(subject)).toEqual(published);
  });

  it("a publish that read live settings is refused when the tenant switched to shadow meanwhile", async () => {
    const subject = "user-switch-shadowed";
    await stores.store.append(subject, [MemoryEvent.parse({ eventId: "a", kind: "fact", text: "a" })]);
    await stores.artifacts.recordArtifact(candidateRecord(subject, "s-1", 1, 0, null));
    await stores.store.updateSettings({ publishMode: "shadow" });
    try {
      const request = { subject, artifactId: "s-1", expectedAlias: null, inputEpoch: 0, newCoversThrough: 1 };
      await expect(stores.store.publishIfUnchanged({ ...request, whileLive: true })).rejects.toMatchObject({
        reason: "publish-mode-changed",
      });
      expect(await stores.store.readAlias(subject)).toBeNull();
      // An approval publishes in either mode.
      expect((await stores.store.publishIfUnchanged(request)).artifactId).toBe("s-1");
    } finally {
      await stores.store.updateSettings({ publishMode: "live" });
    }
  });
});

describe("a DynamoDB clock written before it kept where its epoch began", () => {
  it("reads as begun at its highWater (0 when it never moved); the switch holds to that; the next write keeps it", async () => {
    const subject = "user-clock-before-epoch-moved-at";
    const fact = (eventId: string) => MemoryEvent.parse({ eventId, kind: "fact", text: eventId });
    await stores.store.append(subject, [fact("a"), fact("b")]);
    await stores.store.append(subject, [
      MemoryEvent.parse({ eventId: "r", kind: "revocation", revokes: ["b"] }),
    ]);
    await stores.store.append(subject, [fact("c")]);
    expect(await stores.store.snapshot(subject)).toMatchObject({
      highWater: 4,
      inputEpoch: 1,
      epochMovedAt: 3,
    });
    await stores.store.doc.send(
      new UpdateCommand({
        TableName: stores.store.tableName,
        Key: { pk: `S#${subject}`, sk: "CLOCK" },
        UpdateExpression: "REMOVE epochMovedAt",
      }),
    );
    expect((await stores.store.snapshot(subject)).epochMovedAt).toBe(4);
    await stores.artifacts.recordArtifact(candidateRecord(subject, "s-3", 3, 1, null));
    const request = { subject, expectedAlias: null, inputEpoch: 1 };
    await expect(
      stores.store.publishIfUnchanged({ ...request, artifactId: "s-3", newCoversThrough: 3 }),
    ).rejects.toMatchObject({ reason: "epoch-moved", message: expect.stringMatching(/began at 4/) });
    await stores.store.append(subject, [fact("d")]);
    expect(await stores.store.snapshot(subject)).toMatchObject({ highWater: 5, epochMovedAt: 4 });
    await stores.artifacts.recordArtifact(candidateRecord(subject, "s-4", 4, 1, null));
    expect(
      (await stores.store.publishIfUnchanged({ ...request, artifactId: "s-4", newCoversThrough: 4 }))
        .artifactId,
    ).toBe("s-4");
  });
});

describe("AWS queue redrive", () => {
  it("moves a snapshot that keeps failing to the dead-letter queue after three receives", async () => {
    const { sqs } = stores.clients;
    await stores.queue.send({ subject: "user-poison", highWater: 1, inputEpoch: 0, expectedAlias: null });
    for (let receive = 0; receive < 3; receive++) {
      const { Messages } = await sqs.send(
        new ReceiveMessageCommand({ QueueUrl: stores.queueUrl, VisibilityTimeout: 0, WaitTimeSeconds: 1 }),
      );
      expect(Messages).toHaveLength(1);
    }
    const { Messages } = await sqs.send(
      new ReceiveMessageCommand({ QueueUrl: stores.queueUrl, VisibilityTimeout: 0, WaitTimeSeconds: 1 }),
    );
    expect(Messages ?? []).toHaveLength(0);
    const dead = await sqs.send(new ReceiveMessageCommand({ QueueUrl: stores.dlqUrl, WaitTimeSeconds: 1 }));
    expect(JSON.parse(dead.Messages?.[0]?.Body ?? "{}")).toMatchObject({
      subject: "user-poison",
      highWater: 1,
    });
  });
});
