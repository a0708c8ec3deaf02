import type { GateReport, RefusedAttempts } from "#domain/gate/index.ts";
import type { Manifest } from "#domain/schemas.ts";
import type { ArtifactRecords } from "./artifact-records.ts";
import type { Pause } from "./time.ts";

/** What one generation writes, each under a new write-once key. */
export interface ArtifactContents {
  body: unknown;
  manifest: Manifest;
  /** The full gate report (the record keeps a compact copy). */
  report?: GateReport;
  recallIndex?: unknown;
  /** Refused attempts before the last one (gate-guided repair): each answer with its report. */
  attempts?: RefusedAttempts;
}

/** An artifact's write-once files (body, manifest, report, recall index, attempts) and segment answers. */
export interface ArtifactFiles {
  /** Writes an artifact's files under new keys; AlreadyWrittenError if any exists. */
  writeArtifact(subject: string, artifactId: string, contents: ArtifactContents): Promise<void>;
  /** The refused attempts written with the artifact; [] when it passed on the first. */
  readAttempts(subject: string, artifactId: string): Promise<RefusedAttempts>;
  /** A segment answer kept under its key (segment input root, rendered-prompt hash, model); undefined when none. */
  readSegment(subject: string, key: string): Promise<string | undefined>;
  /** Keeps a segment answer; the first write of a key wins, a later one is ignored. */
  writeSegment(subject: string, key: string, answer: string): Promise<void>;
  /** The recall index written with the artifact (NotFoundError when it was written without one). */
  readRecallIndex(subject: string, artifactId: string): Promise<unknown>;
  /** The full gate report written with the artifact. */
  readReport(subject: string, artifactId: string): Promise<GateReport>;
  /** The artifact's body as stored; `pause` lets a serving thread's other work run while a large one is parsed. */
  readArtifact(subject: string, artifactId: string, pause?: Pause): Promise<unknown>;
  /** The artifact's manifest; `pause` as for readArtifact (a manifest lists every input). */
  readManifest(subject: string, artifactId: string, pause?: Pause): Promise<Manifest>;
}

/**
 * Write-once artifact files and their status records: what the use cases see. The files are
 * durable before the record naming them commits (the pipeline writes them first).
 */
export interface ArtifactStore extends ArtifactFiles, ArtifactRecords {}
