// How memgate's code is bundled with esbuild: one set of options, one target per runtime kind.
//
// This part of the runtime settings is plain JavaScript because scripts/bundle.mjs runs under the
// user's plain Node (bin/memgate.js builds the command line before anything TypeScript can be loaded);
// shared/runtime/settings.ts re-exports it, and the CDK stack reads it from there.

/**
 * The Node.js each runtime kind runs on, as esbuild targets. The command line runs on whatever
 * Node the user has, at least package.json's `engines` (22); the Lambdas run on the Node.js 24
 * runtime the CDK stack deploys them with (cdk/lib/memgate-function.ts).
 */
export const BUNDLE_TARGETS = Object.freeze({ cli: "node22", lambda: "node24" });

/** Prompts (`prompts/*.md`, imported by shared/app/prompt-files.ts) are bundled as their text. */
export const TEXT_LOADERS = Object.freeze({ ".md": "text" });

/** Bundled CommonJS dependencies call require(); an ES module bundle gives them one. */
export const REQUIRE_BANNER =
  "import { createRequire as __memgateRequire } from 'node:module'; const require = __memgateRequire(import.meta.url);";

/**
 * Native, large or lazily needed packages the command line loads from node_modules at run time:
 * SQLite's native module, the tokenizer's rank table and the AWS SDK (only `--store aws` needs it).
 */
export const CLI_EXTERNAL = Object.freeze(["better-sqlite3", "js-tiktoken", "@aws-sdk/*", "@smithy/*"]);

/** What every memgate bundle shares: one ES module graph for Node with the prompts inside. */
const COMMON = Object.freeze({
  bundle: true,
  platform: "node",
  format: "esm",
  loader: TEXT_LOADERS,
  banner: { js: REQUIRE_BANNER },
  logLevel: "error",
});

/**
 * The command line: split into chunks so the AWS adapters load only with `--store aws`, not
 * minified (its stack traces stay readable with MEMGATE_DEBUG=1).
 */
export const CLI_BUNDLE = Object.freeze({
  ...COMMON,
  target: BUNDLE_TARGETS.cli,
  splitting: true,
  external: [...CLI_EXTERNAL],
});

/**
 * A Lambda: one self-contained, minified module with every dependency inside (the AWS SDK too, so
 * the versions tested are the versions deployed), without a source map: a map triples the bundle
 * and, loaded with --enable-source-maps, adds about a third to the import time of every cold
 * start. A tenant that wants readable stack traces turns them on (`sourceMaps` in cdk/tenants.json).
 */
export const LAMBDA_BUNDLE = Object.freeze({
  ...COMMON,
  target: BUNDLE_TARGETS.lambda,
  minify: true,
  sourcemap: false,
  mainFields: ["module", "main"],
  external: [],
});
