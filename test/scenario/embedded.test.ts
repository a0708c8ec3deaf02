import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll } from "vitest";
import { SqliteStore } from "#adapters/embedded/sqlite-store.ts";
import { describePipelineScenarios } from "./pipeline-scenarios.ts";

const home = mkdtempSync(join(tmpdir(), "memgate-scenario-"));
const store = new SqliteStore(home);
const raw = new Database(join(home, "memgate.sqlite"));
afterAll(() => {
  raw.close();
  store.close();
});

describePipelineScenarios("embedded", () => ({
  events: store,
  alias: store,
  artifacts: store,
  settings: store,
  forgetSelector: async (subject, mark) => {
    raw.prepare("UPDATE clock SET selector = ? WHERE subject = ?").run(mark ?? null, subject);
  },
}));
