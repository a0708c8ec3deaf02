import type { AppendPlan, ConflictIndexEntry, StoredEvent } from "#domain/append-plan.ts";
import { planAppend } from "#domain/append-plan.ts";
import { deepFreeze } from "#domain/frozen.ts";
import { canonicalJson, decodeStoredEvent } from "#domain/hashing.ts";
import { effectivePolicy } from "#domain/readings.ts";
import type { MemoryEvent, SequencedEvent, StoredPolicy } from "#domain/schemas.ts";
import { DEFAULT_TRUST_POLICY, StoredPolicy as StoredPolicySchema } from "#domain/schemas.ts";
import { SELECTOR_VERSION, type SelectorVersion, selectorNamed } from "#domain/validity.ts";
import { translatePlanError } from "#ports/errors.ts";
import { type AppendWritten, type Clock, type EpochClock, epochMovedAtOf } from "#ports/event-log.ts";
import { mapWithPauses, type Pause } from "#ports/time.ts";
import type { SqliteConnection } from "./sqlite-database.ts";
import { readSettings } from "./sqlite-settings.ts";

/**
 * The event log and its clock in SQLite: events (immutable rows, by triggers), the ids acting on
 * each (`event_actors`), the conflict index and the clock row. Each function runs inside the
 * transaction its caller opened (`SqliteDatabase.write` or `read`), on the connection it was handed.
 */

interface EventRow {
  event_id: string;
  sequence: number;
  hash: string;
  body: string;
}

/** An event row with the ids acting on it (a JSON array), read in the same statement. */
interface ActedRow extends EventRow {
  actors: string;
}

const SELECT_ACTED = `SELECT event_id, sequence, hash, body,
  (SELECT json_group_array(actor_id ORDER BY actor_id) FROM event_actors
    WHERE event_actors.subject = events.subject AND target_id = events.event_id) AS actors
  FROM events`;

type StoredClock = EpochClock & { policy: StoredPolicy; selector: SelectorVersion };

/**
 * The subject's clock; the zero clock on the current selector when it has none yet, whose policy
 * is the default one under the store's `latest` rules now (read in the caller's transaction, so a
 * new subject and a change of the store default are ordered).
 */
export function readClock(db: SqliteConnection, subject: string): StoredClock {
  const row = db
    .statement(
      "SELECT high_water, input_epoch, epoch_moved_at, policy, selector FROM clock WHERE subject = ?",
    )
    .get(subject) as
    | {
        high_water: number;
        input_epoch: number;
        epoch_moved_at: number | null;
        policy: string | null;
        selector: string | null;
      }
    | undefined;
  const storeLatest = row ? undefined : readSettings(db).latest;
  return {
    highWater: row?.high_water ?? 0,
    inputEpoch: row?.input_epoch ?? 0,
    epochMovedAt: row
      ? epochMovedAtOf({ highWater: row.high_water, inputEpoch: row.input_epoch }, row.epoch_moved_at)
      : 0,
    policy: row?.policy
      ? parsedPolicy(row.policy)
      : { ...DEFAULT_TRUST_POLICY, ...(storeLatest?.length ? { storeLatest } : {}) },
    selector: row ? selectorNamed(row.selector) : SELECTOR_VERSION,
  };
}

/**
 * A stored policy's text, parsed once: every clock read needs it (appends, recalls, snapshots), and
 * the same text always parses to the same policy, so parsed policies are kept by their text.
 */
function parsedPolicy(text: string): StoredPolicy {
  let policy = parsedPolicies.get(text);
  if (!policy) {
    // Shared by every read of this text: frozen throughout, so no reader can change what another sees.
    policy = deepFreeze(StoredPolicySchema.parse(JSON.parse(text)));
    if (parsedPolicies.size >= 1024) parsedPolicies.clear();
    parsedPolicies.set(text, policy);
    policyTexts.set(policy, text);
  }
  return policy;
}
const parsedPolicies = new Map<string, StoredPolicy>();
/** The stored text of each parsed policy: an append writes its clock back with the policy it read. */
const policyTexts = new WeakMap<StoredPolicy, string>();

function writeClock(db: SqliteConnection, subject: string, clock: EpochClock, policy: StoredPolicy): void {
  db.statement(
    // A new subject starts on the current selector; an existing one keeps its own until adopted.
    "INSERT INTO clock (subject, high_water, input_epoch, epoch_moved_at, policy, selector) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (subject) DO UPDATE SET high_water = excluded.high_water, input_epoch = excluded.input_epoch, epoch_moved_at = excluded.epoch_moved_at, policy = excluded.policy",
  ).run(
    subject,
    clock.highWater,
    clock.inputEpoch,
    clock.epochMovedAt,
    policyTexts.get(policy) ?? JSON.stringify(policy),
    SELECTOR_VERSION,
  );
}

/** The clock a write leaves: `next`, its epoch moved at its highWater when the write moved it. */
function clockAfter(before: EpochClock, next: Clock): EpochClock {
  return {
    ...next,
    epochMovedAt: next.inputEpoch !== before.inputEpoch ? next.highWater : before.epochMovedAt,
  };
}

/** Plans the batch against the stored log (the planner's loaders read inside this transaction) and applies it. */
export async function appendEvents(
  db: SqliteConnection,
  subject: string,
  events: readonly MemoryEvent[],
  pause: Pause,
): Promise<{ written: AppendWritten; clock: EpochClock }> {
  const clock = readClock(db, subject);
  let plan: AppendPlan;
  try {
    plan = await planAppend(events, {
      clock,
      policy: effectivePolicy(clock.policy),
      loadEvents: async (ids) => eventsById(db, subject, ids),
      loadIndex: (keyScopes) => loadIndexPaced(db, subject, keyScopes, pause),
      pause,
    });
  } catch (error) {
    throw translatePlanError(subject, error);
  }
  const after = clockAfter(clock, plan.clockAfter);
  await applyPlan(db, subject, plan, after, clock.policy, pause);
  return {
    written: {
      appended: plan.newEvents.map((entry) => entry.event.eventId),
      duplicates: plan.duplicates,
      highWater: plan.clockAfter.highWater,
      inputEpoch: plan.clockAfter.inputEpoch,
      epochMoved: plan.clockAfter.inputEpoch !== plan.clockBefore.inputEpoch,
      validityChanged: plan.validityChanged,
      chunks: 1,
    },
    clock: after,
  };
}

async function applyPlan(
  db: SqliteConnection,
  subject: string,
  plan: AppendPlan,
  clock: EpochClock,
  policy: StoredPolicy,
  pause: Pause,
): Promise<void> {
  const insertEvent = db.statement(
    "INSERT INTO events (subject, event_id, sequence, hash, body) VALUES (?, ?, ?, ?, ?)",
  );
  for (const { event, hash } of plan.newEvents) {
    await pause();
    const { sequence, ...content } = event;
    insertEvent.run(subject, event.eventId, sequence, hash, JSON.stringify(content));
  }
  const insertActor = db.statement(
    "INSERT OR IGNORE INTO event_actors (subject, target_id, actor_id) VALUES (?, ?, ?)",
  );
  for (const [target, actors] of plan.actorsAdded)
    for (const actor of actors) insertActor.run(subject, target, actor);
  const upsertIndex = db.statement(
    "INSERT INTO conflict_index (subject, key, scope, positions, readings) VALUES (?, ?, ?, ?, ?) ON CONFLICT (subject, key, scope) DO UPDATE SET positions = excluded.positions, readings = excluded.readings",
  );
  for (const entry of plan.index)
    upsertIndex.run(
      subject,
      entry.key,
      entry.scope,
      JSON.stringify(entry.positions),
      entry.readings ? JSON.stringify(entry.readings) : null,
    );
  writeClock(db, subject, clock, policy);
}

/** Keys a step of `loadIndexPaced` reads before it lets other work run. */
const INDEX_KEYS_PER_STEP = 256;

/** `loadIndex` a step at a time: a batch touching thousands of (key, scope)s pauses between steps. */
async function loadIndexPaced(
  db: SqliteConnection,
  subject: string,
  keyScopes: ReadonlyArray<{ key: string; scope: string }>,
  pause: Pause,
): Promise<ConflictIndexEntry[]> {
  const entries: ConflictIndexEntry[] = [];
  for (let start = 0; start < keyScopes.length; start += INDEX_KEYS_PER_STEP) {
    await pause();
    entries.push(...loadIndex(db, subject, keyScopes.slice(start, start + INDEX_KEYS_PER_STEP)));
  }
  return entries;
}

/** The conflict index entries of the given (key, scope) pairs, with the reading times kept since v3. */
export function loadIndex(
  db: SqliteConnection,
  subject: string,
  keyScopes: ReadonlyArray<{ key: string; scope: string }>,
): ConflictIndexEntry[] {
  const select = db.statement(
    "SELECT positions, readings FROM conflict_index WHERE subject = ? AND key = ? AND scope = ?",
  );
  const entries: ConflictIndexEntry[] = [];
  for (const { key, scope } of keyScopes) {
    const row = select.get(subject, key, scope) as { positions: string; readings: string | null } | undefined;
    if (row)
      entries.push({
        key,
        scope,
        positions: JSON.parse(row.positions),
        ...(row.readings ? { readings: JSON.parse(row.readings) } : {}),
      });
  }
  return entries;
}

/** Stored events by id, each with the ids acting on it; unknown ids are absent. */
export function eventsById(
  db: SqliteConnection,
  subject: string,
  ids: readonly string[],
): Map<string, StoredEvent> {
  const found = new Map<string, StoredEvent>();
  const byId = db.statement(`${SELECT_ACTED} WHERE subject = ? AND event_id = ?`);
  for (const id of ids) {
    const row = byId.get(subject, id) as ActedRow | undefined;
    if (row) found.set(id, storedEvent(row));
  }
  return found;
}

/**
 * Every stored event whose sequence meets `condition` (one `?`, bound to `bound`), ascending. Events
 * through a sequence are written once and never change, so they are read a page at a time with
 * pauses between pages; events after one are read at once (one statement, one database state).
 * Rows are decoded with pauses between events.
 */
export async function eventsWhere(
  db: SqliteConnection,
  subject: string,
  condition: "sequence <= ?" | "sequence > ?",
  bound: number,
  pause: Pause,
): Promise<SequencedEvent[]> {
  if (condition === "sequence > ?") {
    const rows = db
      .statement(
        `SELECT event_id, sequence, hash, body FROM events WHERE subject = ? AND sequence > ? ORDER BY sequence`,
      )
      .all(subject, bound) as EventRow[];
    return mapWithPauses(rows, pause, decodeRow);
  }
  const page = db.statement(
    "SELECT event_id, sequence, hash, body FROM events WHERE subject = ? AND sequence > ? AND sequence <= ? ORDER BY sequence LIMIT ?",
  );
  const events: SequencedEvent[] = [];
  for (let after = 0; ; ) {
    await pause();
    const rows = page.all(subject, after, bound, EVENTS_PER_PAGE) as EventRow[];
    events.push(...(await mapWithPauses(rows, pause, decodeRow)));
    if (rows.length < EVENTS_PER_PAGE) return events;
    after = (rows[rows.length - 1] as EventRow).sequence;
  }
}

/** Events one statement of `eventsWhere` reads through a sequence. */
const EVENTS_PER_PAGE = 1000;

/**
 * At most `limit` events with after < sequence <= through, ascending, with the ids acting on each.
 * With `held`, the events it holds from the start of the range are read from memory but for the
 * acting ids, the rest from the database, and those are held for the next read.
 */
export function eventsPage(
  db: SqliteConnection,
  subject: string,
  after: number,
  through: number,
  limit: number,
  held?: HeldEvents,
): StoredEvent[] {
  const known = held?.prefix(subject, after + 1, Math.min(through, after + limit)) ?? [];
  const from = after + known.length;
  const rows =
    known.length === limit || from >= through
      ? []
      : (db
          .statement(
            `${SELECT_ACTED} WHERE subject = ? AND sequence > ? AND sequence <= ? ORDER BY sequence LIMIT ?`,
          )
          .all(subject, from, through, limit - known.length) as ActedRow[]);
  const read = rows.map(storedEvent);
  held?.hold(subject, read, rows);
  return known.length === 0 ? read : [...withActors(db, subject, known), ...read];
}

/** Held events with the ids acting on each as stored now (the only part of a stored event that grows). */
function withActors(
  db: SqliteConnection,
  subject: string,
  events: ReadonlyArray<{ event: SequencedEvent; hash: string }>,
): StoredEvent[] {
  const rows = db
    .statement(
      "SELECT target_id, actor_id FROM event_actors WHERE subject = ? AND target_id IN (SELECT value FROM json_each(?)) ORDER BY target_id, actor_id",
    )
    .all(subject, JSON.stringify(events.map(({ event }) => event.eventId))) as Array<{
    target_id: string;
    actor_id: string;
  }>;
  const acting = new Map<string, string[]>();
  for (const { target_id, actor_id } of rows) {
    const actors = acting.get(target_id);
    if (actors) actors.push(actor_id);
    else acting.set(target_id, [actor_id]);
  }
  return events.map(({ event, hash }) => ({ event, hash, actors: acting.get(event.eventId) ?? [] }));
}

/**
 * Decoded events by subject and sequence, as read from the database: a stored event never
 * changes (write-once rows) and a subject's sequences run 1..highWater without a gap, so the held
 * start of a range needs no read of its rows. A recall reads the same oldest events or the same
 * tail on every call. Bounded by the characters of the bodies held (a body past HELD_BODY_LIMIT
 * is never held); emptied when full.
 */
export class HeldEvents {
  private readonly subjects = new Map<string, Map<number, { event: SequencedEvent; hash: string }>>();
  private chars = 0;

  /** The events first, first + 1, … through last that are held, up to the first that is not. */
  prefix(subject: string, first: number, last: number): Array<{ event: SequencedEvent; hash: string }> {
    const bySequence = this.subjects.get(subject);
    const found: Array<{ event: SequencedEvent; hash: string }> = [];
    if (!bySequence) return found;
    for (let sequence = first; sequence <= last; sequence++) {
      const entry = bySequence.get(sequence);
      if (!entry) break;
      found.push(entry);
    }
    return found;
  }

  hold(subject: string, page: readonly StoredEvent[], rows: readonly EventRow[]): void {
    let bySequence = this.subjects.get(subject);
    for (const [index, { event, hash }] of page.entries()) {
      const chars = rows[index]?.body.length ?? Number.POSITIVE_INFINITY;
      if (chars > HELD_BODY_LIMIT || bySequence?.has(event.sequence)) continue;
      if (this.chars + chars > HELD_EVENT_CHARS) {
        this.subjects.clear();
        this.chars = 0;
        bySequence = undefined;
      }
      if (!bySequence) {
        bySequence = new Map();
        this.subjects.set(subject, bySequence);
      }
      bySequence.set(event.sequence, { event, hash });
      this.chars += chars;
    }
  }
}

/** About 40,000 typical events. */
const HELD_EVENT_CHARS = 16 * 1024 * 1024;
const HELD_BODY_LIMIT = 16 * 1024;

function storedEvent(row: ActedRow): StoredEvent {
  return {
    event: decodeRow(row),
    hash: row.hash,
    actors: row.actors === "[]" ? [] : (JSON.parse(row.actors) as string[]),
  };
}

function decodeRow(row: EventRow): SequencedEvent {
  return decodeStoredEvent(row.body, row.sequence, row.hash);
}

/**
 * Sets the policy or the selector on the clock only if it still equals `expected` (and, with a
 * policy, the stored policy still equals `expectedPolicy`), moving the epoch by one when
 * `moveEpoch`; null when either moved meanwhile (nothing changed).
 */
export function updateClockIf(
  db: SqliteConnection,
  subject: string,
  expected: Clock,
  moveEpoch: boolean,
  set: { policy?: StoredPolicy; selector?: SelectorVersion },
  expectedPolicy?: StoredPolicy,
): Clock | null {
  const clock = readClock(db, subject);
  if (clock.highWater !== expected.highWater || clock.inputEpoch !== expected.inputEpoch) return null;
  if (expectedPolicy !== undefined && canonicalJson(clock.policy) !== canonicalJson(expectedPolicy))
    return null;
  const next = { highWater: clock.highWater, inputEpoch: clock.inputEpoch + (moveEpoch ? 1 : 0) };
  writeClock(db, subject, clockAfter(clock, next), set.policy ?? clock.policy);
  if (set.selector !== undefined)
    db.statement("UPDATE clock SET selector = ? WHERE subject = ?").run(set.selector, subject);
  return next;
}
