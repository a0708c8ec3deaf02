import { deepFreeze } from "#domain/frozen.ts";
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
    .statement(`SELECT ${RECORD_COLUMNS} FROM artifacts WHERE subject = ? AND artifact_id = ?`)
    .get(subject, artifactId) as Omit<ArtifactRow, "gate"> | undefined;
  return row ? toRecord(db, row, () => gateText(db, subject, artifactId)) : null;
}

/** Every column but the gate report, which a record never changes: it is parsed once (`gateOf`). */
const RECORD_COLUMNS =
  "subject, artifact_id, status, covers_through, input_epoch, parent_artifact_id, input_root, stale, created_at";

function gateText(db: SqliteConnection, subject: string, artifactId: string): string {
  return db
    .statement("SELECT gate FROM artifacts WHERE subject = ? AND artifact_id = ?")
    .pluck()
    .get(subject, artifactId) as string;
}

export function listRecords(db: SqliteConnection, subject: string): ArtifactRecord[] {
  const rows = db
    .statement("SELECT * FROM artifacts WHERE subject = ? ORDER BY created_at, artifact_id")
    .all(subject) as ArtifactRow[];
  return rows.map((row) => toRecord(db, row, () => row.gate));
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

/**
 * A record from its row. Only its status and stale mark ever change, so its gate report (read by
 * `gate` when not parsed yet) is parsed once and shared, frozen: every recall reads the served
 * summary's record, and the report is the bulk of it.
 */
function toRecord(db: SqliteConnection, row: Omit<ArtifactRow, "gate">, gate: () => string): ArtifactRecord {
  return {
    subject: row.subject,
    artifactId: row.artifact_id,
    status: row.status,
    stale: row.stale === 1,
    coversThrough: row.covers_through,
    inputEpoch: row.input_epoch,
    parentArtifactId: row.parent_artifact_id,
    inputRoot: row.input_root,
    gate: gateOf(db, row.subject, row.artifact_id, gate),
    createdAt: row.created_at,
  };
}

function gateOf(db: SqliteConnection, subject: string, artifactId: string, text: () => string): GateReport {
  let parsed = parsedGates.get(db);
  if (parsed === undefined) {
    parsed = new Map();
    parsedGates.set(db, parsed);
  }
  const key = `${subject}\u0000${artifactId}`;
  let report = parsed.get(key);
  if (report === undefined) {
    report = deepFreeze(GateReport.parse(JSON.parse(text())));
    if (parsed.size >= PARSED_GATES_LIMIT) parsed.clear();
    parsed.set(key, report);
  }
  return report;
}
/** Parsed gate reports by connection (a file's records), then by subject and artifact id. */
const parsedGates = new WeakMap<SqliteConnection, Map<string, GateReport>>();
const PARSED_GATES_LIMIT = 1024;
