import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/**
 * The versioned prompt files (`prompts/<version>.md`) by version. Run from source, they are read
 * from the package; in a bundle (scripts/bundle.mjs) this module is replaced by one holding the
 * same texts inline, so a Lambda or a copied CLI bundle needs no file beside it and every prompt
 * hashes exactly as its file does.
 */
function readPromptFiles(): Record<string, string> {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, "prompts"))) {
    const parent = dirname(dir);
    if (parent === dir) return {};
    dir = parent;
  }
  const folder = join(dir, "prompts");
  return Object.fromEntries(
    readdirSync(folder)
      .filter((name) => name.endsWith(".md"))
      .map((name) => [name.slice(0, -3), readFileSync(join(folder, name), "utf8")]),
  );
}

export const PROMPT_FILES: Readonly<Record<string, string>> = readPromptFiles();
