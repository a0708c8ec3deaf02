// A bounded load run against `memgate serve` on loopback: 32 connections for 20 s, half appending
// distinct events (16 subjects), half recalling. Prints throughput and latency percentiles, then
// checks the store: every acknowledged event stored exactly once, nothing acknowledged lost.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import autocannon from "autocannon";
import { SqliteStore } from "#adapters/embedded/sqlite-store.ts";
import { startServe } from "../test/support/serve-process.ts";
import { record } from "./results.ts";

const CONNECTIONS = 32;
const SECONDS = Number(process.env.LOAD_SECONDS ?? 20);
const SUBJECTS = 16;
const TOKEN = "load-bench-token";

const home = mkdtempSync(join(tmpdir(), "memgate-load-"));
const server = await startServe(["--home", home, "--token", TOKEN]);
console.log(`serve load: ${CONNECTIONS} connections for ${SECONDS} s against ${server.url}`);

let next = 0;
const acknowledged = new Set<string>();
const headers = { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" };
// Every subject exists before the run: a recall of a subject with no events is a 404 by contract.
for (let s = 0; s < SUBJECTS; s++) {
  const seeded = await fetch(`${server.url}/v1/subjects/load-${s}/events`, {
    method: "POST",
    headers,
    body: JSON.stringify({
      events: [{ eventId: `seed-${s}`, kind: "constraint", text: "Answers stay short." }],
    }),
  });
  if (!seeded.ok) throw new Error(`seeding load-${s}: ${seeded.status} ${await seeded.text()}`);
}
const result = await autocannon({
  url: server.url,
  connections: CONNECTIONS,
  duration: SECONDS,
  requests: [
    {
      method: "POST",
      headers,
      setupRequest: (request, context) => {
        const n = next++;
        (context as Record<string, unknown>).eventId = `load-${n}`;
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
      onResponse: (status, _body, context) => {
        if (status === 200) acknowledged.add((context as Record<string, unknown>).eventId as string);
      },
    },
    {
      method: "GET",
      headers,
      setupRequest: (request) => ({
        ...request,
        path: `/v1/subjects/load-${next % SUBJECTS}/recall?budget=2000`,
      }),
    },
  ],
});
const serverLog = server.stderr();
await server.stop("SIGTERM");
const refusedLines = serverLog
  .split("\n")
  .filter((line) => / [45]\d\d \d+ms$/.test(line) || line.includes("unexpected"));

const store = SqliteStore.open(home);
const stored = new Map<string, number>();
for (let s = 0; s < SUBJECTS; s++) {
  const subject = `load-${s}`;
  const { highWater } = await store.snapshot(subject);
  for (let after = 0; after < highWater; ) {
    const page = await store.eventsPage(subject, after, highWater, 1000);
    if (page.length === 0) break;
    for (const { event } of page)
      if (event.eventId.startsWith("load-")) stored.set(event.eventId, (stored.get(event.eventId) ?? 0) + 1);
    after = page[page.length - 1]?.event.sequence ?? highWater;
  }
}
store.close();
const lost = [...acknowledged].filter((id) => stored.get(id) !== 1);
const duplicated = [...stored.values()].filter((count) => count > 1).length;

console.log(
  `  ${result.requests.total} requests (${result.requests.average.toFixed(0)}/s), ${result.errors} errors, ${result.non2xx} non-2xx, ${result.timeouts} timeouts`,
);
console.log(
  `  latency p50 ${result.latency.p50} ms, p99 ${result.latency.p99} ms, max ${result.latency.max} ms (p99/p50 ${(result.latency.p99 / Math.max(1, result.latency.p50)).toFixed(1)}x)`,
);
console.log(
  `  ${acknowledged.size} appends acknowledged, ${stored.size} stored (the rest were in flight when the run ended); acknowledged but lost ${lost.length}, stored twice ${duplicated}`,
);
if (refusedLines.length > 0)
  console.log(
    `  refused or failed requests, as the server logged them:\n    ${refusedLines.slice(0, 10).join("\n    ")}`,
  );
const ok = result.errors === 0 && result.non2xx === 0 && lost.length === 0 && duplicated === 0;
console.log(ok ? "serve load: ok" : "serve load: FAILED");
process.exitCode = ok ? 0 : 1;
record({
  bench: "serve-load",
  measures: `memgate serve, ${CONNECTIONS} connections for ${SECONDS} s, appends and recalls; every acknowledged event stored once`,
  figure: `${result.requests.average.toFixed(0)} req/s, p50 ${result.latency.p50} ms, p99 ${result.latency.p99} ms, ${result.errors + result.non2xx} failed, ${lost.length} lost`,
  goal: "0 errors, 0 lost",
  met: ok,
});
