// Builds the memgate command line with esbuild and keeps the build current.
//
// Why a bundle: unbundled, the CLI would load the whole of mathjs (about a second) and transpile
// TypeScript on every start; esbuild tree-shakes it. Code splitting keeps the AWS adapters (and
// the SDK they import) in chunks loaded only by `--store aws`. The esbuild options are the runtime
// settings' (shared/runtime/bundling.mjs), shared with the Lambdas' bundles and the CDK stack.
//
// Each build lives in dist/b<newest source mtime>/: `ensureBundle` uses the build matching the
// sources or makes it, so a stale build never runs. A build is written to a temporary folder and
// renamed into place, so racing processes never see half of one; builds over an hour old are pruned.
import { readdirSync, renameSync, rmSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { CLI_BUNDLE } from "../shared/runtime/bundling.mjs";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
const DIST = join(ROOT, "dist");
const SOURCES = ["shared", "prompts", "package.json", "package-lock.json", "scripts/bundle.mjs"];

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

function currentBuildDir() {
  return join(DIST, `b${Math.floor(Math.max(...SOURCES.map((source) => newestMtime(join(ROOT, source)))))}`);
}

export async function buildBundle(target = currentBuildDir()) {
  const { build } = await import("esbuild");
  const temporary = `${target}.tmp-${process.pid}`;
  // The options every CLI build shares (shared/runtime/bundling.mjs): split, SDK and SQLite outside.
  await build({
    ...CLI_BUNDLE,
    entryPoints: {
      memgate: join(ROOT, "shared", "cli", "main.ts"),
      // `memgate serve` runs consolidations on a worker thread started from this file.
      "consolidation-thread": join(ROOT, "shared", "runtime", "consolidation-thread-entry.ts"),
    },
    outdir: temporary,
    outExtension: { ".js": ".mjs" },
  });
  try {
    renameSync(temporary, target);
  } catch {
    rmSync(temporary, { recursive: true, force: true }); // another process finished the same build first
  }
  // Older builds go once nothing started from them can still be loading their chunks.
  for (const entry of readdirSync(DIST)) {
    const path = join(DIST, entry);
    if (path !== target && Date.now() - statSync(path).mtimeMs > 3_600_000)
      rmSync(path, { recursive: true, force: true });
  }
  return join(target, "memgate.mjs");
}

export async function ensureBundle() {
  const target = currentBuildDir();
  try {
    statSync(join(target, "memgate.mjs"));
    return join(target, "memgate.mjs");
  } catch {
    return buildBundle(target);
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) console.log(`built ${await buildBundle()}`);
