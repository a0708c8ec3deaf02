import { createHash } from "node:crypto";
import { TransactionCanceledException } from "@aws-sdk/client-dynamodb";
import { TransactWriteCommand, type TransactWriteCommandInput } from "@aws-sdk/lib-dynamodb";
import type { AliasState, PublishRequest } from "#ports/alias.ts";
import { epochAfterCoverage, PublishRefusedError, StoreContentionError } from "#ports/errors.ts";
import { epochMovedAtOf } from "#ports/event-log.ts";
import { ALIAS, AliasItem, artifactSk, CLOCK, pk, SETTINGS_KEY } from "./dynamo-items.ts";
import type { DynamoTable } from "./dynamo-table.ts";

/** The alias item (`ALIAS` {artifactId, sourceEpoch, coversThrough}) and the switch that moves it. */

export async function readAlias(table: DynamoTable, subject: string): Promise<AliasState | null> {
  const item = await table.getItem(subject, ALIAS);
  return item ? AliasItem.parse(item) : null;
}

/**
 * The switch is exactly one TransactWriteItems: the clock's ConditionCheck (the epoch fence, and
 * no coverage past the log), the alias compare-and-set, the artifact CANDIDATE/SHADOW → PUBLISHED
 * and the parent PUBLISHED → SUPERSEDED. A cancellation says which failed (`publishRefusal`).
 */
export async function publishIfUnchanged(table: DynamoTable, request: PublishRequest): Promise<AliasState> {
  const { subject, artifactId, expectedAlias, inputEpoch, newCoversThrough } = request;
  const next: AliasState = { artifactId, sourceEpoch: inputEpoch, coversThrough: newCoversThrough };
  const items: NonNullable<TransactWriteCommandInput["TransactItems"]> = [
    {
      ConditionCheck: {
        TableName: table.tableName,
        Key: { pk: pk(subject), sk: CLOCK },
        // The fence, no coverage past the log, and none below where the epoch began (a clock
        // from before epochMovedAt was kept reads as moved at its highWater, unless at epoch 0):
        // a forged snapshot cannot publish.
        ConditionExpression:
          "inputEpoch = :epoch AND highWater >= :covers AND (epochMovedAt <= :covers OR (attribute_not_exists(epochMovedAt) AND (inputEpoch = :zero OR highWater = :covers)))",
        ExpressionAttributeValues: { ":epoch": inputEpoch, ":covers": newCoversThrough, ":zero": 0 },
        ReturnValuesOnConditionCheckFailure: "ALL_OLD",
      },
    },
    {
      Update: {
        TableName: table.tableName,
        Key: { pk: pk(subject), sk: ALIAS },
        UpdateExpression: "SET artifactId = :artifact, sourceEpoch = :epoch, coversThrough = :covers",
        ConditionExpression: expectedAlias
          ? "artifactId = :parent AND sourceEpoch = :parentEpoch AND coversThrough = :parentCovers AND coversThrough <= :covers"
          : "attribute_not_exists(pk)",
        ExpressionAttributeValues: {
          ":artifact": artifactId,
          ":epoch": inputEpoch,
          ":covers": newCoversThrough,
          ...(expectedAlias
            ? {
                ":parent": expectedAlias.parentArtifactId,
                ":parentEpoch": expectedAlias.sourceEpoch,
                ":parentCovers": expectedAlias.coversThrough,
              }
            : {}),
        },
        ReturnValuesOnConditionCheckFailure: "ALL_OLD",
      },
    },
    {
      Update: {
        TableName: table.tableName,
        Key: { pk: pk(subject), sk: artifactSk(artifactId) },
        UpdateExpression: "SET #status = :published",
        ConditionExpression: "#status IN (:candidate, :shadow) AND stale = :fresh",
        ExpressionAttributeNames: { "#status": "status" },
        ExpressionAttributeValues: {
          ":published": "PUBLISHED",
          ":candidate": "CANDIDATE",
          ":shadow": "SHADOW",
          ":fresh": false,
        },
      },
    },
  ];
  if (expectedAlias)
    items.push({
      Update: {
        TableName: table.tableName,
        Key: { pk: pk(subject), sk: artifactSk(expectedAlias.parentArtifactId) },
        UpdateExpression: "SET #status = :superseded",
        ConditionExpression: "#status = :published",
        ExpressionAttributeNames: { "#status": "status" },
        ExpressionAttributeValues: { ":superseded": "SUPERSEDED", ":published": "PUBLISHED" },
      },
    });
  // Last, so the refusals above keep their positions: the publish mode the publish read.
  if (request.whileLive)
    items.push({
      ConditionCheck: {
        TableName: table.tableName,
        Key: SETTINGS_KEY,
        ConditionExpression: "attribute_not_exists(publishMode) OR publishMode = :live",
        ExpressionAttributeValues: { ":live": "live" },
      },
    });
  try {
    // The token makes the SDK's own retry of a switch that committed (a lost response) succeed
    // as the same transaction, instead of failing its conditions against its own result.
    await table.doc.send(
      new TransactWriteCommand({ TransactItems: items, ClientRequestToken: switchToken(request) }),
    );
    return next;
  } catch (error) {
    throw publishRefusal(error, request);
  }
}

/**
 * The switch's idempotency token (ClientRequestToken, at most 36 characters): one per request, so
 * within DynamoDB's ten minutes the same switch sent again is the same transaction, and a different
 * one is never mistaken for it.
 */
export function switchToken(request: PublishRequest): string {
  const parent = request.expectedAlias;
  return createHash("sha256")
    .update(
      JSON.stringify([
        request.subject,
        request.artifactId,
        parent ? [parent.parentArtifactId, parent.sourceEpoch, parent.coversThrough] : null,
        request.inputEpoch,
        request.newCoversThrough,
        request.whileLive === true,
      ]),
    )
    .digest("base64url")
    .slice(0, 36);
}

/** Maps a cancelled switch transaction to the condition that failed (in TransactItems order). */
export function publishRefusal(error: unknown, request: PublishRequest): unknown {
  if (!(error instanceof TransactionCanceledException)) return error;
  const reasons = error.CancellationReasons ?? [];
  const code = (index: number) => reasons[index]?.Code;
  if (reasons.some((reason) => reason.Code === "TransactionConflict"))
    return new StoreContentionError(`publish of ${request.artifactId} met a concurrent transaction`, {
      cause: error,
    });
  if (code(0) === "ConditionalCheckFailed") {
    const epoch = reasons[0]?.Item?.inputEpoch?.N;
    const highWater = reasons[0]?.Item?.highWater?.N;
    const movedAt = reasons[0]?.Item?.epochMovedAt?.N;
    if (Number(epoch) === request.inputEpoch && Number(highWater ?? 0) >= request.newCoversThrough)
      return new PublishRefusedError(
        "epoch-moved",
        epochAfterCoverage(
          epochMovedAtOf(
            { highWater: Number(highWater), inputEpoch: request.inputEpoch },
            movedAt === undefined ? undefined : Number(movedAt),
          ),
          request,
        ),
        { cause: error },
      );
    if (Number(epoch) === request.inputEpoch)
      return new PublishRefusedError(
        "beyond-log",
        `the artifact covers through ${request.newCoversThrough}, but the log ends at ${highWater ?? 0}`,
        { cause: error },
      );
    return new PublishRefusedError(
      "epoch-moved",
      `the clock is at epoch ${epoch ?? "?"}, the artifact was built at ${request.inputEpoch}`,
      { cause: error },
    );
  }
  if (code(1) === "ConditionalCheckFailed") {
    const old = reasons[1]?.Item;
    const expected = request.expectedAlias;
    const sameParent =
      old !== undefined &&
      expected !== null &&
      old.artifactId?.S === expected.parentArtifactId &&
      Number(old.sourceEpoch?.N) === expected.sourceEpoch &&
      Number(old.coversThrough?.N) === expected.coversThrough;
    if (sameParent)
      return new PublishRefusedError(
        "coverage-decrease",
        `coverage would go from ${old?.coversThrough?.N} back to ${request.newCoversThrough}`,
        { cause: error },
      );
    return new PublishRefusedError(
      "alias-moved",
      `the alias is ${old ? `${old.artifactId?.S}@${old.sourceEpoch?.N}/${old.coversThrough?.N}` : "unset"}, the snapshot expected ${expected ? `${expected.parentArtifactId}@${expected.sourceEpoch}/${expected.coversThrough}` : "none"}`,
      { cause: error },
    );
  }
  if (code(2) === "ConditionalCheckFailed")
    return new PublishRefusedError(
      "artifact-not-publishable",
      `${request.artifactId} is not a CANDIDATE or SHADOW artifact of ${request.subject}`,
      { cause: error },
    );
  const modeCheck = request.expectedAlias ? 4 : 3;
  if (request.whileLive && code(modeCheck) === "ConditionalCheckFailed")
    return new PublishRefusedError(
      "publish-mode-changed",
      "the tenant switched to shadow mode after the publish read its settings",
      { cause: error },
    );
  if (request.expectedAlias && code(3) === "ConditionalCheckFailed")
    return new PublishRefusedError(
      "parent-moved",
      `${request.expectedAlias?.parentArtifactId} is no longer PUBLISHED`,
      { cause: error },
    );
  return error;
}
