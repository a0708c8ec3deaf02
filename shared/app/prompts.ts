import { sha256 } from "#domain/hashing.ts";
import type { Prompt } from "#ports/model.ts";
import { PROMPT_FILES } from "./prompt-files.ts";

/**
 * The prompt consolidations use unless one is chosen (`--prompt`, MEMGATE_PROMPT): consolidate-v8,
 * measured against v7 on LoCoMo and on the twelve recorded logs (CONTRACT §4 "Time in the prompt").
 */
export const DEFAULT_PROMPT_VERSION = "consolidate-v8";

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

/**
 * The segment and summary templates a segmented generation uses with each consolidate template:
 * choosing the consolidate version (`--prompt`, MEMGATE_PROMPT) chooses the whole family, so the
 * recorded answers of one family keep replaying while another is tried.
 */
const SEGMENTED_TEMPLATES: Readonly<Record<string, { segment: string; summary: string }>> = {
  "consolidate-v1": { segment: "segment-v1", summary: "summary-v1" },
  "consolidate-v2": { segment: "segment-v1", summary: "summary-v1" },
  "consolidate-v3": { segment: "segment-v2", summary: "summary-v2" },
  "consolidate-v4": { segment: "segment-v2", summary: "summary-v2" },
  "consolidate-v5": { segment: "segment-v2", summary: "summary-v2" },
  "consolidate-v6": { segment: "segment-v2", summary: "summary-v2" },
  "consolidate-v7": { segment: "segment-v2", summary: "summary-v2" },
  "consolidate-v8": { segment: "segment-v2", summary: "summary-v2" },
};

export function segmentedTemplates(consolidateVersion: string): { segment: string; summary: string } {
  const templates = SEGMENTED_TEMPLATES[consolidateVersion];
  if (templates === undefined)
    throw new Error(
      `prompt ${consolidateVersion} has no segment and summary templates; known: ${Object.keys(SEGMENTED_TEMPLATES).join(", ")}`,
    );
  return templates;
}
