import type { AliasState, PublishRequest } from "#ports/alias.ts";
import { epochAfterCoverage, PublishRefusedError } from "#ports/errors.ts";
import type { SqliteConnection } from "./sqlite-database.ts";
import { readClock } from "./sqlite-events.ts";
import { readSettings } from "./sqlite-settings.ts";

/** The alias row and the switch that moves it, in SQLite; each runs inside its caller's transaction. */

export function readAlias(db: SqliteConnection, subject: string): AliasState | null {
  const row = db
    .statement("SELECT artifact_id, source_epoch, covers_through FROM alias WHERE subject = ?")
    .get(subject) as { artifact_id: string; source_epoch: number; covers_through: number } | undefined;
  return row
    ? { artifactId: row.artifact_id, sourceEpoch: row.source_epoch, coversThrough: row.covers_through }
    : null;
}

/**
 * The switch, inside one write transaction: each condition of the compare-and-set is checked in
 * the order DynamoDB's transaction items are (clock, alias, artifact), then the artifact becomes
 * PUBLISHED, the parent SUPERSEDED and the alias names the artifact.
 */
export function publishIfUnchanged(db: SqliteConnection, request: PublishRequest): AliasState {
  const { subject, artifactId, expectedAlias } = request;
  const clock = readClock(db, subject);
  if (clock.inputEpoch !== request.inputEpoch)
    throw new PublishRefusedError(
      "epoch-moved",
      `the clock is at epoch ${clock.inputEpoch}, the artifact was built at ${request.inputEpoch}`,
    );
  if (clock.highWater < request.newCoversThrough)
    throw new PublishRefusedError(
      "beyond-log",
      `the artifact covers through ${request.newCoversThrough}, but the log ends at ${clock.highWater}`,
    );
  if (clock.epochMovedAt > request.newCoversThrough)
    throw new PublishRefusedError("epoch-moved", epochAfterCoverage(clock.epochMovedAt, request));
  const alias = readAlias(db, subject);
  if (request.whileLive && readSettings(db).publishMode !== "live")
    throw new PublishRefusedError(
      "publish-mode-changed",
      "the tenant switched to shadow mode after the publish read its settings",
    );
  const unchanged =
    expectedAlias === null
      ? alias === null
      : alias !== null &&
        alias.artifactId === expectedAlias.parentArtifactId &&
        alias.sourceEpoch === expectedAlias.sourceEpoch &&
        alias.coversThrough === expectedAlias.coversThrough;
  if (!unchanged)
    throw new PublishRefusedError(
      "alias-moved",
      `the alias is ${alias ? `${alias.artifactId}@${alias.sourceEpoch}/${alias.coversThrough}` : "unset"}, the snapshot expected ${expectedAlias ? `${expectedAlias.parentArtifactId}@${expectedAlias.sourceEpoch}/${expectedAlias.coversThrough}` : "none"}`,
    );
  if (alias !== null && request.newCoversThrough < alias.coversThrough)
    throw new PublishRefusedError(
      "coverage-decrease",
      `coverage would go from ${alias.coversThrough} back to ${request.newCoversThrough}`,
    );
  const moved = db
    .statement(
      "UPDATE artifacts SET status = 'PUBLISHED' WHERE subject = ? AND artifact_id = ? AND status IN ('CANDIDATE', 'SHADOW') AND stale = 0",
    )
    .run(subject, artifactId);
  if (moved.changes !== 1)
    throw new PublishRefusedError(
      "artifact-not-publishable",
      `${artifactId} is not a CANDIDATE or SHADOW artifact of ${subject}`,
    );
  if (alias !== null)
    db.statement(
      "UPDATE artifacts SET status = 'SUPERSEDED' WHERE subject = ? AND artifact_id = ? AND status = 'PUBLISHED'",
    ).run(subject, alias.artifactId);
  const next = { artifactId, sourceEpoch: request.inputEpoch, coversThrough: request.newCoversThrough };
  db.statement(
    "INSERT INTO alias (subject, artifact_id, source_epoch, covers_through) VALUES (?, ?, ?, ?) ON CONFLICT (subject) DO UPDATE SET artifact_id = excluded.artifact_id, source_epoch = excluded.source_epoch, covers_through = excluded.covers_through",
  ).run(subject, next.artifactId, next.sourceEpoch, next.coversThrough);
  return next;
}
