import { GetCommand, PutCommand, QueryCommand, ScanCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { RebuildAttempt } from "#domain/rebuild.ts";
import type { SelectorVersion } from "#domain/validity.ts";
import type { Clock, SubjectIndexing, SubjectPage } from "#ports/event-log.ts";
import {
  CLOCK,
  conditionalWrite,
  pk,
  SUBJECT_INDEX_KEY,
  SUBJECT_LIST,
  SubjectIndexItem,
  TABLE_KEYS,
} from "./dynamo-items.ts";
import type { DynamoTable } from "./dynamo-table.ts";

/**
 * Which subjects: every clock item, a page at a time, from the global index bySubject (one
 * partition, sorted by pk; GET /v1/subjects and the audit), those on another selector (a scan, for
 * the one-off migration), and those the sweep must look at: the sparse global index
 * byRebuildCheck holds only the clocks marked by an append, a trust change or a selector adoption
 * since the sweep last found them current.
 *
 * Clocks written before bySubject existed lack `subjectList`: until the backfill (indexSubjects,
 * run by the sweep and by `memgate migrate`) has been through the table and said so in the
 * SUBJECT-INDEX item, the listing falls back to the Scan it replaced, so no subject is ever missed.
 */

/** The subjects after `after` (exclusive), at most `limit`, sorted; `more` when others follow. */
export async function subjectsPage(
  table: DynamoTable,
  after: string | null,
  limit: number,
): Promise<SubjectPage> {
  if (!(await subjectIndexComplete(table))) {
    const all = await scanClockSubjects(table);
    const rest = after === null ? all : all.filter((subject) => subject > after);
    return { subjects: rest.slice(0, limit), more: rest.length > limit };
  }
  // One more than asked: whether another page follows, without a second Query.
  const { Items } = await table.doc.send(
    new QueryCommand({
      TableName: table.tableName,
      IndexName: TABLE_KEYS.subjectIndex,
      KeyConditionExpression: `${TABLE_KEYS.subjectList} = :list${after === null ? "" : " AND pk > :after"}`,
      ExpressionAttributeValues: {
        ":list": SUBJECT_LIST,
        ...(after === null ? {} : { ":after": pk(after) }),
      },
      Limit: limit + 1,
    }),
  );
  const subjects = (Items ?? []).map((item) => String(item.pk).slice(2));
  return { subjects: subjects.slice(0, limit), more: subjects.length > limit };
}

/** Every subject with a clock, sorted: the index's pages (or the Scan, before the backfill is done). */
export async function listSubjects(table: DynamoTable): Promise<string[]> {
  if (!(await subjectIndexComplete(table))) return scanClockSubjects(table);
  const items = await table.queryAll(
    {
      IndexName: TABLE_KEYS.subjectIndex,
      KeyConditionExpression: `${TABLE_KEYS.subjectList} = :list`,
      ExpressionAttributeValues: { ":list": SUBJECT_LIST },
    },
    Number.POSITIVE_INFINITY,
    { consistent: false },
  );
  return items.map((item) => String(item.pk).slice(2));
}

function scanClockSubjects(table: DynamoTable): Promise<string[]> {
  return table.scanSubjects({
    FilterExpression: "sk = :clock",
    ExpressionAttributeValues: { ":clock": CLOCK },
    ProjectionExpression: "pk",
  });
}

/** Whether the backfill has listed every older clock; once true it stays true (cached per process). */
async function subjectIndexComplete(table: DynamoTable): Promise<boolean> {
  if (table.subjectIndexComplete) return true;
  const { Item } = await table.doc.send(
    new GetCommand({ TableName: table.tableName, Key: SUBJECT_INDEX_KEY, ConsistentRead: true }),
  );
  table.subjectIndexComplete = Item !== undefined && SubjectIndexItem.parse(Item).complete;
  return table.subjectIndexComplete;
}

/**
 * The backfill: sets `subjectList` on every clock without it, a Scan page at a time, keeping where
 * it stopped in the SUBJECT-INDEX item after each page, so a run cut short (`maxPages`, a timeout)
 * resumes there; the run that reaches the end marks the index complete. Clocks created meanwhile
 * are listed by their own first write. Idempotent: a second run finds nothing to add.
 */
export async function indexSubjects(
  table: DynamoTable,
  options: { maxPages?: number } = {},
): Promise<SubjectIndexing> {
  const { Item } = await table.doc.send(
    new GetCommand({ TableName: table.tableName, Key: SUBJECT_INDEX_KEY, ConsistentRead: true }),
  );
  const state = Item === undefined ? { complete: false } : SubjectIndexItem.parse(Item);
  if (state.complete) {
    table.subjectIndexComplete = true;
    return { added: 0, complete: true };
  }
  let resumeAfter = state.resumeAfter;
  let added = 0;
  for (let page = 0; page < (options.maxPages ?? Number.POSITIVE_INFINITY); page++) {
    const { Items, LastEvaluatedKey } = await table.doc.send(
      new ScanCommand({
        TableName: table.tableName,
        FilterExpression: `sk = :clock AND attribute_not_exists(${TABLE_KEYS.subjectList})`,
        ExpressionAttributeValues: { ":clock": CLOCK },
        ProjectionExpression: "pk",
        ...(resumeAfter === undefined ? {} : { ExclusiveStartKey: resumeAfter }),
      }),
    );
    for (const item of Items ?? []) {
      await listClock(table, String(item.pk));
      added++;
    }
    resumeAfter = LastEvaluatedKey;
    const saved = await conditionalWrite(
      table.doc.send(
        new PutCommand({
          TableName: table.tableName,
          Item: {
            ...SUBJECT_INDEX_KEY,
            complete: resumeAfter === undefined,
            ...(resumeAfter ? { resumeAfter } : {}),
          },
          // Another run (the sweep, `memgate migrate`) that finished first is never undone.
          ConditionExpression: "attribute_not_exists(pk) OR complete = :no",
          ExpressionAttributeValues: { ":no": false },
        }),
      ),
    );
    if (!saved) resumeAfter = undefined;
    if (resumeAfter === undefined) {
      table.subjectIndexComplete = true;
      return { added, complete: true };
    }
  }
  return { added, complete: false };
}

async function listClock(table: DynamoTable, partition: string): Promise<void> {
  await conditionalWrite(
    table.doc.send(
      new UpdateCommand({
        TableName: table.tableName,
        Key: { pk: partition, sk: CLOCK },
        UpdateExpression: `SET ${TABLE_KEYS.subjectList} = :list`,
        ConditionExpression: "attribute_exists(pk)",
        ExpressionAttributeValues: { ":list": SUBJECT_LIST },
      }),
    ),
  );
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
  // A clock that moved since the check keeps its mark, and the next sweep looks again.
  await conditionalWrite(
    table.doc.send(
      new UpdateCommand({
        TableName: table.tableName,
        Key: { pk: pk(subject), sk: CLOCK },
        UpdateExpression: "REMOVE rebuildCheck",
        ConditionExpression: "highWater = :h AND inputEpoch = :e",
        ExpressionAttributeValues: { ":h": checked.highWater, ":e": checked.inputEpoch },
      }),
    ),
  );
}

/** Marks the clock for the sweep (the audit took its summary out of service): no clock change. */
export async function markForCheck(table: DynamoTable, subject: string): Promise<void> {
  // No clock, no events: nothing to rebuild.
  await conditionalWrite(
    table.doc.send(
      new UpdateCommand({
        TableName: table.tableName,
        Key: { pk: pk(subject), sk: CLOCK },
        UpdateExpression: `SET ${TABLE_KEYS.rebuildCheck} = :pk`,
        ConditionExpression: "attribute_exists(pk)",
        ExpressionAttributeValues: { ":pk": pk(subject) },
      }),
    ),
  );
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
