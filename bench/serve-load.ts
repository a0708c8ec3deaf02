// `memgate serve` under load on loopback, beside its floors measured in the same run: a bare
// node:http server parsing the same JSON bodies, and SQLite (WAL, synchronous=FULL) on the same
// disk committing one insert per transaction and 32 per transaction. memgate runs three phases of
// LOAD_SECONDS each on 32 connections (appends of distinct events over 16 subjects; budgeted
// recalls; half and half), then a fresh server consolidates a 10,000-event subject while /healthz
// is probed. Every acknowledged event is then looked up in the store: stored exactly once.
// SERVE_BASELINE=<another checkout>/bin/memgate.js runs the memgate phases on that build too
// (before/after in one run); SERVE_NODE_ARGS passes node flags to the server (--cpu-prof ...).
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import autocannon from "autocannon";
import Database from "better-sqlite3";
import { SqliteStore } from "#adapters/embedded/sqlite-store.ts";
import { MemoryEvent } from "#domain/schemas.ts";
import { BIN } from "#harness/cli.ts";
import { realisticEvent } from "#harness/event-mix.ts";
import { startServe } from "#harness/serve-process.ts";
import { record } from "./results.ts";
import { cpuMs, type Latencies, latencies, mainThreadCpuMs, ms } from "./support/serve-measures.ts";

const CONNECTIONS = 32;
const SECONDS = Number(process.env.LOAD_SECONDS ?? 10);
const SUBJECTS = 16;
const BIG_SUBJECT_EVENTS = 10_000;
const TOKEN = "load-bench-token";
const HEADERS = { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" };
const BASELINE = process.env.SERVE_BASELINE;
/** The baseline as the results name it: its checkout's commit when it is one, else its path. */
const BASELINE_NAME =
  BASELINE &&
  (spawnSync("git", ["-C", dirname(dirname(BASELINE)), "rev-parse", "--short", "HEAD"], {
    encoding: "utf8",
  }).stdout?.trim() ||
    BASELINE);
const NODE_ARGS = process.env.SERVE_NODE_ARGS?.split(" ").filter(Boolean) ?? [];

type Kind = "append" | "recall";

interface LoadFigures {
  perSecond: number;
  /** The server process's CPU time (user + system, all its threads) per request: what a shared machine's load does not change. */
  cpuMsPerRequest: number;
  /** The main thread's alone: the one thread every request passes through. */
  servingCpuMsPerRequest: number;
  kinds: Partial<Record<Kind, Latencies>>;
}

/**
 * CONNECTIONS connections for `seconds`, each cycling through `kinds` (an append posts one new
 * event; a recall asks for 2,000 tokens); latency per kind from send to answer. Acknowledged
 * appends' ids go to `acknowledged`.
 */
async function load(
  url: string,
  pid: number | undefined,
  kinds: Kind[],
  seconds: number,
  acknowledged: Set<string>,
) {
  const cpuBefore = cpuMs(pid);
  const servingCpuBefore = mainThreadCpuMs(pid);
  let next = 0;
  const samples: Record<Kind, number[]> = { append: [], recall: [] };
  const failed: Record<Kind, number> = { append: 0, recall: 0 };
  // autocannon hands each connection's context object to setupRequest and onResponse.
  type Context = { sentAt?: number; eventId?: string };
  const started = (context: object) => {
    (context as Context).sentAt = performance.now();
  };
  const answered = (kind: Kind, status: number, context: object) => {
    const { sentAt, eventId } = context as Context;
    if (sentAt !== undefined) samples[kind].push(performance.now() - sentAt);
    if (status !== 200) failed[kind]++;
    else if (kind === "append" && eventId !== undefined) acknowledged.add(eventId);
  };
  const result = await autocannon({
    url,
    connections: CONNECTIONS,
    duration: seconds,
    requests: kinds.map((kind) =>
      kind === "append"
        ? {
            method: "POST" as const,
            headers: HEADERS,
            setupRequest: (request, context) => {
              const n = next++;
              started(context);
              (context as Context).eventId = `load-${n}`;
              return {
                ...request,
                path: `/v1/subjects/load-${n % SUBJECTS}/events`,
                body: JSON.stringify({
                  events: [
                    { eventId: `load-${n}`, kind: "note", text: `load note ${n}: the agent noted item ${n}` },
                  ],
                }),
              };
            },
            onResponse: (status, _body, context) => answered("append", status, context),
          }
        : {
            method: "GET" as const,
            headers: HEADERS,
            setupRequest: (request, context) => {
              started(context);
              return { ...request, path: `/v1/subjects/load-${next++ % SUBJECTS}/recall?budget=2000` };
            },
            onResponse: (status, _body, context) => answered("recall", status, context),
          },
    ),
  });
  const figures: LoadFigures = {
    perSecond: result.requests.total / seconds,
    cpuMsPerRequest: (cpuMs(pid) - cpuBefore) / Math.max(1, result.requests.total),
    servingCpuMsPerRequest: (mainThreadCpuMs(pid) - servingCpuBefore) / Math.max(1, result.requests.total),
    kinds: {},
  };
  for (const kind of new Set(kinds)) figures.kinds[kind] = latencies(samples[kind], seconds, failed[kind]);
  return { figures, errors: result.errors + result.timeouts };
}

/** The bare node:http floor, in its own process as memgate is. */
async function bareHttp(): Promise<LoadFigures> {
  const child = spawn(process.execPath, [join(import.meta.dirname, "support", "bare-http-server.mjs")], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  const url = await new Promise<string>((resolve) => {
    let out = "";
    child.stdout.on("data", (chunk) => {
      out += String(chunk);
      const match = /listening on (\S+)/.exec(out);
      if (match?.[1]) resolve(match[1]);
    });
  });
  const { figures } = await load(url, child.pid, ["append", "recall"], SECONDS, new Set());
  child.kill("SIGTERM");
  return figures;
}

/** Inserts per second into SQLite (WAL, synchronous=FULL) on the disk the servers use, `perCommit` per transaction. */
function sqliteInserts(perCommit: number, seconds: number): number {
  const db = new Database(join(mkdtempSync(join(tmpdir(), "memgate-sqlite-floor-")), "floor.sqlite"));
  db.pragma("journal_mode = WAL");
  db.pragma("synchronous = FULL");
  db.exec("CREATE TABLE events (subject TEXT, event_id TEXT, body TEXT, PRIMARY KEY (subject, event_id))");
  const insert = db.prepare("INSERT INTO events VALUES (?, ?, ?)");
  const commit = db.transaction((first: number) => {
    for (let i = first; i < first + perCommit; i++)
      insert.run(`load-${i % SUBJECTS}`, `load-${i}`, `{"kind":"note","text":"load note ${i}"}`);
  });
  let inserted = 0;
  const until = performance.now() + seconds * 1000;
  while (performance.now() < until) {
    commit(inserted);
    inserted += perCommit;
  }
  db.close();
  return inserted / seconds;
}

interface ServeFigures {
  appends: LoadFigures;
  recalls: LoadFigures;
  mixed: LoadFigures;
  healthz: Latencies & { consolidationSeconds: number; outcome: string };
  acknowledged: number;
  lost: number;
  duplicated: number;
  errors: number;
}

/** The three load phases on one fresh server, then the store checked for every acknowledged event. */
async function serveUnderLoad(bin: string): Promise<Omit<ServeFigures, "healthz">> {
  const home = mkdtempSync(join(tmpdir(), "memgate-load-"));
  const server = await startServe(["--home", home, "--token", TOKEN], {}, { bin, nodeArgs: NODE_ARGS });
  // Every subject exists before the run: a recall of a subject with no events is a 404 by contract.
  for (let s = 0; s < SUBJECTS; s++) {
    const seeded = await fetch(`${server.url}/v1/subjects/load-${s}/events`, {
      method: "POST",
      headers: HEADERS,
      body: JSON.stringify({
        events: [{ eventId: `seed-${s}`, kind: "constraint", text: "Answers stay short." }],
      }),
    });
    if (!seeded.ok) throw new Error(`seeding load-${s}: ${seeded.status} ${await seeded.text()}`);
  }
  const acknowledged = new Set<string>();
  const pid = server.child.pid;
  const appends = await load(server.url, pid, ["append"], SECONDS, acknowledged);
  const recalls = await load(server.url, pid, ["recall"], SECONDS, acknowledged);
  const mixed = await load(server.url, pid, ["append", "recall"], SECONDS, acknowledged);
  const serverLog = server.stderr();
  await server.stop("SIGTERM");
  for (const line of serverLog
    .split("\n")
    .filter((l) => / 5\d\d \d+ms$/.test(l) || l.includes("unexpected"))
    .slice(0, 5))
    console.log(`    server: ${line}`);

  const store = SqliteStore.open(home);
  const stored = new Map<string, number>();
  for (let s = 0; s < SUBJECTS; s++) {
    const subject = `load-${s}`;
    const { highWater } = await store.snapshot(subject);
    for (let after = 0; after < highWater; ) {
      const page = await store.eventsPage(subject, after, highWater, 1000);
      if (page.length === 0) break;
      for (const { event } of page)
        if (event.eventId.startsWith("load-"))
          stored.set(event.eventId, (stored.get(event.eventId) ?? 0) + 1);
      after = page[page.length - 1]?.event.sequence ?? highWater;
    }
  }
  store.close();
  return {
    appends: appends.figures,
    recalls: recalls.figures,
    mixed: mixed.figures,
    acknowledged: acknowledged.size,
    lost: [...acknowledged].filter((id) => stored.get(id) !== 1).length,
    duplicated: [...stored.values()].filter((count) => count > 1).length,
    errors: appends.errors + recalls.errors + mixed.errors,
  };
}

/**
 * /healthz probed (one at a time, 2 ms apart) from the moment a fresh server listens until its
 * worker has consolidated a subject of BIG_SUBJECT_EVENTS events (requested by its start-up sweep).
 */
async function healthzDuringConsolidation(bin: string): Promise<ServeFigures["healthz"]> {
  const home = mkdtempSync(join(tmpdir(), "memgate-big-"));
  const store = SqliteStore.open(home);
  for (let i = 0; i < BIG_SUBJECT_EVENTS; i += 1000)
    await store.append(
      "big",
      Array.from({ length: Math.min(1000, BIG_SUBJECT_EVENTS - i) }, (_, k) =>
        MemoryEvent.parse(realisticEvent(i + k)),
      ),
    );
  store.close();
  const server = await startServe(["--home", home, "--token", TOKEN], {}, { bin, nodeArgs: NODE_ARGS });
  const started = performance.now();
  const done = new RegExp(`worker: big at ${BIG_SUBJECT_EVENTS}: (.*)`);
  const samples: number[] = [];
  let failed = 0;
  let outcome = done.exec(server.stderr());
  while (outcome === null && performance.now() - started < 300_000) {
    const sent = performance.now();
    const answer = await fetch(`${server.url}/healthz`);
    await answer.arrayBuffer();
    samples.push(performance.now() - sent);
    if (!answer.ok) failed++;
    await new Promise((resolve) => setTimeout(resolve, 2));
    outcome = done.exec(server.stderr());
  }
  const seconds = (performance.now() - started) / 1000;
  await server.stop("SIGTERM");
  return {
    ...latencies(samples, seconds, failed),
    consolidationSeconds: seconds,
    outcome: outcome?.[1] ?? "not finished within 300 s",
  };
}

async function measureServe(bin: string): Promise<ServeFigures> {
  const underLoad = await serveUnderLoad(bin);
  return { ...underLoad, healthz: await healthzDuringConsolidation(bin) };
}

const rate = (value: number) => Math.round(value).toLocaleString("en");
const kindLine = (name: string, figures: Latencies | undefined) =>
  figures
    ? `${name} ${rate(figures.perSecond)}/s, p50 ${ms(figures.p50)} ms, p99 ${ms(figures.p99)} ms, max ${ms(figures.max)} ms${figures.failed > 0 ? `, ${figures.failed} failed` : ""}`
    : "";

console.log(`serve load: ${CONNECTIONS} connections, ${SECONDS} s per phase; floors first`);
const bare = await bareHttp();
console.log(
  `  bare node:http, same JSON: ${rate(bare.perSecond)} req/s (${kindLine("POST", bare.kinds.append)}; ${kindLine("GET", bare.kinds.recall)})`,
);
const sqliteOne = sqliteInserts(1, 3);
const sqliteGroup = sqliteInserts(32, 3);
console.log(
  `  SQLite WAL synchronous=FULL, same disk: ${rate(sqliteOne)} commits/s at one insert each; ${rate(sqliteGroup)} inserts/s at 32 per commit`,
);

const builds: Array<{ name: string; bin: string }> = [{ name: "this build", bin: BIN }];
if (BASELINE) builds.push({ name: `baseline ${BASELINE_NAME} (${BASELINE})`, bin: BASELINE });
const measured: ServeFigures[] = [];
for (const build of builds) {
  console.log(`  memgate serve, ${build.name}:`);
  const figures = await measureServe(build.bin);
  measured.push(figures);
  const { appends, recalls, mixed, healthz } = figures;
  const recallMixed = mixed.kinds.recall;
  const cpu = (figures: LoadFigures) =>
    `; server CPU ${figures.cpuMsPerRequest.toFixed(2)} ms per request (${figures.servingCpuMsPerRequest.toFixed(2)} ms on the serving thread)`;
  console.log(
    `    appends only: ${kindLine("appends", appends.kinds.append)} (${((100 * (appends.kinds.append?.perSecond ?? 0)) / sqliteOne).toFixed(0)}% of SQLite's one-commit rate)${cpu(appends)}`,
  );
  console.log(`    recalls only: ${kindLine("recalls", recalls.kinds.recall)}${cpu(recalls)}`);
  console.log(
    `    mixed: ${rate(mixed.perSecond)} req/s (${((100 * mixed.perSecond) / bare.perSecond).toFixed(1)}% of bare node:http); ${kindLine("appends", mixed.kinds.append)}; ${kindLine("recalls", recallMixed)} (recall p99/p50 ${((recallMixed?.p99 ?? 0) / Math.max(0.1, recallMixed?.p50 ?? 0)).toFixed(1)}x)${cpu(mixed)}`,
  );
  console.log(
    `    /healthz during a consolidation of ${BIG_SUBJECT_EVENTS.toLocaleString("en")} events (${healthz.consolidationSeconds.toFixed(1)} s, ${healthz.outcome}): ${healthz.count} probes, p50 ${ms(healthz.p50)} ms, p99 ${ms(healthz.p99)} ms, max ${ms(healthz.max)} ms`,
  );
  console.log(
    `    ${figures.acknowledged} appends acknowledged: lost ${figures.lost}, stored twice ${figures.duplicated}; ${figures.errors} connection errors`,
  );
}

const [now, before] = measured as [ServeFigures, ServeFigures | undefined];
const appendRate = now.appends.kinds.append?.perSecond ?? 0;
const recallTail = now.mixed.kinds.recall;
const tailRatio = (recallTail?.p99 ?? 0) / Math.max(0.1, recallTail?.p50 ?? 0);
if (before) {
  const times = (a: number, b: number) => `${(a / Math.max(1e-9, b)).toFixed(1)}x`;
  console.log(
    `  this build against the baseline: mixed ${times(now.mixed.perSecond, before.mixed.perSecond)}, appends ${times(appendRate, before.appends.kinds.append?.perSecond ?? 0)}, recalls ${times(now.recalls.kinds.recall?.perSecond ?? 0, before.recalls.kinds.recall?.perSecond ?? 0)}, /healthz p99 during consolidation ${ms(before.healthz.p99)} → ${ms(now.healthz.p99)} ms; serving-thread CPU per append ${before.appends.servingCpuMsPerRequest.toFixed(2)} → ${now.appends.servingCpuMsPerRequest.toFixed(2)} ms, per recall ${before.recalls.servingCpuMsPerRequest.toFixed(2)} → ${now.recalls.servingCpuMsPerRequest.toFixed(2)} ms`,
  );
}
const sound = measured.every((m) => m.lost === 0 && m.duplicated === 0 && m.errors === 0);
const mixedGoal = before ? now.mixed.perSecond >= 10 * before.mixed.perSecond : now.mixed.perSecond >= 3000;
console.log(
  sound
    ? "serve load: every acknowledged event stored once"
    : "serve load: FAILED (lost, duplicated or errors)",
);
process.exitCode = sound ? 0 : 1;
record({
  bench: "serve-load",
  measures: `memgate serve, ${CONNECTIONS} connections for ${SECONDS} s, half appends, half budgeted recalls; every acknowledged event stored once`,
  figure: `${rate(now.mixed.perSecond)} req/s (${rate(now.mixed.kinds.append?.perSecond ?? 0)} appends/s, ${rate(recallTail?.perSecond ?? 0)} recalls/s), ${((100 * now.mixed.perSecond) / bare.perSecond).toFixed(1)}% of bare node:http (${rate(bare.perSecond)} req/s)${before ? `, ${(now.mixed.perSecond / before.mixed.perSecond).toFixed(1)}x the baseline ${BASELINE_NAME} (${rate(before.mixed.perSecond)} req/s)` : ""}; ${now.lost} lost, ${now.duplicated} stored twice`,
  goal: before ? ">= 10x the baseline in the same run, 0 lost" : ">= 3,000 req/s, 0 lost",
  met: sound && mixedGoal,
});
record({
  bench: "serve-load-appends",
  measures:
    "memgate serve appends alone (one event each, 32 connections) against SQLite's one-insert-per-commit rate on the same disk",
  figure: `${rate(appendRate)} appends/s = ${((100 * appendRate) / sqliteOne).toFixed(0)}% of ${rate(sqliteOne)} commits/s (32 per commit: ${rate(sqliteGroup)} inserts/s); p50 ${ms(now.appends.kinds.append?.p50 ?? 0)} ms, p99 ${ms(now.appends.kinds.append?.p99 ?? 0)} ms`,
  goal: ">= 50% of one-commit-per-insert",
  met: appendRate >= 0.5 * sqliteOne,
});
record({
  bench: "serve-load-recall-tail",
  measures: "recall latency under the mixed load: p99 against p50",
  figure: `p50 ${ms(recallTail?.p50 ?? 0)} ms, p99 ${ms(recallTail?.p99 ?? 0)} ms (${tailRatio.toFixed(1)}x), max ${ms(recallTail?.max ?? 0)} ms`,
  goal: "p99 <= 10x p50",
  met: tailRatio <= 10,
});
record({
  bench: "serve-load-healthz",
  measures: `/healthz while memgate serve consolidates a ${BIG_SUBJECT_EVENTS.toLocaleString("en")}-event subject`,
  figure: `p99 ${ms(now.healthz.p99)} ms, max ${ms(now.healthz.max)} ms over ${now.healthz.count} probes in ${now.healthz.consolidationSeconds.toFixed(1)} s${before ? ` (baseline p99 ${ms(before.healthz.p99)} ms, max ${ms(before.healthz.max)} ms)` : ""}`,
  goal: "p99 < 50 ms",
  met: now.healthz.p99 < 50,
});
