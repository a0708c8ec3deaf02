#!/usr/bin/env node
// The memgate command line. The project is TypeScript run through tsx, so the CLI, the tests and
// the local server execute the very same sources.
import { register } from "tsx/esm/api";

register();
const { main } = await import("../shared/cli/main.ts");
process.exitCode = await main(process.argv.slice(2));
