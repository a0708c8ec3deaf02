import type { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { TransactionCanceledException } from "@aws-sdk/client-dynamodb";
import {
  BatchGetCommand,
  type BatchGetCommandOutput,
  DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
  type QueryCommandInput,
  ScanCommand,
  type ScanCommandInput,
  TransactGetCommand,
  TransactWriteCommand,
  UpdateCommand,
} from "@aws-sdk/lib-dynamodb";
import type { AppendPlan, ConflictIndexEntry, StoredEvent } from "#domain/append-plan.ts";
import { planAppend } from "#domain/append-plan.ts";
import { decodeStoredEvent } from "#domain/hashing.ts";
import type { MemoryEvent, SequencedEvent, Snapshot, TrustPolicy } from "#domain/schemas.ts";
import { TrustPolicy as TrustPolicySchema } from "#domain/schemas.ts";
import { SELECTOR_VERSION, type SelectorVersion } from "#domain/validity.ts";
import { AlreadyWrittenError, StoreContentionError, translatePlanError } from "#ports/errors.ts";
import type {
  AliasPort,
  AliasState,
  AppendResult,
  ArtifactRecord,
  ArtifactStatus,
  Clock,
  EventLog,
  PublishRequest,
  SettingsPort,
  TenantSettings,
} from "#ports/store.ts";
import { DEFAULT_SETTINGS, snapshotOf } from "#ports/store.ts";

import {
  ALIAS,
  AliasItem,
  APPEND_ATTEMPTS,
  artifactSk,
  CLOCK,
  chunkForTransactions,
  clockOf,
  EventItem,
  eventSk,
  IndexItem,
  indexSk,
  indexWrites,
  isConditionFailure,
  pk,
  publishRefusal,
  recordOf,
  SETTINGS_KEY,
  SettingsItem,
  TABLE_KEYS,
} from "./dynamo-items.ts";

export { chunkForTransactions, publishRefusal, TABLE_KEYS } from "./dynamo-items.ts";

/**
 * The DynamoDB adapter: one table per tenant, pk = `S#<subject>`.
 *   CLOCK {highWater, inputEpoch, policy, selector} · ALIAS {artifactId, sourceEpoch, coversThrough}
 *   E#<eventId> {seq, hash, body, actors} (immutable body; `seq` feeds the local index bySequence)
 *   K#<hash of key, scope> {key, scope, positions} the conflict index
 *   A#<artifactId> {status, stale, coversThrough, inputEpoch, parent, inputRoot, gate, createdAt}
 * Appends are TransactWriteItems fenced on the clock they read (a concurrent append cancels ours and
 * we plan again); a publish is exactly one TransactWriteItems; a snapshot exactly one TransactGetItems.
 */

export class DynamoStore implements EventLog, AliasPort, SettingsPort {
  readonly doc: DynamoDBDocumentClient;

  constructor(
    client: DynamoDBClient,
    readonly tableName: string,
  ) {
    this.doc = DynamoDBDocumentClient.from(client, { marshallOptions: { removeUndefinedValues: true } });
  }

  private async readClock(
    subject: string,
  ): Promise<Clock & { policy: TrustPolicy; selector: SelectorVersion }> {
    const { Item } = await this.doc.send(
      new GetCommand({
        TableName: this.tableName,
        Key: { pk: pk(subject), sk: CLOCK },
        ConsistentRead: true,
      }),
    );
    return clockOf(Item);
  }

  private async loadEvents(subject: string, ids: readonly string[]): Promise<Map<string, StoredEvent>> {
    const found = new Map<string, StoredEvent>();
    for (const raw of await this.batchGetAll(subject, ids.map(eventSk))) {
      const item = EventItem.parse(raw);
      const event = decodeStoredEvent(item.body, item.seq, item.hash);
      found.set(event.eventId, { event, hash: item.hash, actors: item.actors });
    }
    return found;
  }

  /** The items of a subject with these sort keys (absent ones skipped), 100 keys a BatchGetItem. */
  private async batchGetAll(
    subject: string,
    sortKeys: readonly string[],
  ): Promise<Record<string, unknown>[]> {
    const items: Record<string, unknown>[] = [];
    const unique = [...new Set(sortKeys)];
    for (let start = 0; start < unique.length; start += 100) {
      let keys: Array<Record<string, unknown>> | undefined = unique
        .slice(start, start + 100)
        .map((sk) => ({ pk: pk(subject), sk }));
      // BatchGetItem may return part of the keys unprocessed under load: ask again for those.
      while (keys && keys.length > 0) {
        const result: BatchGetCommandOutput = await this.doc.send(
          new BatchGetCommand({ RequestItems: { [this.tableName]: { Keys: keys, ConsistentRead: true } } }),
        );
        items.push(...(result.Responses?.[this.tableName] ?? []));
        keys = result.UnprocessedKeys?.[this.tableName]?.Keys;
      }
    }
    return items;
  }

  /**
   * The conflict index of each (key, scope), as small items: a head (`K#<hash of key, scope>`, the
   * first holder) and one item per later holder (`K#<hash>#<sequence>#<position>`), so no item
   * grows with a key's history (an item is at most 400 KB). Heads are read with BatchGetItem (100
   * a request); only a key whose head says it has more holders costs a Query. A pre-split head
   * holding the whole `positions` map is read too.
   */
  private async loadIndex(
    subject: string,
    keyScopes: ReadonlyArray<{ key: string; scope: string }>,
  ): Promise<ConflictIndexEntry[]> {
    const unique = [...new Set(keyScopes.map((ks) => indexSk(ks.key, ks.scope)))];
    const heads = new Map(
      (await this.batchGetAll(subject, unique)).map((raw) => [String(raw.sk), raw] as const),
    );
    const entries: ConflictIndexEntry[] = [];
    for (const sk of unique) {
      const raw = heads.get(sk);
      if (!raw) continue;
      const head = IndexItem.parse(raw);
      const items = head.more ? [head, ...(await this.indexTail(subject, sk))] : [head];
      const positions: Record<string, string[]> = {};
      const add = (position: string, holder: string) => {
        const holders = positions[position] ?? [];
        if (!holders.includes(holder)) holders.push(holder);
        positions[position] = holders;
      };
      for (const item of items) {
        if (item.position !== undefined && item.holder !== undefined) add(item.position, item.holder);
        for (const [position, holders] of Object.entries(item.positions ?? {}))
          for (const holder of holders) add(position, holder);
      }
      entries.push({ key: head.key, scope: head.scope, positions });
    }
    return entries;
  }

  /** The holder items after a key's head, in sequence order. */
  private async indexTail(subject: string, headSk: string) {
    return (
      await this.queryAll({
        KeyConditionExpression: "pk = :pk AND begins_with(sk, :prefix)",
        ExpressionAttributeValues: { ":pk": pk(subject), ":prefix": `${headSk}#` },
      })
    ).map((raw) => IndexItem.parse(raw));
  }

  async append(subject: string, events: readonly MemoryEvent[]): Promise<AppendResult> {
    const chunks = chunkForTransactions(events);
    const known = chunks.length > 1 ? await this.refuseBadBatch(subject, events) : null;
    const appended: string[] = [];
    const duplicates: string[] = [];
    let last: Clock | null = null;
    let epochMoved = false;
    let validityChanged = false;
    for (const chunk of chunks) {
      const plan = await this.appendChunk(subject, chunk, known);
      appended.push(...plan.newEvents.map((entry) => entry.event.eventId));
      duplicates.push(...plan.duplicates);
      epochMoved ||= plan.clockAfter.inputEpoch !== plan.clockBefore.inputEpoch;
      validityChanged ||= plan.validityChanged;
      last = plan.clockAfter;
    }
    last ??= await this.readClock(subject);
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

  /**
   * A batch written in several chunks is checked whole first (conflicting re-sends, bad links), so
   * that a refused batch writes nothing; a one-chunk batch gets the same check inside its plan. What
   * the check read is kept for the chunks: valid while the clock shows no other writer in between.
   */
  private async refuseBadBatch(subject: string, events: readonly MemoryEvent[]): Promise<KnownState> {
    const clock = await this.readClock(subject);
    const known: KnownState = { clock, events: new Map(), index: new Map() };
    const keyScopes = new Map<string, { key: string; scope: string }>();
    for (const event of events)
      for (const a of event.assertions ?? []) keyScopes.set(indexSk(a.key, a.scope), a);
    for (const entry of await this.loadIndex(subject, [...keyScopes.values()]))
      known.index.set(indexSk(entry.key, entry.scope), entry);
    for (const id of keyScopes.keys()) if (!known.index.has(id)) known.index.set(id, null);
    try {
      await planAppend(events, {
        clock,
        policy: clock.policy,
        loadEvents: (ids) => this.loadEventsThrough(subject, ids, known),
        loadIndex: async () => [],
      });
    } catch (error) {
      throw translatePlanError(subject, error);
    }
    return known;
  }

  /** Loads events, answering from `known` what it holds (present or known absent). */
  private async loadEventsThrough(
    subject: string,
    ids: readonly string[],
    known: KnownState | null,
  ): Promise<Map<string, StoredEvent>> {
    if (!known) return this.loadEvents(subject, ids);
    const missing = ids.filter((id) => !known.events.has(id));
    const loaded =
      missing.length > 0 ? await this.loadEvents(subject, missing) : new Map<string, StoredEvent>();
    for (const id of missing) known.events.set(id, loaded.get(id) ?? null);
    const found = new Map<string, StoredEvent>();
    for (const id of ids) {
      const record = known.events.get(id);
      if (record) found.set(id, record);
    }
    return found;
  }

  private async loadIndexThrough(
    subject: string,
    keyScopes: ReadonlyArray<{ key: string; scope: string }>,
    known: KnownState | null,
  ): Promise<ConflictIndexEntry[]> {
    if (!known) return this.loadIndex(subject, keyScopes);
    const missing = keyScopes.filter(({ key, scope }) => !known.index.has(indexSk(key, scope)));
    for (const entry of await this.loadIndex(subject, missing))
      known.index.set(indexSk(entry.key, entry.scope), entry);
    for (const { key, scope } of missing)
      if (!known.index.has(indexSk(key, scope))) known.index.set(indexSk(key, scope), null);
    return keyScopes
      .map(({ key, scope }) => known.index.get(indexSk(key, scope)))
      .filter((entry) => entry != null);
  }

  /** Plans and writes one chunk atomically, fenced on the clock; plans again if another append won. */
  private async appendChunk(
    subject: string,
    chunk: readonly MemoryEvent[],
    knownBefore: KnownState | null,
  ): Promise<AppendPlan> {
    let known = knownBefore;
    for (let attempt = 1; ; attempt++) {
      const clock = await this.readClock(subject);
      // What earlier reads learnt holds only if no other writer appended since.
      if (known && (known.clock.highWater !== clock.highWater || known.clock.inputEpoch !== clock.inputEpoch))
        known = null;
      let plan: AppendPlan;
      try {
        plan = await planAppend(chunk, {
          clock,
          policy: clock.policy,
          loadEvents: (ids) => this.loadEventsThrough(subject, ids, known),
          loadIndex: (keyScopes) => this.loadIndexThrough(subject, keyScopes, known),
        });
      } catch (error) {
        throw translatePlanError(subject, error);
      }
      if (plan.newEvents.length === 0) return plan;
      try {
        await this.doc.send(
          new TransactWriteCommand({ TransactItems: this.appendItems(subject, plan, clock.policy) }),
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
        await new Promise((resolve) => setTimeout(resolve, 10 * 2 ** attempt * Math.random()));
      }
    }
  }

  private appendItems(subject: string, plan: AppendPlan, policy: TrustPolicy) {
    const items: NonNullable<ConstructorParameters<typeof TransactWriteCommand>[0]["TransactItems"]> = [];
    const { clockBefore, clockAfter } = plan;
    items.push({
      Update: {
        TableName: this.tableName,
        Key: { pk: pk(subject), sk: CLOCK },
        // The first append starts a subject on the current selector; older subjects keep theirs.
        // rebuildCheck: the sweep's sparse index finds this subject until it is checked.
        UpdateExpression: `SET highWater = :h, inputEpoch = :e, policy = if_not_exists(policy, :p), rebuildCheck = :pk${
          clockBefore.highWater === 0 ? ", selector = if_not_exists(selector, :sel)" : ""
        }`,
        ConditionExpression:
          "(attribute_not_exists(pk) AND :h0 = :zero AND :e0 = :zero) OR (highWater = :h0 AND inputEpoch = :e0)",
        ExpressionAttributeValues: {
          ...(clockBefore.highWater === 0 ? { ":sel": SELECTOR_VERSION } : {}),
          ":pk": pk(subject),
          ":h": clockAfter.highWater,
          ":e": clockAfter.inputEpoch,
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
          TableName: this.tableName,
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
          TableName: this.tableName,
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
                TableName: this.tableName,
                Item: { pk: pk(subject), ...write.item },
                ConditionExpression: "attribute_not_exists(pk)",
              },
            }
          : {
              Update: {
                TableName: this.tableName,
                Key: { pk: pk(subject), sk: write.sk },
                UpdateExpression: "SET more = :more",
                ConditionExpression: "attribute_exists(pk)",
                ExpressionAttributeValues: { ":more": true },
              },
            },
      );
    return items;
  }

  async snapshot(subject: string): Promise<Snapshot> {
    const { Responses } = await this.doc.send(
      new TransactGetCommand({
        TransactItems: [
          { Get: { TableName: this.tableName, Key: { pk: pk(subject), sk: CLOCK } } },
          { Get: { TableName: this.tableName, Key: { pk: pk(subject), sk: ALIAS } } },
        ],
      }),
    );
    const clock = clockOf(Responses?.[0]?.Item);
    const alias = Responses?.[1]?.Item ? AliasItem.parse(Responses[1].Item) : null;
    return snapshotOf(subject, clock, alias);
  }

  /** Every item a Query matches, page after page (strongly consistent). */
  private async queryAll(
    input: Omit<QueryCommandInput, "TableName" | "ExclusiveStartKey" | "ConsistentRead" | "Limit">,
    limit = Number.POSITIVE_INFINITY,
  ) {
    const items: Record<string, unknown>[] = [];
    let start: Record<string, unknown> | undefined;
    do {
      const page = await this.doc.send(
        new QueryCommand({
          ...input,
          TableName: this.tableName,
          ConsistentRead: true,
          ExclusiveStartKey: start,
          ...(Number.isFinite(limit) ? { Limit: limit - items.length } : {}),
        }),
      );
      items.push(...(page.Items ?? []));
      start = page.LastEvaluatedKey;
    } while (start && items.length < limit);
    return items;
  }

  private async queryBySequence(
    subject: string,
    condition: string,
    bound: number,
  ): Promise<SequencedEvent[]> {
    const items = await this.queryAll({
      IndexName: TABLE_KEYS.sequenceIndex,
      KeyConditionExpression: `pk = :pk AND ${condition}`,
      ExpressionAttributeValues: { ":pk": pk(subject), ":bound": bound },
    });
    return items.map((raw) => {
      const item = EventItem.parse(raw);
      return decodeStoredEvent(item.body, item.seq, item.hash);
    });
  }

  async eventsPage(subject: string, after: number, through: number, limit: number): Promise<StoredEvent[]> {
    if (after >= through || limit <= 0) return [];
    const items = await this.queryAll(
      {
        IndexName: TABLE_KEYS.sequenceIndex,
        KeyConditionExpression: "pk = :pk AND seq BETWEEN :from AND :to",
        ExpressionAttributeValues: { ":pk": pk(subject), ":from": after + 1, ":to": through },
      },
      limit,
    );
    return items.map((raw) => {
      const item = EventItem.parse(raw);
      return {
        event: decodeStoredEvent(item.body, item.seq, item.hash),
        hash: item.hash,
        actors: item.actors,
      };
    });
  }

  eventsById(subject: string, ids: readonly string[]): Promise<Map<string, StoredEvent>> {
    return this.loadEvents(subject, ids);
  }

  eventsThrough(subject: string, highWater: number): Promise<SequencedEvent[]> {
    return this.queryBySequence(subject, "seq <= :bound", highWater);
  }

  eventsAfter(subject: string, after: number): Promise<SequencedEvent[]> {
    return this.queryBySequence(subject, "seq > :bound", after);
  }

  async trustPolicy(subject: string): Promise<TrustPolicy> {
    return (await this.readClock(subject)).policy;
  }

  async setTrustPolicy(
    subject: string,
    policy: TrustPolicy,
    expected: Clock,
    moveEpoch: boolean,
  ): Promise<Clock | null> {
    const changed = await this.updateClockIf(subject, expected, moveEpoch, "policy = :p", {
      ":p": JSON.stringify(TrustPolicySchema.parse(policy)),
    });
    return changed
      ? { highWater: expected.highWater, inputEpoch: expected.inputEpoch + (moveEpoch ? 1 : 0) }
      : null;
  }

  async selectorVersion(subject: string): Promise<SelectorVersion> {
    return (await this.readClock(subject)).selector;
  }

  adoptSelector(
    subject: string,
    version: SelectorVersion,
    expected: Clock,
    moveEpoch: boolean,
  ): Promise<boolean> {
    return this.updateClockIf(subject, expected, moveEpoch, "selector = :v", { ":v": version });
  }

  /**
   * Sets `assignment` on the clock only if it still equals `expected` (or is absent while expected
   * is the zero clock), moving the epoch by one when `moveEpoch` (and marking the subject for the
   * sweep then); false when the clock moved meanwhile.
   */
  private async updateClockIf(
    subject: string,
    expected: Clock,
    moveEpoch: boolean,
    assignment: string,
    values: Record<string, unknown>,
  ): Promise<boolean> {
    try {
      await this.doc.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { pk: pk(subject), sk: CLOCK },
          UpdateExpression: `SET ${assignment}, inputEpoch = :e, highWater = :h${moveEpoch ? ", rebuildCheck = :pk" : ""}`,
          ConditionExpression:
            "(attribute_not_exists(pk) AND :h = :zero AND :e0 = :zero) OR (highWater = :h AND inputEpoch = :e0)",
          ExpressionAttributeValues: {
            ...values,
            ...(moveEpoch ? { ":pk": pk(subject) } : {}),
            ":e": expected.inputEpoch + (moveEpoch ? 1 : 0),
            ":h": expected.highWater,
            ":e0": expected.inputEpoch,
            ":zero": 0,
          },
        }),
      );
      return true;
    } catch (error) {
      if (isConditionFailure(error)) return false;
      throw error;
    }
  }

  /** A scan of the sparse index: only the clocks changed since they were last checked. */
  subjectsToCheck(_rebuildAfterEvents: number): Promise<string[]> {
    return this.scanSubjects({ IndexName: TABLE_KEYS.rebuildCheckIndex });
  }

  /** The subjects of the items a Scan finds (each item's pk is `S#<subject>`), sorted. */
  private async scanSubjects(
    input: Omit<ScanCommandInput, "TableName" | "ExclusiveStartKey">,
  ): Promise<string[]> {
    const subjects: string[] = [];
    let start: Record<string, unknown> | undefined;
    do {
      const page = await this.doc.send(
        new ScanCommand({
          ...input,
          TableName: this.tableName,
          ...(start ? { ExclusiveStartKey: start } : {}),
        }),
      );
      for (const item of page.Items ?? []) subjects.push(String(item.pk).slice(2));
      start = page.LastEvaluatedKey;
    } while (start);
    return subjects.sort();
  }

  async markChecked(subject: string, checked: Clock): Promise<void> {
    try {
      await this.doc.send(
        new UpdateCommand({
          TableName: this.tableName,
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

  /** A scan of the clock items: for the one-off move of existing subjects to a new selector. */
  subjectsNotOn(version: SelectorVersion): Promise<string[]> {
    return this.scanSubjects({
      FilterExpression: "sk = :clock AND (attribute_not_exists(selector) OR selector <> :v)",
      ExpressionAttributeValues: { ":clock": CLOCK, ":v": version },
      ProjectionExpression: "pk",
    });
  }

  async listSubjects(): Promise<string[]> {
    const subjects = await this.scanSubjects({
      FilterExpression: "sk = :clock",
      ExpressionAttributeValues: { ":clock": CLOCK },
      ProjectionExpression: "pk",
    });
    return subjects.sort();
  }

  async readAlias(subject: string): Promise<AliasState | null> {
    const { Item } = await this.doc.send(
      new GetCommand({
        TableName: this.tableName,
        Key: { pk: pk(subject), sk: ALIAS },
        ConsistentRead: true,
      }),
    );
    return Item ? AliasItem.parse(Item) : null;
  }

  async publishIfUnchanged(request: PublishRequest): Promise<AliasState> {
    const { subject, artifactId, expectedAlias, inputEpoch, newCoversThrough } = request;
    const next: AliasState = { artifactId, sourceEpoch: inputEpoch, coversThrough: newCoversThrough };
    const items: NonNullable<ConstructorParameters<typeof TransactWriteCommand>[0]["TransactItems"]> = [
      {
        ConditionCheck: {
          TableName: this.tableName,
          Key: { pk: pk(subject), sk: CLOCK },
          // The fence, and no coverage past the log: a forged snapshot cannot publish.
          ConditionExpression: "inputEpoch = :epoch AND highWater >= :covers",
          ExpressionAttributeValues: { ":epoch": inputEpoch, ":covers": newCoversThrough },
          ReturnValuesOnConditionCheckFailure: "ALL_OLD",
        },
      },
      {
        Update: {
          TableName: this.tableName,
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
          TableName: this.tableName,
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
          TableName: this.tableName,
          Key: { pk: pk(subject), sk: artifactSk(expectedAlias.parentArtifactId) },
          UpdateExpression: "SET #status = :superseded",
          ConditionExpression: "#status = :published",
          ExpressionAttributeNames: { "#status": "status" },
          ExpressionAttributeValues: { ":superseded": "SUPERSEDED", ":published": "PUBLISHED" },
        },
      });
    try {
      await this.doc.send(new TransactWriteCommand({ TransactItems: items }));
      return next;
    } catch (error) {
      throw publishRefusal(error, request);
    }
  }

  async recordArtifact(record: ArtifactRecord): Promise<void> {
    try {
      await this.doc.send(
        new PutCommand({
          TableName: this.tableName,
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

  async getRecord(subject: string, artifactId: string): Promise<ArtifactRecord | null> {
    const { Item } = await this.doc.send(
      new GetCommand({
        TableName: this.tableName,
        Key: { pk: pk(subject), sk: artifactSk(artifactId) },
        ConsistentRead: true,
      }),
    );
    return Item ? recordOf(Item) : null;
  }

  async listRecords(subject: string): Promise<ArtifactRecord[]> {
    const items = await this.queryAll({
      KeyConditionExpression: "pk = :pk AND begins_with(sk, :prefix)",
      ExpressionAttributeValues: { ":pk": pk(subject), ":prefix": "A#" },
    });
    const records = items.map(recordOf);
    return records.sort((a, b) =>
      a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : a.artifactId < b.artifactId ? -1 : 1,
    );
  }

  async settings(): Promise<TenantSettings> {
    const { Item } = await this.doc.send(
      new GetCommand({ TableName: this.tableName, Key: SETTINGS_KEY, ConsistentRead: true }),
    );
    if (!Item) return DEFAULT_SETTINGS;
    const { model, ...settings } = SettingsItem.parse(Item);
    return model === undefined ? settings : { ...settings, model };
  }

  async updateSettings(patch: Partial<TenantSettings>): Promise<TenantSettings> {
    const next = { ...(await this.settings()), ...patch };
    await this.doc.send(new PutCommand({ TableName: this.tableName, Item: { ...SETTINGS_KEY, ...next } }));
    return next;
  }

  async transition(
    subject: string,
    artifactId: string,
    from: readonly ArtifactStatus[],
    to: ArtifactStatus,
  ): Promise<boolean> {
    return this.updateArtifactWhere(subject, artifactId, from, "SET #status = :to", { ":to": to });
  }

  markStale(subject: string, artifactId: string, from: readonly ArtifactStatus[]): Promise<boolean> {
    return this.updateArtifactWhere(subject, artifactId, from, "SET stale = :stale", { ":stale": true });
  }

  /** One conditional update of an artifact record that is in one of `from` and not marked stale. */
  private async updateArtifactWhere(
    subject: string,
    artifactId: string,
    from: readonly ArtifactStatus[],
    update: string,
    values: Record<string, unknown>,
  ): Promise<boolean> {
    if (from.length === 0) return false;
    const statuses = Object.fromEntries(from.map((status, index) => [`:from${index}`, status]));
    try {
      await this.doc.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { pk: pk(subject), sk: artifactSk(artifactId) },
          UpdateExpression: update,
          ConditionExpression: `attribute_exists(pk) AND stale = :fresh AND #status IN (${Object.keys(statuses).join(", ")})`,
          ExpressionAttributeNames: { "#status": "status" },
          ExpressionAttributeValues: { ...values, ...statuses, ":fresh": false },
        }),
      );
      return true;
    } catch (error) {
      if (isConditionFailure(error)) return false;
      throw error;
    }
  }
}

/** What an append has read and written, valid while the clock stays where it left it. */
interface KnownState {
  clock: Clock;
  /** Event id → its stored record, or null when known not to be stored. */
  events: Map<string, StoredEvent | null>;
  /** Index sort key → its entry, or null when known to be absent. */
  index: Map<string, ConflictIndexEntry | null>;
}

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
