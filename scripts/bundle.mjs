// Builds the memgate command line into one ESM file (dist/memgate.mjs) and keeps it current.
//
// Why a bundle: the CLI would otherwise load the whole of mathjs (about a second) and transpile
// TypeScript on every start; esbuild tree-shakes the unit code down and starts in a fraction of
// that. `ensureBundle` rebuilds whenever a source file is newer than the bundle, so the bundle can
// never run stale code; the build writes a temporary file and renames it, so racing processes are safe.
import { readdirSync, renameSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
export const BUNDLE = join(ROOT, "dist", "memgate.mjs");
const SOURCES = ["shared", "package.json", "package-lock.json", "scripts/bundle.mjs", "prompts"];
/** Native or large optional packages are loaded from node_modules at run time, never bundled. */
const EXTERNAL = ["better-sqlite3", "js-tiktoken", "@aws-sdk/*", "@smithy/*"];

function newestMtime(path) {
  let stat;
  try {
    stat = statSync(path);
  } catch {
    return 0;
  }
  if (!stat.isDirectory()) return stat.mtimeMs;
  let newest = stat.mtimeMs;
  for (const entry of readdirSync(path)) newest = Math.max(newest, newestMtime(join(path, entry)));
  return newest;
}

export async function buildBundle() {
  const { build } = await import("esbuild");
  const temporary = `${BUNDLE}.${process.pid}.tmp`;
  await build({
    entryPoints: [join(ROOT, "shared", "cli", "main.ts")],
    outfile: temporary,
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    external: EXTERNAL,
    sourcemap: false,
    logLevel: "error",
    // Bundled CommonJS dependencies call require(); give ESM output one.
    banner: {
      js: "import { createRequire as __memgateRequire } from 'node:module'; const require = __memgateRequire(import.meta.url);",
    },
  });
  renameSync(temporary, BUNDLE);
  return BUNDLE;
}

export async function ensureBundle() {
  let built = 0;
  try {
    built = statSync(BUNDLE).mtimeMs;
  } catch {}
  const newest = Math.max(...SOURCES.map((source) => newestMtime(join(ROOT, source))));
  if (built < newest) await buildBundle();
  return BUNDLE;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  await buildBundle();
  console.log(`built ${BUNDLE}`);
}
