#!/usr/bin/env node
// The memgate command line: runs the bundle of shared/cli/main.ts, rebuilt first if any source changed.
import { pathToFileURL } from "node:url";
import { ensureBundle } from "../scripts/bundle.mjs";

// The AWS SDK warns on every run under Node 20 that its releases from 2027 need Node 22; the CLI
// keeps stderr to one line per problem, so that one notice is dropped (the README says it).
const emitWarning = process.emitWarning.bind(process);
process.emitWarning = (warning, ...rest) => {
  const text = warning instanceof Error ? `${warning.name}: ${warning.message}` : String(warning);
  if (text.includes("NodeVersionSupportWarning")) return;
  emitWarning(warning, ...rest);
};

const { main } = await import(pathToFileURL(await ensureBundle()).href);
process.exitCode = await main(process.argv.slice(2));
