import type { S3Client } from "@aws-sdk/client-s3";
import type { ArtifactRecord, ArtifactRecords, ArtifactStatus } from "#ports/artifact-records.ts";
import type { ArtifactStore } from "#ports/artifacts.ts";
import { BlobArtifactFiles } from "../artifact-files.ts";
import { S3Blobs } from "./s3-blobs.ts";

/**
 * Artifacts on AWS: the files in S3 under write-once keys, the status records in the table beside
 * the alias (the DynamoDB store), so the switch transaction moves them with the alias.
 */
export class S3ArtifactStore extends BlobArtifactFiles implements ArtifactStore {
  constructor(
    s3: S3Client,
    bucket: string,
    private readonly records: ArtifactRecords,
  ) {
    super(new S3Blobs(s3, bucket));
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
