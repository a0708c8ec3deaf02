import {
  checkEventLog,
  SELECTOR_VERSION,
  type SelectorVersion,
  selectInputs,
  selectionDifferences,
} from "#domain/selector.ts";
import { invalidate } from "./append.ts";
import type { StoreDeps } from "./deps.ts";

/**
 * Moving existing subjects to the current selector (v3). A subject created before it has a clock
 * that follows an older selector's epoch rule (v1, or v2), and its summary may have been built by
 * that selector. For each such subject: compare its selector and the current one on its log at the
 * clock's high-water mark; when the valid set, the conflicts or the earlier readings differ, move
 * the epoch once (recall stops serving the old summary at that instant, and a rebuild is
 * requested, which uses the current selector); either way mark the clock as following it. The
 * marking is conditioned on the clock read, so a concurrent append makes us look again. v2 and
 * v3 read a log alike until a `latest` rule names one of its keys, so a store moves from v2 with
 * no epoch moving.
 */

export interface SelectorMigration {
  subject: string;
  /** The selector the subject's clock followed before. */
  from: SelectorVersion;
  /** Whether the current selector reads the log differently, so the epoch moved. */
  epochMoved: boolean;
  /** What differs, for the operator: ids and conflicts. */
  differences: string[];
}

const ATTEMPTS = 5;

export async function adoptCurrentSelector(
  deps: Pick<StoreDeps, "events" | "artifacts" | "queue" | "progress">,
  subject: string,
): Promise<SelectorMigration | null> {
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    const from = await deps.events.selectorVersion(subject);
    if (from === SELECTOR_VERSION) return null;
    const snapshot = await deps.events.snapshot(subject);
    const [events, policy] = await Promise.all([
      deps.events.eventsThrough(subject, snapshot.highWater),
      deps.events.trustPolicy(subject),
    ]);
    const checked = checkEventLog(events);
    const differences = selectionDifferences(
      selectInputs(checked, snapshot.highWater, policy, from),
      selectInputs(checked, snapshot.highWater, policy, SELECTOR_VERSION),
    );
    const epochMoved = differences.length > 0;
    if (await deps.events.adoptSelector(subject, SELECTOR_VERSION, snapshot, epochMoved)) {
      if (epochMoved) {
        deps.progress(
          `${subject}: selector ${SELECTOR_VERSION} reads the log differently (${differences.join("; ")}); the epoch moved`,
        );
        await invalidate(deps, subject);
      }
      return { subject, from, epochMoved, differences };
    }
  }
  throw new Error(`${subject} kept changing while its selector was being checked; run memgate migrate again`);
}

/** Every subject not yet on the current selector, one after the other. */
export async function migrateSelectors(
  deps: Pick<StoreDeps, "events" | "artifacts" | "queue" | "progress">,
): Promise<SelectorMigration[]> {
  const done: SelectorMigration[] = [];
  for (const subject of await deps.events.subjectsNotOn(SELECTOR_VERSION)) {
    const migration = await adoptCurrentSelector(deps, subject);
    if (migration) done.push(migration);
  }
  return done;
}
