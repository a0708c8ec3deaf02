// The audit on both stores: it finds a planted stale-visible summary and a planted false fact
// (written through the store ports, since the pipeline cannot produce them), contains both (recall
// goes raw, a rebuild is requested), and finds nothing on healthy subjects.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { UpdateCommand } from "@aws-sdk/lib-dynamodb";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { MemoryQueue } from "#adapters/embedded/memory-queue.ts";
import { SqliteStore } from "#adapters/embedded/sqlite-store.ts";
import { appendEvents, revokeEvents } from "#app/append.ts";
import { audit } from "#app/audit.ts";
import type { Deps } from "#app/deps.ts";
import { generate } from "#app/generate.ts";
import { recall } from "#app/recall.ts";
import { run } from "#app/run.ts";
import { readInputs, takeSnapshot } from "#app/snapshot.ts";
import { compactReport, gateCandidate } from "#domain/gate/index.ts";
import { inputRefs, inputRoot } from "#domain/hashing.ts";
import type { Manifest } from "#domain/schemas.ts";
import { openAwsStores } from "#harness/aws-stores.ts";
import { depsOver } from "#harness/pipeline-builders.ts";
import type { AliasPort } from "#ports/alias.ts";
import type { ArtifactStore } from "#ports/artifacts.ts";
import type { EventLog } from "#ports/event-log.ts";
import type { SettingsPort } from "#ports/settings.ts";
import { SAMPLE } from "../support/builders.ts";

const { budget, constraint } = SAMPLE;
const note = { eventId: "n-3", kind: "fact", text: "Alex moved the review to 2026-12-04." } as const;

interface Stores {
  events: EventLog;
  alias: AliasPort;
  artifacts: ArtifactStore;
  settings: SettingsPort;
  /**
   * Makes the subject's clock say its epoch began at 0, written through the engine directly, as a
   * store did before its switch refused coverage below where the epoch began.
   */
  forgetEpochStart(subject: string): Promise<void>;
}

let subjects = 0;

/**
 * Publishes `body` as the subject's summary through the ports alone: the artifact, its manifest
 * (with `inputRoot` as given) and record, then the alias switch, as a faulty or forged writer would.
 */
async function plant(
  deps: Deps,
  subject: string,
  body: unknown,
  options: { inputRoot?: string; through?: number } = {},
) {
  const read = await deps.events.snapshot(subject);
  const snapshot = { ...read, highWater: options.through ?? read.highWater };
  const { context } = await readInputs(deps, subject, snapshot.highWater);
  const refs = inputRefs(context.selection.validInputs);
  const artifactId = `summary:${subject}:${String(snapshot.highWater).padStart(6, "0")}:planted`;
  const manifest: Manifest = {
    artifactId,
    subject,
    newCoversThrough: snapshot.highWater,
    inputEpoch: snapshot.inputEpoch,
    expectedAlias: snapshot.expectedAlias,
    inputIds: refs.map((r) => r.eventId),
    inputs: refs,
    inputRoot: options.inputRoot ?? inputRoot(refs),
    selectorVersion: context.selection.selectorVersion,
    promptVersion: "planted",
    modelSnapshot: "planted",
    policy: context.selection.policy,
  };
  await deps.artifacts.writeArtifact(subject, artifactId, { body, manifest });
  await deps.artifacts.recordArtifact({
    subject,
    artifactId,
    status: "CANDIDATE",
    stale: false,
    coversThrough: snapshot.highWater,
    inputEpoch: snapshot.inputEpoch,
    parentArtifactId: snapshot.expectedAlias?.parentArtifactId ?? null,
    inputRoot: manifest.inputRoot,
    gate: compactReport(gateCandidate(context, body)),
    createdAt: "2026-11-30T00:00:00Z",
  });
  await deps.alias.publishIfUnchanged({
    subject,
    artifactId,
    expectedAlias: snapshot.expectedAlias,
    inputEpoch: snapshot.inputEpoch,
    newCoversThrough: snapshot.highWater,
  });
  return artifactId;
}

/** The audit finds `planted` stale-visible (its detail matching `detail`), contains it, and recall answers raw. */
async function expectStaleContained(deps: Deps, subject: string, planted: string, detail: RegExp) {
  const report = await audit(deps, { subjects: [subject] });
  expect(report.staleVisible).toBe(1);
  expect(report.findings).toEqual([
    expect.objectContaining({
      subject,
      artifactId: planted,
      kind: "stale-visible",
      detail: expect.stringMatching(detail),
    }),
  ]);
  expect(report.contained).toEqual([planted]);
  const after = await recall(deps, subject);
  expect(after.mode).toBe("raw");
  return after;
}

function describeAudit(name: string, open: () => Stores) {
  describe(`${name}: the audit`, () => {
    const fresh = (deps: Deps) => {
      const subject = `audit-${name}-${process.pid}-${++subjects}`;
      return { subject, deps };
    };
    const depsFor = () => depsOver(open(), { queue: new MemoryQueue() });

    it("finds nothing on healthy subjects", async () => {
      const { subject, deps } = fresh(depsFor());
      await appendEvents(deps, subject, [budget, constraint]);
      expect((await run(deps, await takeSnapshot(deps, subject))).status).toBe("PUBLISHED");
      const report = await audit(deps, { subjects: [subject] });
      expect(report).toMatchObject({
        subjects: 1,
        served: 1,
        staleVisible: 0,
        falseFact: 0,
        findings: [],
        contained: [],
      });
      expect((await recall(deps, subject)).mode).toBe("summary");
    });

    it("finds a summary whose input root does not match the raw layer, and contains it", async () => {
      const { subject, deps } = fresh(depsFor());
      await appendEvents(deps, subject, [budget, constraint]);
      const honest = await run(deps, await takeSnapshot(deps, subject));
      if (honest.status !== "PUBLISHED") throw new Error(honest.status);
      const body = await deps.artifacts.readArtifact(subject, honest.artifactId);
      await appendEvents(deps, subject, [{ eventId: "n-1", kind: "note", text: "Likes tea." }]);
      const planted = await plant(deps, subject, body, { inputRoot: `sha256:${"0".repeat(64)}` });
      expect((await recall(deps, subject)).artifactId).toBe(planted);

      await expectStaleContained(deps, subject, planted, /input root/);
      expect((await deps.artifacts.getRecord(subject, planted))?.stale).toBe(true);
      expect((await deps.queue.receive(10)).map((m) => m.body.subject)).toContain(subject);
      // Contained: the next audit has nothing served to find.
      expect(await audit(deps, { subjects: [subject] })).toMatchObject({ served: 0, findings: [] });
    });

    it("finds a served summary citing an event a revocation after its coverage made invalid, and contains it", async () => {
      const stores = open();
      const { subject, deps } = fresh(depsOver(stores, { queue: new MemoryQueue() }));
      await appendEvents(deps, subject, [budget, constraint, note]);
      // The body a snapshot through 3 yields: it cites n-3.
      const built = await generate(deps, await takeSnapshot(deps, subject));
      if (built.status !== "CANDIDATE") throw new Error(built.status);
      const body = await deps.artifacts.readArtifact(subject, built.artifactId);
      expect(JSON.stringify(body)).toContain("n-3");
      await revokeEvents(deps, subject, ["n-3"], "wrong");
      // Published at the revocation's epoch covering 3, as the switch let through before it
      // refused coverage below where the epoch began.
      await stores.forgetEpochStart(subject);
      const planted = await plant(deps, subject, body, { through: 3 });
      expect(await recall(deps, subject)).toMatchObject({ mode: "summary", artifactId: planted });

      const after = await expectStaleContained(deps, subject, planted, /-n-3 \(revoked now\)/);
      expect(after.events.map((event) => event.eventId)).not.toContain("n-3");
    });

    it("finds a served claim its event does not support, and contains it", async () => {
      const { subject, deps } = fresh(depsFor());
      await appendEvents(deps, subject, [budget, constraint]);
      const lie = {
        claims: [
          {
            key: "budget",
            scope: "global",
            value: { quantity: "99999", unit: "USD" },
            polarity: "affirmed",
            status: "settled",
            derivedFrom: ["b-1"],
          },
          {
            key: "memory:c-1",
            scope: "global",
            value: { text: "Backups must be encrypted." },
            polarity: "affirmed",
            status: "settled",
            derivedFrom: ["c-1"],
          },
        ],
        pending: [],
        unresolvedConflicts: [],
        coldRefs: [],
        summary: "Budget and backups.",
      };
      const planted = await plant(deps, subject, lie);
      const report = await audit(deps, { subjects: [subject] });
      expect(report.falseFact).toBeGreaterThan(0);
      expect(
        report.findings
          .filter((f) => f.kind === "false-fact")
          .map((f) => f.detail)
          .join("\n"),
      ).toMatch(/budget/);
      expect(report.contained).toEqual([planted]);
      expect((await recall(deps, subject)).mode).toBe("raw");
    });

    it("samples deterministically", async () => {
      const deps = depsFor();
      const chosen = await audit(deps, { sample: 3, seed: 7 });
      const again = await audit(deps, { sample: 3, seed: 7 });
      expect(chosen.subjects).toBe(Math.min(3, (await deps.events.listSubjects()).length));
      expect(again.subjects).toBe(chosen.subjects);
    });
  });
}

const home = mkdtempSync(join(tmpdir(), "memgate-audit-"));
let sqlite: SqliteStore;
beforeAll(() => {
  sqlite = SqliteStore.open(home);
});
afterAll(() => sqlite?.close());
describeAudit("embedded", () => ({
  events: sqlite,
  alias: sqlite,
  artifacts: sqlite,
  settings: sqlite,
  forgetEpochStart: async (subject) => {
    const raw = new Database(join(home, SqliteStore.FILE));
    try {
      raw.prepare("UPDATE clock SET epoch_moved_at = 0 WHERE subject = ?").run(subject);
    } finally {
      raw.close();
    }
  },
}));

let aws: Awaited<ReturnType<typeof openAwsStores>>;
beforeAll(async () => {
  aws = await openAwsStores({
    dynamoEndpoint: inject("dynamoEndpoint"),
    motoEndpoint: inject("motoEndpoint"),
  });
});
describeAudit("aws", () => ({
  events: aws.store,
  alias: aws.store,
  artifacts: aws.artifacts,
  settings: aws.store,
  forgetEpochStart: async (subject) => {
    await aws.store.doc.send(
      new UpdateCommand({
        TableName: aws.store.tableName,
        Key: { pk: `S#${subject}`, sk: "CLOCK" },
        UpdateExpression: "SET epochMovedAt = :zero",
        ExpressionAttributeValues: { ":zero": 0 },
      }),
    );
  },
}));
