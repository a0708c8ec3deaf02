import { TransactionCanceledException } from "@aws-sdk/client-dynamodb";
import { TransactGetCommand, TransactWriteCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import type { StoredEvent } from "#domain/append-plan.ts";
import { decodeStoredEvent } from "#domain/hashing.ts";
import type { SequencedEvent } from "#domain/schemas.ts";
import { type Clock, epochMovedAtOf, type ReadSnapshot, snapshotOf } from "#ports/event-log.ts";
import {
  ALIAS,
  AliasItem,
  CLOCK,
  clockOf,
  EventItem,
  eventSk,
  isConditionFailure,
  pk,
  type StoredClock,
  SUBJECT_LIST,
  storeLatestCheck,
  TABLE_KEYS,
} from "./dynamo-items.ts";
import type { DynamoTable } from "./dynamo-table.ts";

/**
 * Reading the event log, and the clock's conditional updates (trust policy, selector): events are
 * `E#<eventId>` items {seq, hash, body, actors}, read by id (BatchGetItem) or in sequence order
 * through the local index bySequence (Query pages, strongly consistent).
 */

/** Clock and alias in exactly one TransactGetItems: the snapshot message. */
export async function readSnapshot(table: DynamoTable, subject: string): Promise<ReadSnapshot> {
  const { Responses } = await table.doc.send(
    new TransactGetCommand({
      TransactItems: [
        { Get: { TableName: table.tableName, Key: { pk: pk(subject), sk: CLOCK } } },
        { Get: { TableName: table.tableName, Key: { pk: pk(subject), sk: ALIAS } } },
      ],
    }),
  );
  const clock = clockOf(Responses?.[0]?.Item);
  const alias = Responses?.[1]?.Item ? AliasItem.parse(Responses[1].Item) : null;
  return snapshotOf(subject, clock, alias);
}

/** Stored events by id, each with the ids acting on it; unknown ids are absent. */
export async function eventsById(
  table: DynamoTable,
  subject: string,
  ids: readonly string[],
): Promise<Map<string, StoredEvent>> {
  const found = new Map<string, StoredEvent>();
  for (const raw of await table.batchGetAll(subject, ids.map(eventSk))) {
    const stored = storedEvent(raw);
    found.set(stored.event.eventId, stored);
  }
  return found;
}

/** Every stored event whose sequence meets `condition` (against `:bound`), ascending. */
export async function eventsWhere(
  table: DynamoTable,
  subject: string,
  condition: "seq <= :bound" | "seq > :bound",
  bound: number,
): Promise<SequencedEvent[]> {
  const items = await table.queryAll({
    IndexName: TABLE_KEYS.sequenceIndex,
    KeyConditionExpression: `pk = :pk AND ${condition}`,
    ExpressionAttributeValues: { ":pk": pk(subject), ":bound": bound },
  });
  return items.map((raw) => storedEvent(raw).event);
}

/** At most `limit` events with after < sequence <= through, ascending, with the ids acting on each. */
export async function eventsPage(
  table: DynamoTable,
  subject: string,
  after: number,
  through: number,
  limit: number,
): Promise<StoredEvent[]> {
  if (after >= through || limit <= 0) return [];
  const items = await table.queryAll(
    {
      IndexName: TABLE_KEYS.sequenceIndex,
      KeyConditionExpression: "pk = :pk AND seq BETWEEN :from AND :to",
      ExpressionAttributeValues: { ":pk": pk(subject), ":from": after + 1, ":to": through },
    },
    limit,
  );
  return items.map(storedEvent);
}

function storedEvent(raw: Record<string, unknown>): StoredEvent {
  const item = EventItem.parse(raw);
  return { event: decodeStoredEvent(item.body, item.seq, item.hash), hash: item.hash, actors: item.actors };
}

/**
 * Sets `assignment` on the clock only if it still equals `expected` (or is absent while expected
 * is the zero clock), moving the epoch by one when `moveEpoch` (and marking the subject for the
 * sweep then); false when the clock moved meanwhile. Given the clock as read (`read`), the policy
 * attribute must also still be what was read, and a clock created here checks the store's default
 * rules it was read under, in one transaction.
 */
export async function updateClockIf(
  table: DynamoTable,
  subject: string,
  expected: Clock,
  moveEpoch: boolean,
  assignment: "policy = :p" | "selector = :v",
  values: Record<string, unknown>,
  read?: StoredClock,
): Promise<boolean> {
  const policyCondition =
    read === undefined
      ? ""
      : read.policyText === null
        ? " AND attribute_not_exists(policy)"
        : " AND policy = :p0";
  const update = {
    TableName: table.tableName,
    Key: { pk: pk(subject), sk: CLOCK },
    // A clock created here (a policy set before the first append) is listed at once in bySubject.
    // A moved epoch began at this highWater; otherwise a clock from before epochMovedAt was kept
    // gets what it reads as (`epochMovedAtOf`), which the condition on the clock makes exact.
    UpdateExpression: `SET ${assignment}, inputEpoch = :e, highWater = :h, epochMovedAt = ${moveEpoch ? ":h" : "if_not_exists(epochMovedAt, :m)"}, ${TABLE_KEYS.subjectList} = :list${moveEpoch ? ", rebuildCheck = :pk" : ""}`,
    ConditionExpression: `((attribute_not_exists(pk) AND :h = :zero AND :e0 = :zero) OR (highWater = :h AND inputEpoch = :e0))${policyCondition}`,
    ExpressionAttributeValues: {
      ...values,
      ":list": SUBJECT_LIST,
      ...(moveEpoch ? { ":pk": pk(subject) } : {}),
      ...(read?.policyText ? { ":p0": read.policyText } : {}),
      ":e": expected.inputEpoch + (moveEpoch ? 1 : 0),
      ":h": expected.highWater,
      ...(moveEpoch ? {} : { ":m": epochMovedAtOf(expected, undefined) }),
      ":e0": expected.inputEpoch,
      ":zero": 0,
    },
  };
  try {
    if (read !== undefined && !read.exists)
      await table.doc.send(
        new TransactWriteCommand({
          TransactItems: [{ Update: update }, storeLatestCheck(table.tableName, read.policy.storeLatest)],
        }),
      );
    else await table.doc.send(new UpdateCommand(update));
    return true;
  } catch (error) {
    if (isConditionFailure(error) || error instanceof TransactionCanceledException) return false;
    throw error;
  }
}
