import { GetObjectCommand, PutObjectCommand, type S3Client } from "@aws-sdk/client-s3";
import type { WriteOnceBlobs } from "#ports/blobs.ts";
import { AlreadyWrittenError } from "#ports/errors.ts";
import { boundedName } from "../bounded-name.ts";

/**
 * Write-once objects in the tenant's bucket: every put carries `IfNoneMatch: '*'`, so S3 itself
 * refuses a second write of a key (never overwrites), and the bucket policy denies deletes.
 */
export class S3Blobs implements WriteOnceBlobs {
  constructor(
    private readonly s3: S3Client,
    private readonly bucket: string,
  ) {}

  /** URI-escaped, bounded so a whole key stays under S3's 1,024 bytes. */
  segment(id: string): string {
    return boundedName(id, encodeURIComponent(id), 300);
  }

  async putIfAbsent(key: string, text: string): Promise<void> {
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

  async get(key: string): Promise<string | undefined> {
    try {
      const { Body } = await this.s3.send(new GetObjectCommand({ Bucket: this.bucket, Key: key }));
      return (await Body?.transformToString("utf-8")) ?? "null";
    } catch (error) {
      if ((error as { name?: string }).name === "NoSuchKey") return undefined;
      throw error;
    }
  }
}
