import { beforeAll, describe, expect, it } from "vitest";
import { MemoryEvent } from "../../shared/domain/schemas.ts";
import { openAwsStores, type RequestCounter } from "../support/aws-engines.ts";
import { candidateRecord, describeStoreContract, type StoreUnderTest } from "./store-contract.ts";

let stores: Awaited<ReturnType<typeof openAwsStores>>;
const counter: RequestCounter = { count: 0, operations: [] };
beforeAll(async () => {
  stores = await openAwsStores(counter);
});

describeStoreContract(
  "AWS (DynamoDB Local, S3 and SQS on moto)",
  (): StoreUnderTest => ({
    events: stores.store,
    alias: stores.store,
    artifacts: stores.artifacts,
    queue: stores.queue,
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
