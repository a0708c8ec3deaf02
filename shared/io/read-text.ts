import { readFile } from "node:fs/promises";
import { InputError } from "#ports/errors.ts";

/**
 * Reads a file a user named (or standard input for "-") as UTF-8 text, without a leading byte
 * order mark (editors on some systems add one; JSON parsers refuse it). Unreadable: InputError.
 */
export async function readUserText(path: string, what: string): Promise<string> {
  let bytes: Uint8Array;
  try {
    bytes = path === "-" ? await readStdin() : await readFile(path);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new InputError(`cannot read ${what} ${path}${code ? ` (${code})` : ""}`, { cause: error });
  }
  const text = decodeUtf8(bytes, `${what} ${path === "-" ? "(standard input)" : path}`);
  return text.startsWith("\uFEFF") ? text.slice(1) : text;
}

const strictUtf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/**
 * Decodes UTF-8, refusing invalid bytes (never stored as U+FFFD): InputError naming the line and
 * byte offset of the first bad sequence.
 */
export function decodeUtf8(bytes: Uint8Array, where: string): string {
  try {
    return strictUtf8.decode(bytes);
  } catch (error) {
    const offset = firstInvalidUtf8(bytes);
    let line = 1;
    for (let i = 0; i < offset; i++) if (bytes[i] === 0x0a) line++;
    throw new InputError(
      `${where}: line ${line} is not valid UTF-8 (byte offset ${offset}); save the file as UTF-8`,
      { cause: error },
    );
  }
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

async function readStdin(): Promise<Uint8Array> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}
