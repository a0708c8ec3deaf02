// Bundles each Lambda (lambdas/<name>/handler.ts) into one self-contained ES module,
// build/lambdas/<name>/index.mjs, exporting `handler`: every dependency inside (the AWS SDK too, so
// the versions tested are the versions deployed), prompts embedded, nothing read from disk and no
// native module. The CDK stack bundles the same entries with the same options
// (shared/runtime/bundling.mjs, through the runtime settings it imports).
import { readdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { LAMBDA_BUNDLE } from "../shared/runtime/bundling.mjs";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
export const LAMBDA_NAMES = readdirSync(join(ROOT, "lambdas"), { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .map((entry) => entry.name);

export async function buildLambdas(outdir = join(ROOT, "build", "lambdas")) {
  const { build } = await import("esbuild");
  const results = {};
  for (const name of LAMBDA_NAMES) {
    const outfile = join(outdir, name, "index.mjs");
    const result = await build({
      ...LAMBDA_BUNDLE,
      entryPoints: [join(ROOT, "lambdas", name, "handler.ts")],
      outfile,
      metafile: true,
    });
    results[name] = { outfile, inputs: Object.keys(result.metafile.inputs) };
  }
  return results;
}

if (process.argv[1] === fileURLToPath(import.meta.url))
  for (const [name, { outfile }] of Object.entries(await buildLambdas())) console.log(`${name}: ${outfile}`);
