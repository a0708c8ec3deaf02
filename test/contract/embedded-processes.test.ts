import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface, type Interface } from "node:readline";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SqliteStore } from "#adapters/embedded/sqlite-store.ts";
import { MemoryEvent } from "#domain/schemas.ts";
import { candidateRecord } from "#harness/candidate-record.ts";

const WORKERS = 8;
const ROUNDS = 100;
const home = mkdtempSync(join(tmpdir(), "memgate-race-"));
const WORKER = join(import.meta.dirname, "../support/publish-worker.ts");

interface Worker {
  child: ChildProcessWithoutNullStreams;
  lines: Interface;
  next(): Promise<string>;
}

function startWorker(): Worker {
  const child = spawn(process.execPath, ["--import", "tsx", WORKER, home], {
    stdio: ["pipe", "pipe", "pipe"],
  });
  const lines = createInterface({ input: child.stdout });
  const pending: string[] = [];
  const waiting: Array<(line: string) => void> = [];
  lines.on("line", (line) => {
    const resolve = waiting.shift();
    if (resolve) resolve(line);
    else pending.push(line);
  });
  return {
    child,
    lines,
    next: () =>
      new Promise((resolve) =>
        pending.length > 0 ? resolve(pending.shift() as string) : waiting.push(resolve),
      ),
  };
}

let workers: Worker[] = [];
beforeAll(async () => {
  workers = Array.from({ length: WORKERS }, startWorker);
  await Promise.all(workers.map((w) => w.next()));
}, 120_000);
afterAll(() => {
  for (const w of workers) w.child.kill();
});

describe("embedded store under eight racing OS processes", () => {
  it(`lets exactly one publisher win each of ${ROUNDS} rounds, and coverage never goes back`, async () => {
    const store = new SqliteStore(home);
    const subject = "user-race";
    // One event per round: each round's summary covers one more, never past the log.
    await store.append(
      subject,
      Array.from({ length: ROUNDS }, (_, i) =>
        MemoryEvent.parse({ eventId: `e-${i}`, kind: "fact", text: "a" }),
      ),
    );
    let expected: { parentArtifactId: string; sourceEpoch: number; coversThrough: number } | null = null;
    let coverage = 0;
    for (let round = 0; round < ROUNDS; round++) {
      const ids = workers.map((_, w) => `s-${round}-${w}`);
      for (const id of ids)
        await store.recordArtifact(
          candidateRecord(subject, id, round + 1, 0, expected?.parentArtifactId ?? null),
        );
      for (const [w, worker] of workers.entries()) {
        const request = {
          round,
          subject,
          artifactId: ids[w],
          expectedAlias: expected,
          inputEpoch: 0,
          newCoversThrough: round + 1,
        };
        worker.child.stdin.write(`${JSON.stringify(request)}\n`);
      }
      const answers = (await Promise.all(workers.map((w) => w.next()))).map(
        (line) => JSON.parse(line) as { won: boolean; reason?: string },
      );
      expect(answers.filter((a) => a.won)).toHaveLength(1);
      expect(answers.filter((a) => !a.won).every((a) => a.reason === "alias-moved")).toBe(true);
      const alias = await store.readAlias(subject);
      expect(alias?.coversThrough).toBeGreaterThanOrEqual(coverage);
      coverage = alias?.coversThrough ?? 0;
      expected = alias && {
        parentArtifactId: alias.artifactId,
        sourceEpoch: alias.sourceEpoch,
        coversThrough: alias.coversThrough,
      };
    }
    const published = (await store.listRecords(subject)).filter((r) => r.status === "PUBLISHED");
    expect(published).toHaveLength(1);
    store.close();
  }, 300_000);
});
