import { readFile } from "node:fs/promises";
import { InputError } from "./event-file.ts";

/**
 * Reads a file a user named (or standard input for "-") as UTF-8 text, without a leading byte
 * order mark (editors on some systems add one; JSON parsers refuse it). Unreadable: InputError.
 */
export async function readUserText(path: string, what: string): Promise<string> {
  let text: string;
  try {
    text = path === "-" ? await readStdin() : await readFile(path, "utf8");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new InputError(`cannot read ${what} ${path}${code ? ` (${code})` : ""}`, { cause: error });
  }
  return text.startsWith("\uFEFF") ? text.slice(1) : text;
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}
