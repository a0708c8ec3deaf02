import { createHash } from "node:crypto";
import { z } from "zod";
import type { AppendPlan } from "#domain/append-plan.ts";
import { keyScope, positionId } from "#domain/conflicts.ts";
import { GateReport } from "#domain/gate/report.ts";
import { readingAt } from "#domain/readings.ts";
import type { LatestRule, MemoryEvent, StoredPolicy } from "#domain/schemas.ts";
import { DEFAULT_TRUST_POLICY, LatestRules, StoredPolicy as StoredPolicySchema } from "#domain/schemas.ts";
import { SELECTOR_VERSION, type SelectorVersion, selectorNamed } from "#domain/validity.ts";
import type { ArtifactRecord } from "#ports/artifact-records.ts";
import { type EpochClock, epochMovedAtOf } from "#ports/event-log.ts";
import { DEFAULT_SETTINGS } from "#ports/settings.ts";
import { SUBJECT_LIST, TABLE_ITEM_KEYS, TABLE_KEYS } from "./table-layout.ts";

/**
 * The DynamoDB table's keys and items, and the pure functions over them: item schemas (every item
 * read is parsed, never cast), the index items of new events and how a batch splits into
 * transactions.
 */

export { SUBJECT_LIST, TABLE_ITEM_KEYS, TABLE_KEYS };

/** DynamoDB's bound on one TransactWriteItems: 100 items, 4 MB (we keep a margin on size). */
export const MAX_TRANSACTION_ITEMS = 100;
export const MAX_TRANSACTION_BYTES = 3_500_000;
export const APPEND_ATTEMPTS = 8;

export const pk = (subject: string) => `S#${subject}`;

/** The subject of a stream record's keys when they are a CLOCK item's, else null. */
export function clockSubjectOf(keys: Record<string, { S?: string } | undefined>): string | null {
  const partition = keys[TABLE_KEYS.partition]?.S;
  if (keys[TABLE_KEYS.sort]?.S !== CLOCK || !partition?.startsWith("S#")) return null;
  return partition.slice(2);
}
export const CLOCK = TABLE_ITEM_KEYS.clock;
export const ALIAS = TABLE_ITEM_KEYS.alias;
export const eventSk = (eventId: string) => `E#${eventId}`;
export const artifactSk = (artifactId: string) => `A#${artifactId}`;
export const indexSk = (key: string, scope: string) =>
  `K#${createHash("sha256").update(keyScope(key, scope)).digest("hex")}`;

/**
 * Whether every clock carries `subjectList` (the index bySubject lists every subject): written by
 * the backfill when it has been through the table, with where it stopped until then. Outside every
 * subject's partition, like the settings.
 */
export const SUBJECT_INDEX_KEY = { pk: "TENANT", sk: "SUBJECT-INDEX" };
export const SubjectIndexItem = z.object({
  complete: z.boolean(),
  /** The Scan's LastEvaluatedKey where the last backfill stopped (absent once complete). */
  resumeAfter: z.record(z.string(), z.unknown()).optional(),
});

/** The tenant's switches: one item, outside every subject's partition. */
export const SETTINGS_KEY = { pk: "TENANT", sk: "SETTINGS" };
export const SettingsItem = z.object({
  publishMode: z.enum(["live", "shadow"]),
  recallBypass: z.boolean(),
  rebuildAfterEvents: z.number().int().positive().default(DEFAULT_SETTINGS.rebuildAfterEvents),
  model: z.string().min(1).optional(),
  latest: LatestRules.optional(),
  budget: z.number().int().positive().nullable().default(null),
});

export const ClockItem = z.object({
  highWater: z.number().int().nonnegative(),
  inputEpoch: z.number().int().nonnegative(),
  /** Absent on a clock written before it was kept (`epochMovedAtOf` answers then). */
  epochMovedAt: z.number().int().nonnegative().optional(),
  policy: z.string().optional(),
  selector: z.string().optional(),
});
export const AliasItem = z.object({
  artifactId: z.string(),
  sourceEpoch: z.number().int(),
  coversThrough: z.number().int(),
});
export const EventItem = z.object({
  sk: z.string(),
  seq: z.number().int().positive(),
  hash: z.string(),
  body: z.string(),
  actors: z.array(z.string()).default([]),
});
export const IndexItem = z.object({
  key: z.string(),
  scope: z.string(),
  position: z.string().optional(),
  holder: z.string().optional(),
  /**
   * The holder's sequence and reading time ("" without occurredAt), on items written since v3.
   * Not `seq`: that attribute is the local index bySequence's key, which holds events only.
   */
  holderSeq: z.number().int().positive().optional(),
  at: z.string().optional(),
  /** On a head: later holders have their own items. */
  more: z.boolean().optional(),
  /** The pre-split form: every position's holders in one item. */
  positions: z.record(z.string(), z.array(z.string())).optional(),
});
export const ArtifactItem = z.object({
  subject: z.string(),
  artifactId: z.string(),
  status: z.enum(["CANDIDATE", "REJECTED", "SHADOW", "PUBLISHED", "SUPERSEDED", "ABANDONED"]),
  stale: z.boolean().default(false),
  coversThrough: z.number().int(),
  inputEpoch: z.number().int(),
  parentArtifactId: z.string().nullable(),
  inputRoot: z.string(),
  gate: z.string(),
  createdAt: z.string(),
});

/**
 * A clock item as read: the clock, the subject's stored policy and the selector it follows, and
 * the policy attribute as stored (`policyText`, what a conditional policy write compares; null when
 * the clock or its policy is absent). `exists` is false for a subject with no clock yet.
 */
export type StoredClock = EpochClock & {
  policy: StoredPolicy;
  selector: SelectorVersion;
  policyText: string | null;
  exists: boolean;
};

/** The clock of an item; a subject without one has the zero clock under `storeLatest` (the store's rules). */
export function clockOf(
  item: Record<string, unknown> | undefined,
  storeLatest: readonly LatestRule[] = [],
): StoredClock {
  if (!item)
    return {
      highWater: 0,
      inputEpoch: 0,
      epochMovedAt: 0,
      policy: {
        ...DEFAULT_TRUST_POLICY,
        ...(storeLatest.length > 0 ? { storeLatest: [...storeLatest] } : {}),
      },
      selector: SELECTOR_VERSION,
      policyText: null,
      exists: false,
    };
  const clock = ClockItem.parse(item);
  return {
    highWater: clock.highWater,
    inputEpoch: clock.inputEpoch,
    epochMovedAt: epochMovedAtOf(clock, clock.epochMovedAt),
    policy: clock.policy ? StoredPolicySchema.parse(JSON.parse(clock.policy)) : DEFAULT_TRUST_POLICY,
    selector: selectorNamed(clock.selector),
    policyText: clock.policy ?? null,
    exists: true,
  };
}

/**
 * A ConditionCheck that the store's default `latest` rules are still `storeLatest`: a subject's
 * clock created with them is written in the same transaction, so a change of the default either
 * comes before it (and the clock is created with the new rules) or finds the clock to apply to.
 */
export function storeLatestCheck(tableName: string, storeLatest: readonly LatestRule[] | undefined) {
  return {
    ConditionCheck: {
      TableName: tableName,
      Key: SETTINGS_KEY,
      ...(storeLatest && storeLatest.length > 0
        ? { ConditionExpression: "latest = :latest", ExpressionAttributeValues: { ":latest": storeLatest } }
        : {
            ConditionExpression: "attribute_not_exists(latest) OR size(latest) = :none",
            ExpressionAttributeValues: { ":none": 0 },
          }),
    },
  };
}

export function recordOf(raw: Record<string, unknown>): ArtifactRecord {
  const item = ArtifactItem.parse(raw);
  return {
    subject: item.subject,
    artifactId: item.artifactId,
    status: item.status,
    stale: item.stale,
    coversThrough: item.coversThrough,
    inputEpoch: item.inputEpoch,
    parentArtifactId: item.parentArtifactId,
    inputRoot: item.inputRoot,
    gate: GateReport.parse(JSON.parse(item.gate)),
    createdAt: item.createdAt,
  };
}

/**
 * The conflict-index writes of a plan: each new holder of a (key, scope, position) is one small
 * item. A key's first holder ever is its head (`K#<hash>`); later holders get their own item
 * (`K#<hash>#<sequence>#<position>`) and the head is told it has more (read then by one Query).
 */
export function indexWrites(plan: Pick<AppendPlan, "newEvents" | "index">): Array<
  | {
      kind: "put";
      item: {
        sk: string;
        key: string;
        scope: string;
        position: string;
        holder: string;
        holderSeq: number;
        at: string;
        more?: true;
      };
    }
  | { kind: "more"; sk: string }
> {
  const fresh = new Set(plan.newEvents.map((entry) => entry.event.eventId));
  const hadHolders = new Set(
    plan.index
      .filter((entry) =>
        Object.values(entry.positions).some((holders) => holders.some((id) => !fresh.has(id))),
      )
      .map((entry) => indexSk(entry.key, entry.scope)),
  );
  const holders: Array<{
    sk: string;
    key: string;
    scope: string;
    position: string;
    holder: string;
    seq: number;
    at: string;
  }> = [];
  const seen = new Set<string>();
  for (const { event } of plan.newEvents)
    for (const assertion of event.assertions ?? []) {
      const position = positionId(assertion.polarity, assertion.value);
      const head = indexSk(assertion.key, assertion.scope);
      const id = `${head}#${event.eventId}#${position}`;
      if (seen.has(id)) continue;
      seen.add(id);
      holders.push({
        sk: head,
        key: assertion.key,
        scope: assertion.scope,
        position,
        holder: event.eventId,
        seq: event.sequence,
        at: readingAt(event.occurredAt) ?? "",
      });
    }
  const writes: ReturnType<typeof indexWrites> = [];
  const byHead = new Map<string, typeof holders>();
  for (const holder of holders) byHead.set(holder.sk, [...(byHead.get(holder.sk) ?? []), holder]);
  for (const [head, list] of byHead) {
    const rest = hadHolders.has(head) ? list : list.slice(1);
    if (!hadHolders.has(head)) {
      const first = list[0] as (typeof list)[number];
      writes.push({
        kind: "put",
        item: {
          sk: head,
          key: first.key,
          scope: first.scope,
          position: first.position,
          holder: first.holder,
          holderSeq: first.seq,
          at: first.at,
          ...(rest.length > 0 ? { more: true as const } : {}),
        },
      });
    } else if (rest.length > 0) writes.push({ kind: "more", sk: head });
    for (const holder of rest)
      writes.push({
        kind: "put",
        item: {
          sk: `${head}#${String(holder.seq).padStart(12, "0")}#${holder.position}`,
          key: holder.key,
          scope: holder.scope,
          position: holder.position,
          holder: holder.holder,
          holderSeq: holder.seq,
          at: holder.at,
        },
      });
  }
  return writes;
}

/** A single write's condition did not hold (not a cancelled transaction: see `publishRefusal`). */
export function isConditionFailure(error: unknown): boolean {
  return (error as { name?: string } | null)?.name === "ConditionalCheckFailedException";
}

/** A conditional write's outcome: true when it was written, false when its condition did not hold. */
export async function conditionalWrite(write: Promise<unknown>): Promise<boolean> {
  try {
    await write;
    return true;
  } catch (error) {
    if (isConditionFailure(error)) return false;
    throw error;
  }
}

/** Bytes an index item costs a transaction: its keys and names, generously. */
const INDEX_ITEM_OVERHEAD = 256;

/**
 * Splits a batch into chunks that each fit one TransactWriteItems: at most 100 items (the clock and
 * the store-default check, each event, each update of an older event it revokes or supersedes, each index item) and 4 MB
 * (event bodies are counted twice, as stored text and as sent; index items with their keys).
 */
export function chunkForTransactions(events: readonly MemoryEvent[]): MemoryEvent[][] {
  const chunks: MemoryEvent[][] = [];
  let chunk: MemoryEvent[] = [];
  // The clock, and the store-default check a subject's first append carries.
  const CLOCK_ITEMS = 2;
  let items = CLOCK_ITEMS;
  let bytes = 0;
  for (const event of events) {
    const positions = new Set(
      (event.assertions ?? []).map((a) => JSON.stringify([a.key, a.scope, a.polarity, a.value])),
    );
    const indexBytes = (event.assertions ?? []).reduce(
      (sum, a) => sum + 2 * (a.key.length + a.scope.length) + INDEX_ITEM_OVERHEAD,
      0,
    );
    const keys = new Set((event.assertions ?? []).map((a) => keyScope(a.key, a.scope)));
    // The event, each older event it links, each index item, and each key's head told of more.
    const cost =
      1 + (event.revokes?.length ?? 0) + (event.supersedes?.length ?? 0) + positions.size + keys.size;
    const size = JSON.stringify(event).length * 2 + indexBytes;
    if (chunk.length > 0 && (items + cost > MAX_TRANSACTION_ITEMS || bytes + size > MAX_TRANSACTION_BYTES)) {
      chunks.push(chunk);
      chunk = [];
      items = CLOCK_ITEMS;
      bytes = 0;
    }
    chunk.push(event);
    items += cost;
    bytes += size;
  }
  if (chunk.length > 0) chunks.push(chunk);
  return chunks;
}
