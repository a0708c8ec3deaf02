// Lets Node import prompt files (`prompts/*.md`) as text outside the bundles and vitest, as
// esbuild's text loader does inside them: `node --import tsx --import ./scripts/text-imports.mjs`
// (npm run bench and the scripts use it).
import { register } from "node:module";

register("./text-imports-hooks.mjs", import.meta.url);
