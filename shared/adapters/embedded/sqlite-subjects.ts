import type { SelectorVersion } from "#domain/validity.ts";
import type { SqliteConnection } from "./sqlite-database.ts";

/** Which subjects: all of them, those on another selector, those the sweep must look at. */

export function listSubjects(db: SqliteConnection): string[] {
  return subjectsOf(db.statement("SELECT subject FROM clock ORDER BY subject").all());
}

export function subjectsNotOn(db: SqliteConnection, version: SelectorVersion): string[] {
  return subjectsOf(
    db.statement("SELECT subject FROM clock WHERE selector IS NOT ? ORDER BY subject").all(version),
  );
}

/** The rule of `rebuildReason`, in SQL over the committed clock and alias rows: exact. */
export function subjectsToCheck(db: SqliteConnection, rebuildAfterEvents: number): string[] {
  return subjectsOf(
    db
      .statement(
        `SELECT clock.subject FROM clock LEFT JOIN alias ON alias.subject = clock.subject
         WHERE (alias.subject IS NULL AND clock.high_water > 0)
            OR alias.source_epoch != clock.input_epoch
            OR clock.high_water - alias.covers_through >= ?
         ORDER BY clock.subject`,
      )
      .all(rebuildAfterEvents),
  );
}

function subjectsOf(rows: unknown[]): string[] {
  return (rows as Array<{ subject: string }>).map((row) => row.subject);
}
