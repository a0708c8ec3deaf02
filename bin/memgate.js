#!/usr/bin/env node
// The memgate command line: runs the bundle of shared/cli/main.ts, rebuilt first if any source changed.
import { pathToFileURL } from "node:url";
import { ensureBundle } from "../scripts/bundle.mjs";

const { main } = await import(pathToFileURL(await ensureBundle()).href);
process.exitCode = await main(process.argv.slice(2));
