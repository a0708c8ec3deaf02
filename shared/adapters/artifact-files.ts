import { GateReport, RefusedAttempts } from "#domain/gate/report.ts";
import { parseObjectPaced } from "#domain/paced-parse.ts";
import { type Manifest, Manifest as ManifestSchema } from "#domain/schemas.ts";
import { parseStrictJsonPaced } from "#domain/strict-json.ts";
import type { ArtifactContents, ArtifactFiles } from "#ports/artifacts.ts";
import type { WriteOnceBlobs } from "#ports/blobs.ts";
import { AlreadyWrittenError, NotFoundError } from "#ports/errors.ts";
import type { Pause } from "#ports/time.ts";

/** The folders of the write-once files, one per kind; segment answers have their own. */
type FileKind = "artifacts" | "manifests" | "reports" | "recall" | "attempts" | "segments";

/**
 * An artifact's files over either engine's write-once blobs (S3 keys, embedded files), laid out
 * the same way on both: `<kind>/<subject>/<artifact id>.json`, ids spelt as the engine's names
 * allow. The manifest is written first, then the body, the full report, the recall index and the
 * refused attempts, each durable before the next, so all are durable before the pipeline records
 * the artifact. Every file read is parsed with its schema where it has one.
 */
export class BlobArtifactFiles implements ArtifactFiles {
  constructor(private readonly blobs: WriteOnceBlobs) {}

  private key(kind: FileKind, subject: string, id: string): string {
    return `${kind}/${this.blobs.segment(subject)}/${this.blobs.segment(id)}.json`;
  }

  async writeArtifact(subject: string, artifactId: string, contents: ArtifactContents): Promise<void> {
    const write = (kind: FileKind, value: unknown) =>
      this.blobs.putIfAbsent(this.key(kind, subject, artifactId), JSON.stringify(value));
    await write("manifests", contents.manifest);
    await write("artifacts", contents.body);
    if (contents.report) await write("reports", contents.report);
    if (contents.recallIndex !== undefined) await write("recall", contents.recallIndex);
    if (contents.attempts && contents.attempts.length > 0) await write("attempts", contents.attempts);
  }

  async readAttempts(subject: string, artifactId: string): Promise<RefusedAttempts> {
    const text = await this.blobs.get(this.key("attempts", subject, artifactId));
    return text === undefined ? [] : RefusedAttempts.parse(JSON.parse(text));
  }

  readSegment(subject: string, key: string): Promise<string | undefined> {
    return this.blobs.get(this.key("segments", subject, key));
  }

  async writeSegment(subject: string, key: string, answer: string): Promise<void> {
    try {
      await this.blobs.putIfAbsent(this.key("segments", subject, key), answer);
    } catch (error) {
      if (!(error instanceof AlreadyWrittenError)) throw error;
    }
  }

  readRecallIndex(subject: string, artifactId: string): Promise<unknown> {
    return this.readJson("recall", subject, artifactId);
  }

  async readReport(subject: string, artifactId: string): Promise<GateReport> {
    return GateReport.parse(await this.readJson("reports", subject, artifactId));
  }

  readArtifact(subject: string, artifactId: string, pause?: Pause): Promise<unknown> {
    return this.readJson("artifacts", subject, artifactId, pause);
  }

  async readManifest(subject: string, artifactId: string, pause?: Pause): Promise<Manifest> {
    const raw = await this.readJson("manifests", subject, artifactId, pause);
    // A manifest lists every input of the artifact: with a pause, checked a step at a time.
    return pause === undefined ? ManifestSchema.parse(raw) : parseObjectPaced(ManifestSchema, raw, pause);
  }

  /**
   * A file's JSON; with `pause`, parsed a step at a time (a summary or manifest of megabytes on a
   * serving thread). Either way text that is not JSON throws JSON.parse's error.
   */
  private async readJson(
    kind: FileKind,
    subject: string,
    artifactId: string,
    pause?: Pause,
  ): Promise<unknown> {
    const text = await this.readText(kind, subject, artifactId);
    if (pause === undefined) return JSON.parse(text);
    const parsed = await parseStrictJsonPaced(text, pause);
    return parsed.ok ? parsed.value : JSON.parse(text);
  }

  private async readText(kind: FileKind, subject: string, artifactId: string): Promise<string> {
    const text = await this.blobs.get(this.key(kind, subject, artifactId));
    if (text === undefined) throw new NotFoundError(`no artifact ${artifactId}`);
    return text;
  }
}
