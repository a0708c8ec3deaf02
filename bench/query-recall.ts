// Recall with a question under `memgate serve`, on 100,000-event subjects: the summary's index
// ranks its claims and its cold layer for each question, and the answer must stay fast (goal: p99
// at most 20 ms, measured from a client on loopback, one request at a time, after the summary and
// its index are loaded). Two subjects: the benches' rule-dense mix (most of the budget goes to
// must-preserve claims) and a chat log (every turn cold: the question's matches are served).
// The subjects are appended and consolidated by a child process (this file with --build HOME): the
// client that times the questions holds none of that work's heap, whose collections would pause it
// and be counted as the server's (they were: pauses of 250–550 ms the server's own log never saw).
// Run: npx tsx --import ./scripts/text-imports.mjs bench/query-recall.ts [EVENTS]
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { readdir } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { SqliteStore } from "#adapters/embedded/sqlite-store.ts";
import { appendEvents } from "#app/append.ts";
import { run } from "#app/run.ts";
import { takeSnapshot } from "#app/snapshot.ts";
import { seededRandom } from "#domain/seeded-random.ts";
import { realisticEvent } from "#harness/event-mix.ts";
import { depsOverStore } from "#harness/pipeline-builders.ts";
import { startServe } from "#harness/serve-process.ts";
import { record } from "./results.ts";
import { latencies as percentiles } from "./support/serve-measures.ts";

const building = process.argv[2] === "--build";
const EVENTS = Number((building ? process.argv[4] : process.argv[2]) ?? 100_000);
const WARM = 100;
const ASKED = 400;
const GOAL_MS = 20;

const PEOPLE = ["Mia", "Leo", "Ana", "Jon", "Gina", "Tomas", "Ines", "Priya"];
const WORDS =
  "pottery class bowl kayak river dance studio bakery train coast novel lighthouse garden tomatoes concert guitar marathon shoes camping lake puppy vet adoption agency painting sunset museum dinosaur budget invoice flight hotel Lisbon Porto Ghent festival workshop teapot recipe soup bike helmet job interview bank startup launch website photos beach mountains forest hike picnic birthday cake sister brother grandmother school speech mentor volunteer shelter".split(
    " ",
  );

/** A chat turn: who says it and a sentence over a shared vocabulary (the same log every run). */
function chatTurn(i: number, random: () => number): Record<string, unknown> {
  const pick = () => WORDS[Math.floor(random() * WORDS.length)] as string;
  return {
    eventId: `t-${i}`,
    kind: "note",
    source: PEOPLE[i % PEOPLE.length],
    occurredAt: `2026-${String(1 + (Math.floor(i / 3000) % 12)).padStart(2, "0")}-${String(1 + (Math.floor(i / 100) % 28)).padStart(2, "0")}`,
    text: `I went to the ${pick()} with my ${pick()} and we talked about the ${pick()} and the ${pick()} ${i % 50}.`,
  };
}

const SUBJECTS = {
  rules: {
    event: (i: number) => realisticEvent(i),
    question: (i: number) =>
      [
        `What did we chat about on topic ${i % 97} with the team?`,
        `How much does item ${i * 37} of project p${i % 40} cost in USD?`,
        `When is the follow-up on ticket T-${i * 13} due, and is it still open?`,
        `What is the distance limit for project p${i % 40}, and may it ever be exceeded?`,
        `Which decisions were made about p${i % 40} and what did they cost overall?`,
        `Did anyone mention quantum pineapples or the Lisbon offsite ${i}?`,
      ][i % 6] as string,
  },
  chat: {
    event: (() => {
      const random = seededRandom(37);
      return (i: number) => chatTurn(i, random);
    })(),
    question: (i: number) =>
      [
        `When did ${PEOPLE[i % 8]} go to the ${WORDS[i % WORDS.length]} with the ${WORDS[(i * 7) % WORDS.length]}?`,
        `What did ${PEOPLE[(i + 3) % 8]} say about the ${WORDS[(i * 11) % WORDS.length]}?`,
        `Has anyone talked about the ${WORDS[(i * 5) % WORDS.length]} and the ${WORDS[(i * 13) % WORDS.length]} ${i % 50}?`,
      ][i % 3] as string,
  },
} as const;

async function sizeOf(dir: string): Promise<number> {
  let total = 0;
  for (const entry of await readdir(dir, { recursive: true, withFileTypes: true }))
    if (entry.isFile()) total += statSync(join(entry.parentPath, entry.name)).size;
  return total;
}

/** Appends and consolidates both subjects in `home` (run in a child process: see the top). */
async function build(home: string): Promise<void> {
  const store = SqliteStore.open(home);
  const deps = depsOverStore(store, { generationTimeoutMs: 900_000 });
  for (const [subject, { event }] of Object.entries(SUBJECTS)) {
    const built = performance.now();
    for (let i = 0; i < EVENTS; i += 1000)
      await appendEvents(
        deps,
        subject,
        Array.from({ length: Math.min(1000, EVENTS - i) }, (_, k) => event(i + k)),
      );
    const outcome = await run(deps, await takeSnapshot(deps, subject));
    if (outcome.status !== "PUBLISHED")
      throw new Error(`${subject}: the consolidation ended ${outcome.status}`);
    console.log(
      `${subject}: ${EVENTS} events appended and consolidated in ${((performance.now() - built) / 1000).toFixed(1)} s`,
    );
  }
  store.close();
}

if (building) {
  await build(process.argv[3] as string);
  process.exit(0);
}

const home = mkdtempSync(join(tmpdir(), "memgate-query-recall-"));
try {
  const child = spawnSync(
    process.execPath,
    [...process.execArgv, import.meta.filename, "--build", home, String(EVENTS)],
    { stdio: "inherit" },
  );
  if (child.status !== 0) throw new Error(`building the subjects failed (${child.status ?? child.signal})`);
  const indexBytes = await sizeOf(join(home, "recall"));

  const server = await startServe(["--home", home]);
  try {
    const rows: string[] = [];
    let worst = 0;
    for (const [subject, { question }] of Object.entries(SUBJECTS)) {
      const ask = async (i: number) => {
        const started = performance.now();
        const response = await fetch(
          `${server.url}/v1/subjects/${subject}/recall?format=text&budget=1500&query=${encodeURIComponent(question(i))}`,
        );
        const text = await response.text();
        if (response.status !== 200) throw new Error(`recall answered ${response.status}: ${text}`);
        return { ms: performance.now() - started, text };
      };
      // The first question loads the summary's body and index into the server (once per artifact).
      const first = await ask(0);
      for (let i = 1; i < WARM; i++) await ask(i);
      const samples: number[] = [];
      const askedFrom = performance.now();
      let matched = 0;
      for (let i = 0; i < ASKED; i++) {
        const { ms, text } = await ask(WARM + i);
        samples.push(ms);
        if (text.includes("## matches")) matched++;
      }
      const { p50, p99, max } = percentiles(samples, (performance.now() - askedFrom) / 1000, 0);
      worst = Math.max(worst, p99);
      // The server's own time for the same questions (its log line per request, whole ms).
      const logged = server
        .stderr()
        .split("\n")
        .filter((line) => line.includes(`/v1/subjects/${subject}/recall 200 `))
        .slice(-ASKED)
        .map((line) => Number(/ (\d+)ms$/.exec(line)?.[1]));
      const inServer = percentiles(logged, 1, 0);
      const line = `${subject}: p50 ${p50.toFixed(1)} ms, p99 ${p99.toFixed(1)} ms, max ${max.toFixed(1)} ms (in the server: p99 ${inServer.p99} ms, max ${inServer.max} ms); ${matched} of ${ASKED} answers served matches; first question ${first.ms.toFixed(0)} ms (loads the summary)`;
      console.log(`  ${line}`);
      rows.push(line.replace(/; first question.*/, ""));
    }
    console.log(
      `${ASKED} questions a subject, one at a time, budget 1,500 tokens as text; recall indexes ${(indexBytes / 1e6).toFixed(1)} MB (goal: p99 ≤ ${GOAL_MS} ms; the worst is ${(worst / GOAL_MS).toFixed(2)}x of it)`,
    );
    record({
      bench: "query-recall",
      measures: `recall with a question under memgate serve on ${EVENTS.toLocaleString("en")}-event subjects (deterministic summary), budget 1,500 tokens, one request at a time`,
      figure: rows.join("; "),
      goal: `p99 ≤ ${GOAL_MS} ms`,
      met: worst <= GOAL_MS,
    });
  } finally {
    await server.stop();
  }
} finally {
  rmSync(home, { recursive: true, force: true });
}
