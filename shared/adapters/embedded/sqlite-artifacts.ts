import { GateReport } from "#domain/gate/index.ts";
import type { ArtifactRecord, ArtifactStatus } from "#ports/artifact-records.ts";
import { AlreadyWrittenError } from "#ports/errors.ts";
import type { SqliteConnection } from "./sqlite-database.ts";

/**
 * The artifact records in SQLite (one row each, never deleted: a trigger refuses it); each
 * function runs inside its caller's transaction.
 */

interface ArtifactRow {
  subject: string;
  artifact_id: string;
  status: ArtifactStatus;
  covers_through: number;
  input_epoch: number;
  parent_artifact_id: string | null;
  input_root: string;
  stale: number;
  gate: string;
  created_at: string;
}

export function recordArtifact(db: SqliteConnection, record: ArtifactRecord): void {
  try {
    db.statement(
      "INSERT INTO artifacts (subject, artifact_id, status, covers_through, input_epoch, parent_artifact_id, input_root, gate, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
    ).run(
      record.subject,
      record.artifactId,
      record.status,
      record.coversThrough,
      record.inputEpoch,
      record.parentArtifactId,
      record.inputRoot,
      JSON.stringify(record.gate),
      record.createdAt,
    );
  } catch (error) {
    if ((error as { code?: string }).code === "SQLITE_CONSTRAINT_PRIMARYKEY")
      throw new AlreadyWrittenError(`artifact record ${record.artifactId}`, { cause: error });
    throw error;
  }
}

export function getRecord(db: SqliteConnection, subject: string, artifactId: string): ArtifactRecord | null {
  const row = db
    .statement("SELECT * FROM artifacts WHERE subject = ? AND artifact_id = ?")
    .get(subject, artifactId) as ArtifactRow | undefined;
  return row ? toRecord(row) : null;
}

export function listRecords(db: SqliteConnection, subject: string): ArtifactRecord[] {
  const rows = db
    .statement("SELECT * FROM artifacts WHERE subject = ? ORDER BY created_at, artifact_id")
    .all(subject) as ArtifactRow[];
  return rows.map(toRecord);
}

/** One conditional update of a record that is in one of `from` and not marked stale; false when none. */
export function updateRecordWhere(
  db: SqliteConnection,
  subject: string,
  artifactId: string,
  from: readonly ArtifactStatus[],
  assignment: "status = ?" | "stale = ?",
  value: string | number,
): boolean {
  if (from.length === 0) return false;
  const changed = db
    .statement(
      `UPDATE artifacts SET ${assignment} WHERE subject = ? AND artifact_id = ? AND stale = 0 AND status IN (${from.map(() => "?").join(", ")})`,
    )
    .run(value, subject, artifactId, ...from);
  return changed.changes === 1;
}

function toRecord(row: ArtifactRow): ArtifactRecord {
  return {
    subject: row.subject,
    artifactId: row.artifact_id,
    status: row.status,
    stale: row.stale === 1,
    coversThrough: row.covers_through,
    inputEpoch: row.input_epoch,
    parentArtifactId: row.parent_artifact_id,
    inputRoot: row.input_root,
    gate: GateReport.parse(JSON.parse(row.gate)),
    createdAt: row.created_at,
  };
}
