import { ReceiveMessageCommand } from "@aws-sdk/client-sqs";
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
