import { sha256 } from "#domain/hashing.ts";
import type { Prompt } from "#ports/model.ts";
import { PROMPT_FILES } from "./prompt-files.ts";

export const DEFAULT_PROMPT_VERSION = "consolidate-v2";

/** A versioned prompt (`prompts/<version>.md`, embedded in bundles); its hash goes into every manifest. */
export function loadPrompt(version: string = DEFAULT_PROMPT_VERSION): Prompt {
  if (!/^[A-Za-z0-9._-]+$/.test(version))
    throw new Error(`prompt version "${version}" must be a file name such as ${DEFAULT_PROMPT_VERSION}`);
  const text = PROMPT_FILES[version];
  if (text === undefined)
    throw new Error(
      `no prompt ${version}; known: ${Object.keys(PROMPT_FILES).sort().join(", ") || "none"} (prompts/<version>.md)`,
    );
  return { version, text, hash: sha256(text) };
}
