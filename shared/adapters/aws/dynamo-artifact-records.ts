import { PutCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import type { ArtifactRecord, ArtifactStatus } from "#ports/artifact-records.ts";
import { AlreadyWrittenError } from "#ports/errors.ts";
import { artifactSk, conditionalWrite, isConditionFailure, pk, recordOf } from "./dynamo-items.ts";
import type { DynamoTable } from "./dynamo-table.ts";

/**
 * The artifact records: `A#<artifactId>` {status, stale, coversThrough, inputEpoch, parent,
 * inputRoot, gate, createdAt} in the subject's partition, beside the alias the switch moves with them.
 */

export async function recordArtifact(table: DynamoTable, record: ArtifactRecord): Promise<void> {
  try {
    await table.doc.send(
      new PutCommand({
        TableName: table.tableName,
        Item: {
          pk: pk(record.subject),
          sk: artifactSk(record.artifactId),
          ...record,
          stale: record.stale,
          gate: JSON.stringify(record.gate),
        },
        ConditionExpression: "attribute_not_exists(pk)",
      }),
    );
  } catch (error) {
    if (isConditionFailure(error))
      throw new AlreadyWrittenError(`artifact record ${record.artifactId}`, { cause: error });
    throw error;
  }
}

export async function getRecord(
  table: DynamoTable,
  subject: string,
  artifactId: string,
): Promise<ArtifactRecord | null> {
  const item = await table.getItem(subject, artifactSk(artifactId));
  return item ? recordOf(item) : null;
}

/** The subject's records, oldest first (by creation time, then id). */
export async function listRecords(table: DynamoTable, subject: string): Promise<ArtifactRecord[]> {
  const items = await table.queryAll({
    KeyConditionExpression: "pk = :pk AND begins_with(sk, :prefix)",
    ExpressionAttributeValues: { ":pk": pk(subject), ":prefix": "A#" },
  });
  const records = items.map(recordOf);
  return records.sort((a, b) =>
    a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : a.artifactId < b.artifactId ? -1 : 1,
  );
}

/** One conditional update of a record that is in one of `from` and not marked stale; false when none. */
export async function updateRecordWhere(
  table: DynamoTable,
  subject: string,
  artifactId: string,
  from: readonly ArtifactStatus[],
  update: "SET #status = :to" | "SET stale = :stale",
  values: Record<string, unknown>,
): Promise<boolean> {
  if (from.length === 0) return false;
  const statuses = Object.fromEntries(from.map((status, index) => [`:from${index}`, status]));
  return conditionalWrite(
    table.doc.send(
      new UpdateCommand({
        TableName: table.tableName,
        Key: { pk: pk(subject), sk: artifactSk(artifactId) },
        UpdateExpression: update,
        ConditionExpression: `attribute_exists(pk) AND stale = :fresh AND #status IN (${Object.keys(statuses).join(", ")})`,
        ExpressionAttributeNames: { "#status": "status" },
        ExpressionAttributeValues: { ...values, ...statuses, ":fresh": false },
      }),
    ),
  );
}
