import { setTimeout as sleep } from "node:timers/promises";
import { TransactionCanceledException } from "@aws-sdk/client-dynamodb";
import { TransactWriteCommand, type TransactWriteCommandInput } from "@aws-sdk/lib-dynamodb";
import type { AppendPlan, ConflictIndexEntry, StoredEvent } from "#domain/append-plan.ts";
import { planAppend } from "#domain/append-plan.ts";
import { effectivePolicy } from "#domain/readings.ts";
import type { MemoryEvent } from "#domain/schemas.ts";
import { SELECTOR_VERSION } from "#domain/validity.ts";
import { StoreContentionError, translatePlanError } from "#ports/errors.ts";
import type { AppendWritten, Clock } from "#ports/event-log.ts";
import { eventsById } from "./dynamo-events.ts";
import {
  APPEND_ATTEMPTS,
  CLOCK,
  chunkForTransactions,
  eventSk,
  IndexItem,
  indexSk,
  indexWrites,
  pk,
  type StoredClock,
  SUBJECT_LIST,
  storeLatestCheck,
  TABLE_KEYS,
} from "./dynamo-items.ts";
import type { DynamoTable } from "./dynamo-table.ts";

/**
 * Appending to the log on DynamoDB. The batch is cut into chunks that each fit one
 * TransactWriteItems (events, link updates, conflict-index items); each chunk is planned by the
 * one append planner against what the table holds and written in one transaction whose clock
 * update is conditioned on the clock it read: a concurrent append cancels it, and the chunk is
 * planned again.
 */
export async function appendEvents(
  table: DynamoTable,
  subject: string,
  events: readonly MemoryEvent[],
): Promise<AppendWritten> {
  const chunks = chunkForTransactions(events);
  const known = chunks.length > 1 ? await refuseBadBatch(table, subject, events) : null;
  const appended: string[] = [];
  const duplicates: string[] = [];
  let last: Clock | null = null;
  let epochMoved = false;
  let validityChanged = false;
  for (const chunk of chunks) {
    const plan = await appendChunk(table, subject, chunk, known);
    appended.push(...plan.newEvents.map((entry) => entry.event.eventId));
    duplicates.push(...plan.duplicates);
    epochMoved ||= plan.clockAfter.inputEpoch !== plan.clockBefore.inputEpoch;
    validityChanged ||= plan.validityChanged;
    last = plan.clockAfter;
  }
  last ??= await table.readClock(subject);
  return {
    appended,
    duplicates,
    highWater: last.highWater,
    inputEpoch: last.inputEpoch,
    epochMoved,
    validityChanged,
    chunks: chunks.length,
  };
}

/** What an append has read and written, valid while the clock stays where it left it. */
interface KnownState {
  clock: Clock;
  /** Event id → its stored record, or null when known not to be stored. */
  events: Map<string, StoredEvent | null>;
  /** Index sort key → its entry, or null when known to be absent. */
  index: Map<string, ConflictIndexEntry | null>;
}

/**
 * A batch written in several chunks is checked whole first (conflicting re-sends, bad links), so
 * that a refused batch writes nothing; a one-chunk batch gets the same check inside its plan. What
 * the check read is kept for the chunks: valid while the clock shows no other writer in between.
 */
async function refuseBadBatch(
  table: DynamoTable,
  subject: string,
  events: readonly MemoryEvent[],
): Promise<KnownState> {
  const clock = await table.readClock(subject);
  const known: KnownState = { clock, events: new Map(), index: new Map() };
  const keyScopes = new Map<string, { key: string; scope: string }>();
  for (const event of events)
    for (const a of event.assertions ?? []) keyScopes.set(indexSk(a.key, a.scope), a);
  for (const entry of await loadIndex(table, subject, [...keyScopes.values()]))
    known.index.set(indexSk(entry.key, entry.scope), entry);
  for (const id of keyScopes.keys()) if (!known.index.has(id)) known.index.set(id, null);
  try {
    await planAppend(events, {
      clock,
      policy: effectivePolicy(clock.policy),
      loadEvents: (ids) => loadEventsThrough(table, subject, ids, known),
      loadIndex: async () => [],
    });
  } catch (error) {
    throw translatePlanError(subject, error);
  }
  return known;
}

/** Plans and writes one chunk atomically, fenced on the clock; plans again if another append won. */
async function appendChunk(
  table: DynamoTable,
  subject: string,
  chunk: readonly MemoryEvent[],
  knownBefore: KnownState | null,
): Promise<AppendPlan> {
  let known = knownBefore;
  for (let attempt = 1; ; attempt++) {
    const clock = await table.readClock(subject);
    // What earlier reads learnt holds only if no other writer appended since.
    if (known && (known.clock.highWater !== clock.highWater || known.clock.inputEpoch !== clock.inputEpoch))
      known = null;
    let plan: AppendPlan;
    try {
      plan = await planAppend(chunk, {
        clock,
        policy: effectivePolicy(clock.policy),
        loadEvents: (ids) => loadEventsThrough(table, subject, ids, known),
        loadIndex: (keyScopes) => loadIndexThrough(table, subject, keyScopes, known),
      });
    } catch (error) {
      throw translatePlanError(subject, error);
    }
    if (plan.newEvents.length === 0) return plan;
    try {
      await table.doc.send(
        new TransactWriteCommand({
          TransactItems: appendItems(table.tableName, subject, plan, clock),
        }),
      );
      if (known) learnFromPlan(known, plan);
      return plan;
    } catch (error) {
      if (!(error instanceof TransactionCanceledException) || attempt >= APPEND_ATTEMPTS) {
        if (error instanceof TransactionCanceledException)
          throw new StoreContentionError(`append to ${subject} kept losing to concurrent appends`, {
            cause: error,
          });
        throw error;
      }
      known = null;
      await sleep(10 * 2 ** attempt * Math.random());
    }
  }
}

/** Loads events, answering from `known` what it holds (present or known absent). */
async function loadEventsThrough(
  table: DynamoTable,
  subject: string,
  ids: readonly string[],
  known: KnownState | null,
): Promise<Map<string, StoredEvent>> {
  if (!known) return eventsById(table, subject, ids);
  const missing = ids.filter((id) => !known.events.has(id));
  const loaded =
    missing.length > 0 ? await eventsById(table, subject, missing) : new Map<string, StoredEvent>();
  for (const id of missing) known.events.set(id, loaded.get(id) ?? null);
  const found = new Map<string, StoredEvent>();
  for (const id of ids) {
    const record = known.events.get(id);
    if (record) found.set(id, record);
  }
  return found;
}

async function loadIndexThrough(
  table: DynamoTable,
  subject: string,
  keyScopes: ReadonlyArray<{ key: string; scope: string }>,
  known: KnownState | null,
): Promise<ConflictIndexEntry[]> {
  if (!known) return loadIndex(table, subject, keyScopes);
  const missing = keyScopes.filter(({ key, scope }) => !known.index.has(indexSk(key, scope)));
  for (const entry of await loadIndex(table, subject, missing))
    known.index.set(indexSk(entry.key, entry.scope), entry);
  for (const { key, scope } of missing)
    if (!known.index.has(indexSk(key, scope))) known.index.set(indexSk(key, scope), null);
  return keyScopes
    .map(({ key, scope }) => known.index.get(indexSk(key, scope)))
    .filter((entry) => entry != null);
}

/**
 * The conflict index of each (key, scope), as small items: a head (`K#<hash of key, scope>`, the
 * first holder) and one item per later holder (`K#<hash>#<sequence>#<position>`), so no item
 * grows with a key's history (an item is at most 400 KB). Heads are read with BatchGetItem (100
 * a request); only a key whose head says it has more holders costs a Query. A pre-split head
 * holding the whole `positions` map is read too.
 */
export async function loadIndex(
  table: DynamoTable,
  subject: string,
  keyScopes: ReadonlyArray<{ key: string; scope: string }>,
): Promise<ConflictIndexEntry[]> {
  const unique = [...new Set(keyScopes.map((ks) => indexSk(ks.key, ks.scope)))];
  const heads = new Map(
    (await table.batchGetAll(subject, unique)).map((raw) => [String(raw.sk), raw] as const),
  );
  const entries: ConflictIndexEntry[] = [];
  for (const sk of unique) {
    const raw = heads.get(sk);
    if (!raw) continue;
    const head = IndexItem.parse(raw);
    const items = head.more ? [head, ...(await indexTail(table, subject, sk))] : [head];
    const positions: Record<string, string[]> = {};
    const readings: NonNullable<ConflictIndexEntry["readings"]> = {};
    const add = (position: string, holder: string) => {
      const holders = positions[position] ?? [];
      if (!holders.includes(holder)) holders.push(holder);
      positions[position] = holders;
    };
    for (const item of items) {
      if (item.position !== undefined && item.holder !== undefined) add(item.position, item.holder);
      if (item.holder !== undefined && item.holderSeq !== undefined && item.at !== undefined)
        readings[item.holder] = { sequence: item.holderSeq, at: item.at === "" ? null : item.at };
      for (const [position, holders] of Object.entries(item.positions ?? {}))
        for (const holder of holders) add(position, holder);
    }
    entries.push({
      key: head.key,
      scope: head.scope,
      positions,
      ...(Object.keys(readings).length > 0 ? { readings } : {}),
    });
  }
  return entries;
}

/** The holder items after a key's head, in sequence order. */
async function indexTail(table: DynamoTable, subject: string, headSk: string) {
  return (
    await table.queryAll({
      KeyConditionExpression: "pk = :pk AND begins_with(sk, :prefix)",
      ExpressionAttributeValues: { ":pk": pk(subject), ":prefix": `${headSk}#` },
    })
  ).map((raw) => IndexItem.parse(raw));
}

/**
 * The chunk's one transaction: the clock fenced on the clock read, the events, their links, the
 * index; a subject's first append also checks the store's default rules it was created under.
 */
function appendItems(tableName: string, subject: string, plan: AppendPlan, clock: StoredClock) {
  const items: NonNullable<TransactWriteCommandInput["TransactItems"]> = [];
  const { clockBefore, clockAfter } = plan;
  const policy = clock.policy;
  if (!clock.exists) items.push(storeLatestCheck(tableName, policy.storeLatest));
  items.push({
    Update: {
      TableName: tableName,
      Key: { pk: pk(subject), sk: CLOCK },
      // The first append starts a subject on the current selector; older subjects keep theirs.
      // rebuildCheck: the sweep's sparse index finds this subject until it is checked. The first
      // append lists the subject in the index bySubject (GET /v1/subjects, the audit).
      UpdateExpression: `SET highWater = :h, inputEpoch = :e, epochMovedAt = :m, policy = if_not_exists(policy, :p), rebuildCheck = :pk${
        clockBefore.highWater === 0
          ? `, selector = if_not_exists(selector, :sel), ${TABLE_KEYS.subjectList} = :list`
          : ""
      }`,
      ConditionExpression:
        "(attribute_not_exists(pk) AND :h0 = :zero AND :e0 = :zero) OR (highWater = :h0 AND inputEpoch = :e0)",
      ExpressionAttributeValues: {
        ...(clockBefore.highWater === 0 ? { ":sel": SELECTOR_VERSION, ":list": SUBJECT_LIST } : {}),
        ":pk": pk(subject),
        ":h": clockAfter.highWater,
        ":e": clockAfter.inputEpoch,
        // Where the epoch began: here when this chunk moved it, else where the clock read says.
        ":m": clockAfter.inputEpoch !== clockBefore.inputEpoch ? clockAfter.highWater : clock.epochMovedAt,
        ":h0": clockBefore.highWater,
        ":e0": clockBefore.inputEpoch,
        ":zero": 0,
        ":p": JSON.stringify(policy),
      },
    },
  });
  const newIds = new Set(plan.newEvents.map((entry) => entry.event.eventId));
  for (const { event, hash } of plan.newEvents) {
    const { sequence, ...content } = event;
    items.push({
      Put: {
        TableName: tableName,
        Item: {
          pk: pk(subject),
          sk: eventSk(event.eventId),
          seq: sequence,
          hash,
          body: JSON.stringify(content),
          actors: plan.actorsAdded.get(event.eventId) ?? [],
        },
        ConditionExpression: "attribute_not_exists(pk)",
      },
    });
  }
  for (const [target, actors] of plan.actorsAdded) {
    if (newIds.has(target)) continue; // a new event carries its actors in its own Put
    items.push({
      Update: {
        TableName: tableName,
        Key: { pk: pk(subject), sk: eventSk(target) },
        UpdateExpression: "SET actors = list_append(if_not_exists(actors, :none), :actors)",
        ConditionExpression: "attribute_exists(pk)",
        ExpressionAttributeValues: { ":actors": actors, ":none": [] },
      },
    });
  }
  for (const write of indexWrites(plan))
    items.push(
      write.kind === "put"
        ? {
            Put: {
              TableName: tableName,
              Item: { pk: pk(subject), ...write.item },
              ConditionExpression: "attribute_not_exists(pk)",
            },
          }
        : {
            Update: {
              TableName: tableName,
              Key: { pk: pk(subject), sk: write.sk },
              UpdateExpression: "SET more = :more",
              ConditionExpression: "attribute_exists(pk)",
              ExpressionAttributeValues: { ":more": true },
            },
          },
    );
  return items;
}

/** Records what the committed chunk wrote, for the chunks after it. */
function learnFromPlan(known: KnownState, plan: AppendPlan): void {
  known.clock = plan.clockAfter;
  for (const { event, hash } of plan.newEvents)
    known.events.set(event.eventId, {
      event,
      hash,
      actors: [...(plan.actorsAdded.get(event.eventId) ?? [])],
    });
  for (const [target, actors] of plan.actorsAdded) {
    const record = known.events.get(target);
    if (record && !plan.newEvents.some((entry) => entry.event.eventId === target))
      record.actors = [...record.actors, ...actors];
  }
  for (const entry of plan.index) known.index.set(indexSk(entry.key, entry.scope), entry);
}
