import type { GateReport } from "#domain/gate/index.ts";

export type ArtifactStatus =
  | "CANDIDATE"
  | "REJECTED"
  | "SHADOW"
  | "PUBLISHED"
  | "SUPERSEDED"
  /** A candidate whose snapshot died (lost CAS, moved epoch): kept for audit, never live again. */
  | "ABANDONED";

/** The mutable record beside a write-once artifact: its status and what it was made from. */
export interface ArtifactRecord {
  subject: string;
  artifactId: string;
  /** The lifecycle status; STALE is not one of them but a mark beside it (`stale`). */
  status: ArtifactStatus;
  /** Marked when an input it used stopped being valid: never served, whatever the status says. */
  stale: boolean;
  coversThrough: number;
  inputEpoch: number;
  parentArtifactId: string | null;
  inputRoot: string;
  gate: GateReport;
  createdAt: string;
}

/**
 * The artifact records, kept beside the alias (same SQLite file, same DynamoDB table) so the
 * switch moves them in the transaction that moves the alias.
 */
export interface ArtifactRecords {
  /** Records a new artifact's status (CANDIDATE, REJECTED or SHADOW); AlreadyWrittenError if recorded. */
  recordArtifact(record: ArtifactRecord): Promise<void>;
  getRecord(subject: string, artifactId: string): Promise<ArtifactRecord | null>;
  listRecords(subject: string): Promise<ArtifactRecord[]>;
  /**
   * Moves the lifecycle status only from one of `from` and only while the record is not marked
   * stale; false otherwise.
   */
  transition(
    subject: string,
    artifactId: string,
    from: readonly ArtifactStatus[],
    to: ArtifactStatus,
  ): Promise<boolean>;
  /**
   * Marks a record STALE when its status is one of `from` and it is not marked yet; false
   * otherwise. The mark sits beside the status, so marking never contends with the switch moving
   * the status (a stale summary later superseded still reads STALE).
   */
  markStale(subject: string, artifactId: string, from: readonly ArtifactStatus[]): Promise<boolean>;
}

/** How listings show a record: STALE when marked, else its lifecycle status (CONTRACT §5). */
export function shownStatus(record: Pick<ArtifactRecord, "status" | "stale">): ArtifactStatus | "STALE" {
  return record.stale ? "STALE" : record.status;
}
