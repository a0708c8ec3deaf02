import { GetCommand, PutCommand } from "@aws-sdk/lib-dynamodb";
import { AuditCheckpoint } from "#ports/audit-rounds.ts";
import { conditionalWrite } from "./dynamo-items.ts";
import type { DynamoTable } from "./dynamo-table.ts";

/** The audit's checkpoint: one item outside every subject's partition, like the settings. */
const AUDIT_ROUND_KEY = { pk: "TENANT", sk: "AUDIT-ROUND" };

export async function readAuditCheckpoint(table: DynamoTable): Promise<AuditCheckpoint | null> {
  const { Item } = await table.doc.send(
    new GetCommand({ TableName: table.tableName, Key: AUDIT_ROUND_KEY, ConsistentRead: true }),
  );
  if (!Item) return null;
  const { pk: _pk, sk: _sk, ...checkpoint } = Item;
  return AuditCheckpoint.parse(checkpoint);
}

/** A conditional Put on the version read: of two invocations, one writes and the other stops. */
export async function saveAuditCheckpoint(
  table: DynamoTable,
  next: AuditCheckpoint,
  expectedVersion: number | null,
): Promise<boolean> {
  return conditionalWrite(
    table.doc.send(
      new PutCommand({
        TableName: table.tableName,
        Item: { ...AUDIT_ROUND_KEY, ...AuditCheckpoint.parse(next) },
        ...(expectedVersion === null
          ? { ConditionExpression: "attribute_not_exists(pk)" }
          : {
              ConditionExpression: "version = :version",
              ExpressionAttributeValues: { ":version": expectedVersion },
            }),
      }),
    ),
  );
}
