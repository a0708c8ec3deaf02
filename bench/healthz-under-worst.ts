// /healthz latency while `memgate serve` runs the worst request of each kind the contract accepts
// (harness/worst-requests.ts): /healthz is probed one request at a time, 2 ms apart, on a
// connection of its own, while the heavy requests run one after another on another connection.
// Kinds, in this order on one server: the consolidation of a 10,000-event subject (requested by the
// server's start-up sweep); appends of 1,000 events in just under 5 MiB with every field at its
// limit; recalls of that subject with the longest query (JSON and text, the largest budget); a
// trust policy at its size limit (alternately blocking one source in eight, so the epoch moves)
// followed by recalls of the whole first page. Between kinds the worker is let finish the rebuilds
// the last kind requested, so each kind's figures are its own. Also printed: each kind's latency
// and the server's CPU time per request, against a plain one-event append's in the same run. And
// one refused kind: bodies of 5 MiB nested 2.6 million levels (bare and inside {"events":[…]}),
// which the server must refuse (400) without holding /healthz.

import { mkdtempSync } from "node:fs";
import { Agent, request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SqliteStore } from "#adapters/embedded/sqlite-store.ts";
import { rebuildReason } from "#domain/rebuild.ts";
import { MemoryEvent } from "#domain/schemas.ts";
import { realisticEvent } from "#harness/event-mix.ts";
import { startServe } from "#harness/serve-process.ts";
import {
  deepestBody,
  longSource,
  plainAppendBody,
  WORST_QUERY,
  worstAppendBody,
  worstPolicy,
} from "#harness/worst-requests.ts";
import { record } from "./results.ts";
import { cpuMs, type Latencies, latencies, ms } from "./support/serve-measures.ts";

const TOKEN = "worst-bench-token";
const BIG = "big";
const BIG_EVENTS = 10_000;
const APPENDS = Number(process.env.WORST_APPENDS ?? 6);
const RECALLS = Number(process.env.WORST_RECALLS ?? 20);
const POLICY_ROUNDS = Number(process.env.WORST_POLICY_ROUNDS ?? 6);
const DEEP_REFUSALS = Number(process.env.WORST_DEEP ?? 6);
const RECALLS_PER_POLICY = 3;
const PLAIN_APPENDS = 200;
const GOAL_P99_MS = 50;

interface Answer {
  status: number;
  ms: number;
  bytes: number;
}

/** One request on `agent`'s connection; the answer read to its end (never parsed: the client stays light). */
function send(agent: Agent, url: string, method: string, path: string, body?: Buffer): Promise<Answer> {
  const sent = performance.now();
  return new Promise((resolve, reject) => {
    const req = request(
      `${url}${path}`,
      {
        agent,
        method,
        headers: {
          authorization: `Bearer ${TOKEN}`,
          ...(body ? { "content-type": "application/json", "content-length": body.length } : {}),
        },
      },
      (res) => {
        let bytes = 0;
        res.on("data", (chunk: Buffer) => {
          bytes += chunk.length;
        });
        res.on("end", () => resolve({ status: res.statusCode ?? 0, ms: performance.now() - sent, bytes }));
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

/** /healthz one at a time, 2 ms apart, on a connection of its own, until stopped. */
function probeHealthz(url: string) {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const samples: number[] = [];
  let failed = 0;
  let stopping = false;
  const started = performance.now();
  const loop = (async () => {
    while (!stopping) {
      const sent = performance.now();
      try {
        const answer = await send(agent, url, "GET", "/healthz");
        samples.push(answer.ms);
        if (answer.status !== 200) failed++;
      } catch {
        // A connection the server reset (its keep-alive timer ran out while it could not read):
        // a failed probe, taking as long as it took; the next one opens a new connection.
        samples.push(performance.now() - sent);
        failed++;
      }
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
  })();
  return async (): Promise<Latencies> => {
    stopping = true;
    await loop;
    agent.destroy();
    return latencies(samples, (performance.now() - started) / 1000, failed);
  };
}

interface KindFigures {
  kind: string;
  /** The kind in a few words, for the results table. */
  label: string;
  requests: Latencies;
  /** The server's CPU time per request of this kind (all its threads: background work included). */
  cpuMsPerRequest: number;
  healthz: Latencies;
}

/**
 * Runs `work` (which answers its requests' latencies) on a connection of its own while /healthz is
 * probed on another; both opened for the kind (an idle kept-alive connection may be closed by the
 * server while the worker catches up between kinds).
 */
async function measured(
  [kind, label]: [string, string],
  url: string,
  pid: number | undefined,
  work: (agent: Agent) => Promise<number[]>,
): Promise<KindFigures> {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const stopProbe = probeHealthz(url);
  const cpuBefore = cpuMs(pid);
  const started = performance.now();
  try {
    const requestMs = await work(agent);
    const seconds = (performance.now() - started) / 1000;
    const cpu = cpuMs(pid) - cpuBefore;
    const figures = {
      kind,
      label,
      requests: latencies(requestMs, seconds, 0),
      cpuMsPerRequest: cpu / Math.max(1, requestMs.length),
      healthz: await stopProbe(),
    };
    printKind(figures);
    return figures;
  } finally {
    agent.destroy();
  }
}

function met(figures: KindFigures): boolean {
  return figures.healthz.p99 < GOAL_P99_MS && figures.healthz.failed === 0;
}

/** A kind's lines: its requests (and their cost as a multiple of a plain append's), /healthz meanwhile. */
function printKind(figures: KindFigures): void {
  const { requests, healthz } = figures;
  const ratio =
    plain === undefined
      ? ""
      : ` (${(requests.p50 / Math.max(0.01, plain.requests.p50)).toFixed(0)}x a plain append's time, ${(figures.cpuMsPerRequest / Math.max(0.01, plain.cpuMsPerRequest)).toFixed(0)}x its CPU)`;
  console.log(
    `  ${figures.kind}: ${requests.count} requests, p50 ${ms(requests.p50)} ms, max ${ms(requests.max)} ms each, server CPU ${ms(figures.cpuMsPerRequest)} ms each${ratio}`,
  );
  console.log(
    `    /healthz meanwhile: ${healthz.count} probes, p50 ${ms(healthz.p50)} ms, p99 ${ms(healthz.p99)} ms, max ${ms(healthz.max)} ms${healthz.failed > 0 ? `, ${healthz.failed} failed` : ""}: ${met(figures) ? "goal met" : `over the goal (p99 < ${GOAL_P99_MS} ms)`}`,
  );
}

function expectOk(what: string, answer: Answer): number {
  if (answer.status !== 200 && answer.status !== 202)
    throw new Error(`${what}: ${answer.status}; the worst requests must all be accepted`);
  return answer.ms;
}

function expectRefused(what: string, answer: Answer): number {
  if (answer.status !== 400) throw new Error(`${what}: ${answer.status}; it must be refused with a 400`);
  return answer.ms;
}

/**
 * Waits until the worker has caught up with the subject: no rebuild is called for by its clock
 * (CONTRACT: a summary current at the clock's epoch, a tail under the rebuild threshold).
 */
async function settled(url: string, subject: string, log: () => string): Promise<number> {
  const get = async <T>(path: string) =>
    (await (await fetch(`${url}${path}`, { headers: { authorization: `Bearer ${TOKEN}` } })).json()) as T;
  const { rebuildAfterEvents } = await get<{ rebuildAfterEvents: number }>("/v1/settings");
  const started = performance.now();
  while (performance.now() - started < 600_000) {
    const clock = await get<{
      highWater: number;
      inputEpoch: number;
      alias: { coversThrough: number; sourceEpoch: number } | null;
    }>(`/v1/subjects/${encodeURIComponent(subject)}/clock`);
    if (rebuildReason(clock, clock.alias, rebuildAfterEvents) === null)
      return (performance.now() - started) / 1000;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error(`${subject} not rebuilt within 600 s:\n${log().split("\n").slice(-10).join("\n")}`);
}

console.log(
  `healthz under the worst requests: ${BIG_EVENTS.toLocaleString("en")}-event subject, ${APPENDS} appends, ${RECALLS} query recalls, ${POLICY_ROUNDS} policies × ${RECALLS_PER_POLICY} recalls`,
);
const home = mkdtempSync(join(tmpdir(), "memgate-worst-"));
const store = SqliteStore.open(home);
for (let i = 0; i < BIG_EVENTS; i += 1000)
  await store.append(
    BIG,
    Array.from({ length: Math.min(1000, BIG_EVENTS - i) }, (_, k) =>
      MemoryEvent.parse({ ...realisticEvent(i + k), source: longSource((i + k) % 8) }),
    ),
  );
store.close();
const appendBodies = Array.from({ length: APPENDS }, (_, batch) => Buffer.from(worstAppendBody(batch)));
const policies = [worstPolicy(null), worstPolicy(7)].map((policy) => Buffer.from(JSON.stringify(policy)));
const deepBodies = [deepestBody("bare"), deepestBody("in-events")].map((body) => Buffer.from(body));

const server = await startServe(["--home", home, "--token", TOKEN]);
const { url } = server;
const pid = server.child.pid;
const kinds: KindFigures[] = [];
let plain: KindFigures | undefined;
try {
  // The start-up sweep has queued the large subject's first summary: its consolidation is under way.
  const done = new RegExp(`worker: ${BIG} at ${BIG_EVENTS}: (.*)`);
  kinds.push(
    await measured(
      [`consolidation of ${BIG_EVENTS.toLocaleString("en")} events`, "consolidation 10k"],
      url,
      pid,
      async () => {
        const started = performance.now();
        while (!done.test(server.stderr())) {
          if (performance.now() - started > 600_000) throw new Error("consolidation not done within 600 s");
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
        return [performance.now() - started];
      },
    ),
  );
  console.log(`  ${BIG}: ${done.exec(server.stderr())?.[1]}`);

  plain = await measured(["plain one-event append", "plain append"], url, pid, async (work) => {
    const times: number[] = [];
    for (let n = 0; n < PLAIN_APPENDS; n++)
      times.push(
        expectOk(
          "plain append",
          await send(work, url, "POST", "/v1/subjects/plain/events", Buffer.from(plainAppendBody(n))),
        ),
      );
    return times;
  });
  console.log(`  plain appends settled after ${(await settled(url, "plain", server.stderr)).toFixed(1)} s`);

  kinds.push(
    await measured(
      [
        `refusal of ${(deepBodies[0]?.length ?? 0).toLocaleString("en")} bytes nested ${((deepBodies[0]?.length ?? 0) / 2).toLocaleString("en")} levels`,
        "deepest body, refused",
      ],
      url,
      pid,
      async (work) => {
        const times: number[] = [];
        for (let n = 0; n < DEEP_REFUSALS; n++)
          times.push(
            expectRefused(
              "deepest body",
              await send(work, url, "POST", "/v1/subjects/deep/events", deepBodies[n % 2] as Buffer),
            ),
          );
        return times;
      },
    ),
  );

  const appendKind = `append of 1,000 events, ${(appendBodies[0]?.length ?? 0).toLocaleString("en")} bytes`;
  kinds.push(
    await measured([appendKind, "append 1,000 events/5 MiB"], url, pid, async (work) => {
      const times: number[] = [];
      for (const body of appendBodies)
        times.push(
          expectOk("worst append", await send(work, url, "POST", "/v1/subjects/worst-append/events", body)),
        );
      return times;
    }),
  );
  console.log(
    `  worst-append settled after ${(await settled(url, "worst-append", server.stderr)).toFixed(1)} s`,
  );

  const query = encodeURIComponent(WORST_QUERY);
  kinds.push(
    await measured(
      [`recall of ${BIG_EVENTS.toLocaleString("en")} events, longest query`, "recall, longest query"],
      url,
      pid,
      async (work) => {
        const times: number[] = [];
        for (let n = 0; n < RECALLS; n++) {
          const format = n % 2 === 0 ? "json" : "text";
          const path = `/v1/subjects/${BIG}/recall?budget=100000000&format=${format}&query=${query}`;
          times.push(expectOk("recall with the longest query", await send(work, url, "GET", path)));
        }
        return times;
      },
    ),
  );

  kinds.push(
    await measured(
      ["trust policy at its limit, then recalls", "policy at its limit + recalls"],
      url,
      pid,
      async (work) => {
        const times: number[] = [];
        for (let round = 0; round < POLICY_ROUNDS; round++) {
          const policy = policies[round % 2] as Buffer;
          times.push(expectOk("policy", await send(work, url, "PUT", `/v1/subjects/${BIG}/policy`, policy)));
          for (let n = 0; n < RECALLS_PER_POLICY; n++)
            times.push(
              expectOk("recall after the policy", await send(work, url, "GET", `/v1/subjects/${BIG}/recall`)),
            );
        }
        return times;
      },
    ),
  );
} catch (error) {
  console.log(`  failed; the server's last lines:\n${server.stderr().split("\n").slice(-15).join("\n")}`);
  throw error;
} finally {
  await server.stop("SIGTERM");
}

const plainCpu = Math.max(0.01, plain?.cpuMsPerRequest ?? 0);
const allMet = kinds.length === 5 && kinds.every(met);
console.log(
  `  server CPU per request as a multiple of a plain append's (${ms(plainCpu)} ms): ${kinds.map((figures) => `${figures.label} ${(figures.cpuMsPerRequest / plainCpu).toFixed(0)}x`).join(", ")}`,
);
console.log(
  allMet
    ? "healthz under the worst requests: goal met for every kind"
    : "healthz under the worst requests: goal NOT met for every kind",
);
record({
  bench: "healthz-under-worst",
  measures:
    "/healthz p99 (max) on its own connection while memgate serve runs the worst accepted request of each kind (and refuses the deepest body), one after another; the kind's own p50 and server CPU per request as a multiple of a plain one-event append's",
  figure: kinds
    .map(
      (figures) =>
        `${figures.label}: ${ms(figures.healthz.p99)} (${ms(figures.healthz.max)}) ms, request ${ms(figures.requests.p50)} ms, CPU ${(figures.cpuMsPerRequest / plainCpu).toFixed(0)}x`,
    )
    .join("; "),
  goal: `p99 < ${GOAL_P99_MS} ms for every kind`,
  met: allMet,
});
