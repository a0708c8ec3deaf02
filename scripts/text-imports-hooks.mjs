import { readFile } from "node:fs/promises";

/** A `.md` module is its text, as the default export. */
export async function load(url, context, nextLoad) {
  if (!url.endsWith(".md")) return nextLoad(url, context);
  const text = await readFile(new URL(url), "utf8");
  return { format: "module", source: `export default ${JSON.stringify(text)};`, shortCircuit: true };
}
