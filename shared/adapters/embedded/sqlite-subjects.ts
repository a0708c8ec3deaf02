import { RebuildAttempt } from "#domain/rebuild.ts";
import type { SelectorVersion } from "#domain/validity.ts";
import type { SubjectPage } from "#ports/event-log.ts";
import type { SqliteConnection } from "./sqlite-database.ts";

/** Which subjects: all of them, those on another selector, those the sweep must look at. */

export function listSubjects(db: SqliteConnection): string[] {
  return subjectsOf(db.statement("SELECT subject FROM clock ORDER BY subject").all());
}

/** The clock table's subjects after `after`, one more than asked to tell whether more follow. */
export function subjectsPage(db: SqliteConnection, after: string | null, limit: number): SubjectPage {
  const subjects = subjectsOf(
    db
      .statement("SELECT subject FROM clock WHERE ? IS NULL OR subject > ? ORDER BY subject LIMIT ?")
      .all(after, after, limit + 1),
  );
  return { subjects: subjects.slice(0, limit), more: subjects.length > limit };
}

export function subjectsNotOn(db: SqliteConnection, version: SelectorVersion): string[] {
  return subjectsOf(
    db.statement("SELECT subject FROM clock WHERE selector IS NOT ? ORDER BY subject").all(version),
  );
}

/** The rule of `rebuildReason`, in SQL over the committed clock, alias and record rows: exact. */
export function subjectsToCheck(db: SqliteConnection, rebuildAfterEvents: number): string[] {
  return subjectsOf(
    db
      .statement(
        `SELECT clock.subject FROM clock LEFT JOIN alias ON alias.subject = clock.subject
         WHERE (alias.subject IS NULL AND clock.high_water > 0)
            OR alias.source_epoch != clock.input_epoch
            OR clock.high_water - alias.covers_through >= ?
            OR EXISTS (SELECT 1 FROM artifacts WHERE artifacts.subject = alias.subject
                         AND artifacts.artifact_id = alias.artifact_id AND artifacts.stale = 1)
         ORDER BY clock.subject`,
      )
      .all(rebuildAfterEvents),
  );
}

function subjectsOf(rows: unknown[]): string[] {
  return (rows as Array<{ subject: string }>).map((row) => row.subject);
}

/** The last rebuild attempt kept on the clock row; null when none (or no clock). */
export function readRebuildAttempt(db: SqliteConnection, subject: string): RebuildAttempt | null {
  const row = db.statement("SELECT rebuild_attempt FROM clock WHERE subject = ?").get(subject) as
    | { rebuild_attempt: string | null }
    | undefined;
  return row?.rebuild_attempt ? RebuildAttempt.parse(JSON.parse(row.rebuild_attempt)) : null;
}

/** Keeps the attempt on the clock row, highWater and epoch untouched. */
export function recordRebuildAttempt(db: SqliteConnection, subject: string, attempt: RebuildAttempt): void {
  db.statement("UPDATE clock SET rebuild_attempt = ? WHERE subject = ?").run(
    JSON.stringify(RebuildAttempt.parse(attempt)),
    subject,
  );
}
