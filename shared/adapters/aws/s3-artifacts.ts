import { GetObjectCommand, PutObjectCommand, type S3Client } from "@aws-sdk/client-s3";
import { GateReport, RefusedAttempts } from "#domain/gate.ts";
import type { Manifest } from "#domain/schemas.ts";
import { Manifest as ManifestSchema } from "#domain/schemas.ts";
import { AlreadyWrittenError, NotFoundError } from "#ports/errors.ts";
import type { ArtifactFiles, ArtifactRecord, ArtifactStatus, ArtifactStore } from "#ports/store.ts";
import { boundedName } from "../bounded-name.ts";
import type { DynamoStore } from "./dynamo-store.ts";

/**
 * Artifacts on AWS: bodies and manifests in S3 under new keys written with `IfNoneMatch: '*'` (a
 * second write of a key is refused by S3 itself, never overwrites), status records in the table
 * beside the alias so the switch transaction can move them.
 */
export class S3ArtifactStore implements ArtifactStore {
  constructor(
    private readonly s3: S3Client,
    private readonly bucket: string,
    private readonly records: DynamoStore,
  ) {}

  private key(
    kind: "artifacts" | "manifests" | "reports" | "recall" | "attempts" | "segments",
    subject: string,
    artifactId: string,
  ): string {
    const segment = (id: string) => boundedName(id, encodeURIComponent(id), 300);
    return `${kind}/${segment(subject)}/${segment(artifactId)}.json`;
  }

  private putOnce(key: string, body: unknown): Promise<void> {
    return this.putTextOnce(key, JSON.stringify(body));
  }

  private async putTextOnce(key: string, text: string): Promise<void> {
    try {
      await this.s3.send(
        new PutObjectCommand({
          Bucket: this.bucket,
          Key: key,
          Body: text,
          ContentType: "application/json",
          IfNoneMatch: "*",
        }),
      );
    } catch (error) {
      const status = (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
      // 412: the key exists; 409: a concurrent conditional write to the same key is in flight.
      if (status === 412 || status === 409)
        throw new AlreadyWrittenError(`s3://${this.bucket}/${key}`, { cause: error });
      throw error;
    }
  }

  private async getJson(key: string, artifactId: string): Promise<unknown> {
    const text = await this.getText(key);
    if (text === undefined) throw new NotFoundError(`no artifact ${artifactId}`);
    return JSON.parse(text);
  }

  /** The object's text; undefined when there is no such key. */
  private async getText(key: string): Promise<string | undefined> {
    try {
      const { Body } = await this.s3.send(new GetObjectCommand({ Bucket: this.bucket, Key: key }));
      return (await Body?.transformToString("utf-8")) ?? "null";
    } catch (error) {
      if ((error as { name?: string }).name === "NoSuchKey") return undefined;
      throw error;
    }
  }

  async writeArtifact(subject: string, artifactId: string, files: ArtifactFiles): Promise<void> {
    await this.putOnce(this.key("manifests", subject, artifactId), files.manifest);
    await this.putOnce(this.key("artifacts", subject, artifactId), files.body);
    if (files.report) await this.putOnce(this.key("reports", subject, artifactId), files.report);
    if (files.recallIndex !== undefined)
      await this.putOnce(this.key("recall", subject, artifactId), files.recallIndex);
    if (files.attempts && files.attempts.length > 0)
      await this.putOnce(this.key("attempts", subject, artifactId), files.attempts);
  }

  async readAttempts(subject: string, artifactId: string): Promise<RefusedAttempts> {
    const text = await this.getText(this.key("attempts", subject, artifactId));
    return text === undefined ? [] : RefusedAttempts.parse(JSON.parse(text));
  }

  readSegment(subject: string, key: string): Promise<string | undefined> {
    return this.getText(this.key("segments", subject, key));
  }

  async writeSegment(subject: string, key: string, answer: string): Promise<void> {
    try {
      await this.putTextOnce(this.key("segments", subject, key), answer);
    } catch (error) {
      if (!(error instanceof AlreadyWrittenError)) throw error;
    }
  }

  readRecallIndex(subject: string, artifactId: string): Promise<unknown> {
    return this.getJson(this.key("recall", subject, artifactId), artifactId);
  }

  async readReport(subject: string, artifactId: string): Promise<GateReport> {
    return GateReport.parse(await this.getJson(this.key("reports", subject, artifactId), artifactId));
  }

  readArtifact(subject: string, artifactId: string): Promise<unknown> {
    return this.getJson(this.key("artifacts", subject, artifactId), artifactId);
  }

  async readManifest(subject: string, artifactId: string): Promise<Manifest> {
    return ManifestSchema.parse(await this.getJson(this.key("manifests", subject, artifactId), artifactId));
  }

  recordArtifact(record: ArtifactRecord): Promise<void> {
    return this.records.recordArtifact(record);
  }

  getRecord(subject: string, artifactId: string): Promise<ArtifactRecord | null> {
    return this.records.getRecord(subject, artifactId);
  }

  listRecords(subject: string): Promise<ArtifactRecord[]> {
    return this.records.listRecords(subject);
  }

  transition(
    subject: string,
    artifactId: string,
    from: readonly ArtifactStatus[],
    to: ArtifactStatus,
  ): Promise<boolean> {
    return this.records.transition(subject, artifactId, from, to);
  }

  markStale(subject: string, artifactId: string, from: readonly ArtifactStatus[]): Promise<boolean> {
    return this.records.markStale(subject, artifactId, from);
  }
}
