import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll } from "vitest";
import { SqliteStore } from "../../shared/adapters/embedded/sqlite-store.ts";
import { describePipelineScenarios } from "./pipeline-scenarios.ts";

const store = new SqliteStore(mkdtempSync(join(tmpdir(), "memgate-scenario-")));
afterAll(() => store.close());

describePipelineScenarios("embedded", () => ({
  events: store,
  alias: store,
  artifacts: store,
  settings: store,
}));
