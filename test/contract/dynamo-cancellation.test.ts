import { type AttributeValue, TransactionCanceledException } from "@aws-sdk/client-dynamodb";
import { describe, expect, it } from "vitest";
import { publishRefusal } from "#adapters/aws/dynamo-alias.ts";
import { PublishRefusedError, StoreContentionError } from "#ports/errors.ts";

// No local engine produces TransactionConflict, so the mapping of DynamoDB's cancellation reasons
// (in TransactItems order: clock check, alias, artifact, parent) is checked on the answer's shape.
const cancelled = (codes: string[], items: Array<Record<string, AttributeValue> | undefined> = []) =>
  new TransactionCanceledException({
    message: "cancelled",
    $metadata: {},
    CancellationReasons: codes.map((Code, index) => {
      const Item = items[index];
      return Item ? { Code, Item } : { Code };
    }),
  });
const request = {
  subject: "u",
  artifactId: "s-2",
  expectedAlias: { parentArtifactId: "s-1", sourceEpoch: 3, coversThrough: 90 },
  inputEpoch: 3,
  newCoversThrough: 80,
};

describe("publish cancellation reasons", () => {
  it("names the condition that failed", () => {
    expect(
      publishRefusal(
        cancelled(
          ["ConditionalCheckFailed", "None", "None", "None"],
          [{ inputEpoch: { N: "4" } } as Record<string, AttributeValue>],
        ),
        request,
      ),
    ).toMatchObject({
      reason: "epoch-moved",
    });
    const sameAlias: Record<string, AttributeValue> = {
      artifactId: { S: "s-1" },
      sourceEpoch: { N: "3" },
      coversThrough: { N: "90" },
    };
    expect(
      publishRefusal(
        cancelled(["None", "ConditionalCheckFailed", "None", "None"], [undefined, sameAlias]),
        request,
      ),
    ).toMatchObject({
      reason: "coverage-decrease",
    });
    const movedAlias: Record<string, AttributeValue> = {
      artifactId: { S: "s-9" },
      sourceEpoch: { N: "3" },
      coversThrough: { N: "220" },
    };
    expect(
      publishRefusal(
        cancelled(["None", "ConditionalCheckFailed", "None", "None"], [undefined, movedAlias]),
        request,
      ),
    ).toMatchObject({
      reason: "alias-moved",
    });
    expect(
      publishRefusal(cancelled(["None", "None", "ConditionalCheckFailed", "None"]), request),
    ).toMatchObject({ reason: "artifact-not-publishable" });
    expect(
      publishRefusal(cancelled(["None", "None", "None", "ConditionalCheckFailed"]), request),
    ).toBeInstanceOf(PublishRefusedError);
  });

  it("treats a transaction conflict as retryable contention, not a refusal", () => {
    expect(
      publishRefusal(cancelled(["None", "TransactionConflict", "None", "None"]), request),
    ).toBeInstanceOf(StoreContentionError);
  });
});
