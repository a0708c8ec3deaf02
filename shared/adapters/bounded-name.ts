import { createHash } from "node:crypto";

/**
 * A file name or object-key segment for an id, within every store's limits whatever the id: the
 * escaped form when it is short, else a readable prefix and the SHA-256 of the whole id (a
 * 128-character CJK subject escapes to over 1,000 characters; file names stop at 255 bytes and S3
 * keys at 1,024). Unique because the hash covers the whole id; stable because nothing else enters.
 */
export function boundedName(id: string, escaped: string, max = 120): string {
  if (escaped.length <= max) return escaped;
  return `${escaped.slice(0, 48)}~${createHash("sha256").update(id).digest("hex")}`;
}
