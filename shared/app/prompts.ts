import { readFileSync } from "node:fs";
import { join } from "node:path";
import { sha256 } from "../domain/hashing.ts";
import type { Prompt } from "./model.ts";

export const DEFAULT_PROMPT_VERSION = "consolidate-v1";

/** Loads a versioned prompt file from `prompts/<version>.md`; its hash goes into every manifest. */
export function loadPrompt(root: string, version: string = DEFAULT_PROMPT_VERSION): Prompt {
  if (!/^[A-Za-z0-9._-]+$/.test(version))
    throw new Error(`prompt version "${version}" must be a file name such as ${DEFAULT_PROMPT_VERSION}`);
  let text: string;
  try {
    text = readFileSync(join(root, "prompts", `${version}.md`), "utf8");
  } catch (error) {
    throw new Error(`no prompt ${version} (prompts/${version}.md)`, { cause: error });
  }
  return { version, text, hash: sha256(text) };
}
