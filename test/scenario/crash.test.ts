import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeAll, describe, expect, inject, it } from "vitest";
import { SqliteStore } from "#adapters/embedded/sqlite-store.ts";
import { openAwsStores } from "#harness/aws-stores.ts";
import { memgate } from "#harness/cli.ts";
import { factsBatch } from "#harness/pipeline-builders.ts";
import { startServe } from "#harness/serve-process.ts";

/**
 * Faults in real processes: the worker is a memgate process that a failpoint kills with SIGKILL at
 * the named step (as a Lambda dies), on the embedded store and on the local AWS engines.
 */
interface Target {
  name: string;
  args: () => string[];
  env: () => Record<string, string>;
}

let awsEnv: Record<string, string> = {};
beforeAll(async () => {
  const aws = await openAwsStores({
    dynamoEndpoint: inject("dynamoEndpoint"),
    motoEndpoint: inject("motoEndpoint"),
  });
  awsEnv = {
    AWS_ENDPOINT_URL_DYNAMODB: inject("dynamoEndpoint"),
    AWS_ENDPOINT_URL_S3: inject("motoEndpoint"),
    AWS_ENDPOINT_URL_SQS: inject("motoEndpoint"),
    AWS_ACCESS_KEY_ID: "test",
    AWS_SECRET_ACCESS_KEY: "test",
    AWS_REGION: "us-east-1",
    MEMGATE_TABLE: aws.store.tableName,
    MEMGATE_BUCKET: aws.bucket,
    MEMGATE_QUEUE_URL: aws.queueUrl,
  };
});

const home = mkdtempSync(join(tmpdir(), "memgate-crash-"));
const targets: Target[] = [
  { name: "embedded", args: () => ["--home", home], env: () => ({}) },
  { name: "aws", args: () => ["--store", "aws"], env: () => awsEnv },
];
const eventsFile = join(home, "events.jsonl");
writeFileSync(
  eventsFile,
  `${factsBatch(1, 8)
    .map((e) => JSON.stringify(e))
    .join("\n")}\n`,
);

let subjects = 0;
describe.each(targets)("crashes and timeouts, $name", (target) => {
  const cli = (args: string[], failpoints?: string) =>
    memgate([...args, ...target.args()], {
      env: { ...target.env(), ...(failpoints ? { MEMGATE_FAILPOINTS: failpoints } : {}) },
    });
  const prepare = async () => {
    const subject = `crash-${target.name}-${++subjects}`;
    expect((await cli(["append", subject, eventsFile])).code).toBe(0);
    const snapshot = await cli(["snapshot", subject]);
    const file = join(home, `${subject}.snapshot.json`);
    writeFileSync(file, snapshot.stdout);
    return { subject, file };
  };
  const artifactsOf = async (subject: string) =>
    JSON.parse((await cli(["artifacts", subject, "--json"])).stdout) as Array<{
      artifactId: string;
      status: string;
    }>;
  const recallOf = async (subject: string) =>
    JSON.parse((await cli(["recall", subject, "--json"])).stdout) as {
      mode: string;
      artifactId: string | null;
    };

  it("a crash after the artifact write leaves nothing retrievable, and the next run publishes", async () => {
    const { subject, file } = await prepare();
    const crashed = await cli(["run", file], "after-artifact-write=crash");
    expect(crashed.signal).toBe("SIGKILL");
    expect(await artifactsOf(subject)).toEqual([]);
    expect((await recallOf(subject)).mode).toBe("raw");
    expect((await cli(["consolidate", subject])).code).toBe(0);
    expect((await recallOf(subject)).mode).toBe("summary");
  });

  it("a crash before the alias switch leaves a CANDIDATE that is never served until published", async () => {
    const { subject, file } = await prepare();
    expect((await cli(["run", file], "before-publish=crash")).signal).toBe("SIGKILL");
    const [candidate] = await artifactsOf(subject);
    expect(candidate?.status).toBe("CANDIDATE");
    expect((await recallOf(subject)).mode).toBe("raw");
    expect((await cli(["publish", candidate?.artifactId as string])).code).toBe(0);
    expect((await recallOf(subject)).artifactId).toBe(candidate?.artifactId);
  });

  it("a crash right after the switch leaves the published summary whole", async () => {
    const { subject, file } = await prepare();
    expect((await cli(["run", file], "after-publish=crash")).signal).toBe("SIGKILL");
    const [published] = await artifactsOf(subject);
    expect(published?.status).toBe("PUBLISHED");
    expect((await recallOf(subject)).artifactId).toBe(published?.artifactId);
  });

  it("a generation timeout exits 5 and records nothing", async () => {
    const { subject, file } = await prepare();
    const timedOut = await cli(["run", file, "--timeout-ms", "300"], "generate=timeout");
    expect(timedOut.code).toBe(5);
    expect(timedOut.stderr).toContain("did not answer within 300 ms");
    expect(await artifactsOf(subject)).toEqual([]);
  });

  it("a crash right after an append commits (before invalidation and the rebuild request): recall is raw, a later sweep finishes and rebuilds", async () => {
    const { subject } = await prepare();
    expect((await cli(["consolidate", subject])).code).toBe(0);
    const [first] = await artifactsOf(subject);
    const crashed = await cli(["revoke", subject, "m-1"], "after-append=crash");
    expect(crashed.signal).toBe("SIGKILL");
    // The revocation committed: the epoch moved with it, so nothing stale is served...
    expect((await recallOf(subject)).mode).toBe("raw");
    // ...but the bookkeeping the dead process owed is not done yet.
    expect((await artifactsOf(subject)).find((a) => a.artifactId === first?.artifactId)?.status).toBe(
      "PUBLISHED",
    );
    const swept = await cli(["sweep", "--run", "--json"]);
    expect(swept.code).toBe(0);
    const { requested } = JSON.parse(swept.stdout) as { requested: Array<{ subject: string }> };
    expect(requested.map((r) => r.subject)).toContain(subject);
    expect((await artifactsOf(subject)).find((a) => a.artifactId === first?.artifactId)?.status).toBe(
      "STALE",
    );
    const served = await recallOf(subject);
    expect(served.mode).toBe("summary");
    expect(served.artifactId).not.toBe(first?.artifactId);
    const again = JSON.parse((await cli(["sweep", "--json"])).stdout) as {
      requested: Array<{ subject: string }>;
    };
    expect(again.requested.map((r) => r.subject)).not.toContain(subject);
  });

  it("a lost compare-and-set exits 4 and changes nothing", async () => {
    const { subject, file } = await prepare();
    expect((await cli(["run", file])).code).toBe(0);
    const again = await cli(["run", file]);
    expect(again.code).toBe(4);
    expect((await artifactsOf(subject)).filter((a) => a.status === "PUBLISHED")).toHaveLength(1);
  });
});

describe("kill -9 of memgate serve while concurrent appends share group commits", () => {
  it("keeps every acknowledged batch whole and once, and every other batch whole or absent", async () => {
    const serveHome = mkdtempSync(join(tmpdir(), "memgate-crash-serve-"));
    const server = await startServe(["--home", serveHome]);
    const subjects = 4;
    const batchOf = (n: number) =>
      [0, 1, 2].map((k) => ({ eventId: `b${n}-e${k}`, kind: "note", text: `batch ${n}, note ${k}` }));
    const acknowledged = new Set<number>();
    const sent: number[] = [];
    const appendBatch = async (n: number) => {
      sent.push(n);
      const answer = await fetch(`${server.url}/v1/subjects/crash-serve-${n % subjects}/events`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ events: batchOf(n) }),
      });
      if (answer.ok) acknowledged.add(n);
    };
    // 16 clients append without pause; the server is killed once 100 batches are acknowledged.
    let next = 0;
    const clients = Array.from({ length: 16 }, async () => {
      while (server.child.exitCode === null && server.child.signalCode === null)
        await appendBatch(next++).catch(() => undefined);
    });
    while (acknowledged.size < 100) await new Promise((resolve) => setTimeout(resolve, 5));
    expect(await server.stop("SIGKILL")).toBeNull();
    await Promise.all(clients);

    const store = SqliteStore.open(serveHome);
    try {
      const storedIn = new Map<string, number>();
      for (let s = 0; s < subjects; s++) {
        const subject = `crash-serve-${s}`;
        const { highWater } = await store.snapshot(subject);
        const events = await store.eventsThrough(subject, highWater);
        // Gapless: one sequence per stored event, 1..highWater.
        expect(events.map((e) => e.sequence)).toEqual(Array.from({ length: highWater }, (_, i) => i + 1));
        for (const event of events) storedIn.set(event.eventId, (storedIn.get(event.eventId) ?? 0) + 1);
      }
      expect([...storedIn.values()].every((count) => count === 1)).toBe(true);
      for (const n of sent) {
        const stored = batchOf(n).filter((e) => storedIn.has(e.eventId)).length;
        if (acknowledged.has(n)) expect(stored, `acknowledged batch ${n}`).toBe(3);
        else expect([0, 3], `unacknowledged batch ${n}`).toContain(stored);
      }
    } finally {
      store.close();
    }
  });
});
