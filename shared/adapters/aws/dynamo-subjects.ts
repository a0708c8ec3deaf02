import { UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { RebuildAttempt } from "#domain/rebuild.ts";
import type { SelectorVersion } from "#domain/validity.ts";
import type { Clock } from "#ports/event-log.ts";
import { CLOCK, isConditionFailure, pk, TABLE_KEYS } from "./dynamo-items.ts";
import type { DynamoTable } from "./dynamo-table.ts";

/**
 * Which subjects: every clock item (a scan, for the review page), those on another selector (a
 * scan, for the one-off migration), and those the sweep must look at: the sparse global index
 * byRebuildCheck holds only the clocks marked by an append, a trust change or a selector adoption
 * since the sweep last found them current.
 */

export function listSubjects(table: DynamoTable): Promise<string[]> {
  return table.scanSubjects({
    FilterExpression: "sk = :clock",
    ExpressionAttributeValues: { ":clock": CLOCK },
    ProjectionExpression: "pk",
  });
}

export function subjectsNotOn(table: DynamoTable, version: SelectorVersion): Promise<string[]> {
  return table.scanSubjects({
    FilterExpression: "sk = :clock AND (attribute_not_exists(selector) OR selector <> :v)",
    ExpressionAttributeValues: { ":clock": CLOCK, ":v": version },
    ProjectionExpression: "pk",
  });
}

/** A scan of the sparse index: only the clocks changed since they were last checked (a superset). */
export function subjectsToCheck(table: DynamoTable): Promise<string[]> {
  return table.scanSubjects({ IndexName: TABLE_KEYS.rebuildCheckIndex });
}

/** Unmarks the clock the sweep found current, conditioned on that clock: a later append keeps the mark. */
export async function markChecked(table: DynamoTable, subject: string, checked: Clock): Promise<void> {
  try {
    await table.doc.send(
      new UpdateCommand({
        TableName: table.tableName,
        Key: { pk: pk(subject), sk: CLOCK },
        UpdateExpression: "REMOVE rebuildCheck",
        ConditionExpression: "highWater = :h AND inputEpoch = :e",
        ExpressionAttributeValues: { ":h": checked.highWater, ":e": checked.inputEpoch },
      }),
    );
  } catch (error) {
    // The clock moved since the check: the mark stays, and the next sweep looks again.
    if (!isConditionFailure(error)) throw error;
  }
}

/** Marks the clock for the sweep (the audit took its summary out of service): no clock change. */
export async function markForCheck(table: DynamoTable, subject: string): Promise<void> {
  try {
    await table.doc.send(
      new UpdateCommand({
        TableName: table.tableName,
        Key: { pk: pk(subject), sk: CLOCK },
        UpdateExpression: `SET ${TABLE_KEYS.rebuildCheck} = :pk`,
        ConditionExpression: "attribute_exists(pk)",
        ExpressionAttributeValues: { ":pk": pk(subject) },
      }),
    );
  } catch (error) {
    // No clock, no events: nothing to rebuild.
    if (!isConditionFailure(error)) throw error;
  }
}

/** The last rebuild attempt kept on the clock item (attribute rebuildAttempt), parsed. */
export async function readRebuildAttempt(
  table: DynamoTable,
  subject: string,
): Promise<RebuildAttempt | null> {
  const item = await table.getItem(subject, CLOCK);
  const stored = item?.rebuildAttempt;
  return stored === undefined ? null : RebuildAttempt.parse(stored);
}

/**
 * Keeps the attempt on the clock item and marks it for the sweep, leaving highWater and epoch as
 * they are. The stream sees the change; the outbox finds the rebuild waiting and sends nothing.
 */
export async function recordRebuildAttempt(
  table: DynamoTable,
  subject: string,
  attempt: RebuildAttempt,
): Promise<void> {
  await table.doc.send(
    new UpdateCommand({
      TableName: table.tableName,
      Key: { pk: pk(subject), sk: CLOCK },
      UpdateExpression: `SET rebuildAttempt = :attempt, ${TABLE_KEYS.rebuildCheck} = :pk`,
      ConditionExpression: "attribute_exists(pk)",
      ExpressionAttributeValues: { ":attempt": RebuildAttempt.parse(attempt), ":pk": pk(subject) },
    }),
  );
}
