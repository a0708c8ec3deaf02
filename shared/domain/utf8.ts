/**
 * Strict UTF-8 (RFC 3629): text a user or an agent sends is decoded with invalid bytes refused,
 * never stored as U+FFFD. The refusal names the line and the byte offset of the first bad sequence,
 * so files, HTTP bodies and standard input are refused the same way.
 */
export type Utf8Decoding = { ok: true; text: string } | { ok: false; offset: number; line: number };

const strictUtf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

export function decodeStrictUtf8(bytes: Uint8Array): Utf8Decoding {
  try {
    return { ok: true, text: strictUtf8.decode(bytes) };
  } catch {
    const offset = firstInvalidUtf8(bytes);
    let line = 1;
    for (let i = 0; i < offset; i++) if (bytes[i] === 0x0a) line++;
    return { ok: false, offset, line };
  }
}

/** Bytes a step of `decodeStrictUtf8Paced` decodes. */
const BYTES_PER_STEP = 1024 * 1024;

/**
 * `decodeStrictUtf8` letting other work run between its steps (`pause`): megabytes are decoded a
 * step at a time (a sequence split between steps is joined), with the same text or the same
 * refusal.
 */
export async function decodeStrictUtf8Paced(
  bytes: Uint8Array,
  pause: () => Promise<void>,
): Promise<Utf8Decoding> {
  if (bytes.length <= BYTES_PER_STEP) return decodeStrictUtf8(bytes);
  const decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
  const parts: string[] = [];
  try {
    for (let start = 0; start < bytes.length; start += BYTES_PER_STEP) {
      if (start > 0) await pause();
      const end = Math.min(bytes.length, start + BYTES_PER_STEP);
      parts.push(decoder.decode(bytes.subarray(start, end), { stream: end < bytes.length }));
    }
  } catch {
    return decodeStrictUtf8(bytes);
  }
  return { ok: true, text: parts.join("") };
}

/** The offset of the first byte that does not start a well-formed UTF-8 sequence (RFC 3629). */
export function firstInvalidUtf8(bytes: Uint8Array): number {
  let i = 0;
  while (i < bytes.length) {
    const b = bytes[i] as number;
    const need =
      b < 0x80
        ? 0
        : b >= 0xc2 && b <= 0xdf
          ? 1
          : b >= 0xe0 && b <= 0xef
            ? 2
            : b >= 0xf0 && b <= 0xf4
              ? 3
              : -1;
    if (need < 0) return i;
    const second = bytes[i + 1] ?? 0;
    if (need >= 2) {
      const low = b === 0xe0 ? 0xa0 : b === 0xf0 ? 0x90 : 0x80;
      const high = b === 0xed ? 0x9f : b === 0xf4 ? 0x8f : 0xbf;
      if (second < low || second > high) return i;
    }
    for (let k = 1; k <= need; k++) {
      const next = bytes[i + k];
      if (next === undefined || (next & 0xc0) !== 0x80) return i;
    }
    i += need + 1;
  }
  return bytes.length;
}
