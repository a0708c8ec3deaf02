/**
 * Write-once blobs: what S3 with `IfNoneMatch: '*'` and the embedded write-once files both are. A
 * key, once written, is never overwritten (nor deleted: the bucket policy denies it, the embedded
 * store never does). Keys are '/'-separated; each engine spells an id as one segment its own way.
 */
export interface WriteOnceBlobs {
  /**
   * An id as one key segment this engine accepts: unique per id and stable, escaped and bounded
   * to the engine's limits on names (S3 keys, file names).
   */
  segment(id: string): string;
  /**
   * Stores `text` under `key`, durable before it resolves; AlreadyWrittenError when the key
   * exists (what is there stays, unchanged).
   */
  putIfAbsent(key: string, text: string): Promise<void>;
  /** The text under `key`; undefined when nothing was ever written there. */
  get(key: string): Promise<string | undefined>;
}
