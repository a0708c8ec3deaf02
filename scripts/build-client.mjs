// Builds the published client (`memgate/client`): shared/client/client.ts as JavaScript with its
// type declarations, into build/client/. Node refuses to strip types from files inside
// node_modules, so the package exports this build, not the TypeScript source.
//
// index.js is the client (its dependencies stay imports of the packages memgate depends on);
// types/ holds the declarations of the client and of the modules its types come from, with the
// package's `#folder/…` imports rewritten to relative paths, so they resolve from node_modules.
import { spawnSync } from "node:child_process";
import { readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, relative, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { BUNDLE_TARGETS } from "../shared/runtime/bundling.mjs";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
const OUT = join(ROOT, "build", "client");
const TYPES = join(OUT, "types");

function declarationFiles(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory()
      ? declarationFiles(join(dir, entry.name))
      : entry.name.endsWith(".d.ts")
        ? [join(dir, entry.name)]
        : [],
  );
}

/** `#app/recall.ts` → `../app/recall.js` (from the declaring file); `./x.ts` → `./x.js`. */
function relink(file) {
  const text = readFileSync(file, "utf8").replace(
    /(from\s+|import\()(["'])(#([a-z]+)\/|\.{1,2}\/)([^"']+)\.ts\2/g,
    (_match, lead, quote, prefix, folder, rest) => {
      if (!folder) return `${lead}${quote}${prefix}${rest}.js${quote}`;
      let target = relative(dirname(file), join(TYPES, folder, rest))
        .split(sep)
        .join("/");
      if (!target.startsWith(".")) target = `./${target}`;
      return `${lead}${quote}${target}.js${quote}`;
    },
  );
  writeFileSync(file, text);
}

export async function buildClient() {
  rmSync(OUT, { recursive: true, force: true });
  const { build } = await import("esbuild");
  await build({
    entryPoints: [join(ROOT, "shared", "client", "client.ts")],
    outfile: join(OUT, "index.js"),
    bundle: true,
    packages: "external",
    platform: "node",
    format: "esm",
    // The client runs on the user's Node, as the command line does.
    target: BUNDLE_TARGETS.cli,
    logLevel: "error",
  });
  const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");
  const emitted = spawnSync(process.execPath, [tsc, "-p", join(ROOT, "tsconfig.client.json")], {
    cwd: ROOT,
    encoding: "utf8",
  });
  if (emitted.status !== 0)
    throw new Error(`memgate: the client's declarations did not build:\n${emitted.stdout}${emitted.stderr}`);
  for (const file of declarationFiles(TYPES)) relink(file);
  writeFileSync(join(OUT, "index.d.ts"), 'export * from "./types/client/client.js";\n');
  return join(OUT, "index.js");
}

if (process.argv[1] === fileURLToPath(import.meta.url)) console.log(`built ${await buildClient()}`);
