import { readFile } from "node:fs/promises";
import { decodeStrictUtf8 } from "#domain/utf8.ts";
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

/**
 * Decodes UTF-8, refusing invalid bytes (never stored as U+FFFD): InputError naming the line and
 * byte offset of the first bad sequence.
 */
export function decodeUtf8(bytes: Uint8Array, where: string): string {
  const decoded = decodeStrictUtf8(bytes);
  if (decoded.ok) return decoded.text;
  throw new InputError(
    `${where}: line ${decoded.line} is not valid UTF-8 (byte offset ${decoded.offset}); save the file as UTF-8`,
  );
}

async function readStdin(): Promise<Uint8Array> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}
