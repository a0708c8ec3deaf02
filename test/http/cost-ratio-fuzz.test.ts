// The cost bound as a ratio (CONTRACT §1 "Sizes"): random requests at and over each size limit
// (single events, whole batches, trust policies and the recalls after them, recall queries) each
// cost at most BASE_APPENDS plain one-event appends plus PER_EVENT_APPENDS per event the request
// holds, the plain append measured in the same run. Cost is the CPU time (user + system) this
// process spends answering the request through the HTTP API over the embedded store, the median of
// three tries: CPU time is what a loaded machine does not stretch (wall-clock time is never
// asserted), and the median drops a try that paid for the JIT or for another request's garbage.
// The budget is generous (3-5x the worst ratios measured on a 2-core machine: a full batch about
// 350-400, a policy at its limit about 80, a recall with the longest query about 65) so that it
// holds under load, and fails on what the sizes exist to prevent: one request costing seconds (a
// 400,000-zero quantity, a 499-word query, a policy of 110k blocked sources: thousands of appends).
// The subjects stay at a few thousand events: a policy change and a recall cost more on a larger
// subject, and an event more when more earlier events assert on its (key, scope).
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { appendEvents } from "#app/append.ts";
import { MAX_QUERY_CHARACTERS } from "#app/recall-options.ts";
import { run } from "#app/run.ts";
import { takeSnapshot } from "#app/snapshot.ts";
import { realisticEvent } from "#harness/event-mix.ts";
import { depsOverStore, temporaryStore } from "#harness/pipeline-builders.ts";
import {
  type EventSizes,
  longSource,
  POLICY_LIMITS,
  type PolicySizes,
  plainAppendBody,
  type QuantityShape,
  SIZE_LIMITS,
  sizedEvent,
  sizedPolicy,
  sizedQuery,
  WORST_QUERY_WORDS,
  worstAppendBody,
} from "#harness/worst-requests.ts";
import { createApi } from "#http/api.ts";
import { MAX_EVENTS_PER_REQUEST } from "#runtime/settings.ts";

/** What any request at or over a limit may cost, in plain one-event appends (CONTRACT §1 "Sizes"). */
const BASE_APPENDS = 300;
/** …plus this many for each event the request holds (a batch of 1,000 at the limits: about 400 in all). */
const PER_EVENT_APPENDS = 1;

const store = temporaryStore("cost-ratio");
afterAll(() => store.close());
const deps = depsOverStore(store);
const app = createApi({ deps });
/** A summarised subject of 1,000 events whose sources the policies' patterns nearly match. */
const LARGE = "cost/large";
const LARGE_EVENTS = 1000;
/** Where the appends go (each batch adds 1,000 events whose keys contradict the earlier ones'). */
const APPENDED = "cost/appended";

/** CPU milliseconds (user + system) this process spends on `work`. */
async function cpuMs(work: () => Promise<unknown>): Promise<number> {
  const before = process.cpuUsage();
  await work();
  const used = process.cpuUsage(before);
  return (used.user + used.system) / 1000;
}

function median(samples: number[]): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] as number;
}

/** A request through the API, answered and read to its end; its status. */
async function send(path: string, init: RequestInit = {}): Promise<number> {
  const response = await app.request(path, {
    ...init,
    headers: init.body === undefined ? {} : { "content-type": "application/json" },
  });
  await response.arrayBuffer();
  return response.status;
}
const post = (subject: string, body: string) =>
  send(`/v1/subjects/${encodeURIComponent(subject)}/events`, { method: "POST", body });

/** The median CPU of three tries; `request(attempt)` answers its status (each try may differ, e.g. new event ids). */
async function costOf(request: (attempt: number) => Promise<number>) {
  const statuses: number[] = [];
  const samples: number[] = [];
  for (let attempt = 0; attempt < 3; attempt++)
    samples.push(
      await cpuMs(async () => {
        statuses.push(await request(attempt));
      }),
    );
  return { ms: median(samples), statuses };
}

let plainMs = 0;
let plainCount = 0;
/** A plain one-event append's CPU: the median of rounds of 20, after a warm-up round. */
async function measurePlain(rounds: number): Promise<number[]> {
  const perAppend: number[] = [];
  for (let round = -1; round < rounds; round++) {
    const ms = await cpuMs(async () => {
      for (let i = 0; i < 20; i++) expect(await post("cost/plain", plainAppendBody(plainCount++))).toBe(200);
    });
    if (round >= 0) perAppend.push(ms / 20);
  }
  return perAppend;
}

/** The highest ratio seen per kind of request, printed at the end. */
const worst = new Map<string, { ratio: number; budget: number }>();

/** Asserts the request's cost within the budget for `events` events, and records its ratio. */
function withinBudget(kind: string, cost: { ms: number }, events: number): void {
  const budget = BASE_APPENDS + PER_EVENT_APPENDS * events;
  const ratio = cost.ms / plainMs;
  const seen = worst.get(kind);
  if (!seen || ratio > seen.ratio) worst.set(kind, { ratio, budget });
  expect(
    ratio,
    `${kind} cost ${ratio.toFixed(0)} plain appends, over its budget of ${budget}`,
  ).toBeLessThanOrEqual(budget);
}

beforeAll(async () => {
  for (let i = 0; i < LARGE_EVENTS; i += 500)
    await appendEvents(
      deps,
      LARGE,
      Array.from({ length: 500 }, (_, k) => ({ ...realisticEvent(i + k), source: longSource((i + k) % 8) })),
    );
  await run(deps, await takeSnapshot(deps, LARGE));
  // Warm every path once (JIT, the tokenizer, the artifact's caches) before anything is measured.
  await post(APPENDED, worstAppendBody(999, 50));
  await send(
    `/v1/subjects/${encodeURIComponent(LARGE)}/recall?budget=2000&query=${encodeURIComponent(sizedQuery())}`,
  );
  const samples = await measurePlain(5);
  plainMs = median(samples);
});

afterAll(async () => {
  // The unit again, after the heavy requests: the run is only as sound as a stable unit.
  const again = median(await measurePlain(3));
  console.log(
    `cost ratio fuzz: a plain append ${plainMs.toFixed(2)} ms of CPU (${again.toFixed(2)} ms at the end); worst per kind, in plain appends: ${[
      ...worst,
    ]
      .map(([kind, { ratio, budget }]) => `${kind} ${ratio.toFixed(0)} (budget ${budget})`)
      .join(", ")}`,
  );
});

/** A size at or over a limit: mostly at it or just over, sometimes far over, sometimes under. */
const atOrOver = (limit: number) =>
  fc.oneof(
    { weight: 4, arbitrary: fc.constant(limit) },
    { weight: 3, arbitrary: fc.constant(limit + 1) },
    { weight: 2, arbitrary: fc.integer({ min: limit + 2, max: limit * 4 }) },
    { weight: 1, arbitrary: fc.integer({ min: 1, max: limit }) },
  );

const eventSizes: fc.Arbitrary<EventSizes> = fc.record({
  text: atOrOver(SIZE_LIMITS.text),
  key: atOrOver(SIZE_LIMITS.key),
  scope: atOrOver(SIZE_LIMITS.scope),
  source: atOrOver(SIZE_LIMITS.source),
  textValue: atOrOver(SIZE_LIMITS.textValue),
  scopes: atOrOver(SIZE_LIMITS.scopes),
  quantity: fc.constantFrom<QuantityShape>(
    "at-limits",
    "at-limits",
    "over-digits",
    "over-magnitude",
    "over-length",
  ),
  unit: atOrOver(SIZE_LIMITS.unit),
});

let appended = 0;

describe("a request at or over a size limit costs a bounded multiple of a plain append (CPU, same run)", () => {
  it("one event with each field at or over its limit", async () => {
    await fc.assert(
      fc.asyncProperty(eventSizes, async (sizes) => {
        const n = appended++;
        const cost = await costOf((attempt) =>
          post(APPENDED, JSON.stringify({ events: [sizedEvent(`one-${n}-${attempt}`, n, sizes)] })),
        );
        expect(cost.statuses.every((status) => status === 200 || status === 400)).toBe(true);
        withinBudget("one event", cost, 1);
      }),
      { numRuns: 25, seed: 2301, examples: [[SIZE_LIMITS]] },
    );
  });

  it("a batch at 1,000 events and just under 5 MiB, or over either, or with one field over in its last event", async () => {
    const batch = fc.record({
      count: fc.constantFrom(MAX_EVENTS_PER_REQUEST, MAX_EVENTS_PER_REQUEST + 1),
      overBytes: fc.boolean(),
      overField: fc.constantFrom<keyof EventSizes | null>(null, "key", "scopes", "quantity", "unit"),
    });
    await fc.assert(
      fc.asyncProperty(batch, async ({ count, overBytes, overField }) => {
        const n = appended++;
        const body = (attempt: number) => {
          const text = worstAppendBody(1000 + n * 3 + attempt);
          if (count === MAX_EVENTS_PER_REQUEST && !overBytes && overField === null) return text;
          const parsed = JSON.parse(text) as { events: Array<{ eventId: string }> };
          const last = parsed.events[parsed.events.length - 1] as { eventId: string };
          if (overField !== null)
            parsed.events[parsed.events.length - 1] = sizedEvent(last.eventId, n, {
              ...SIZE_LIMITS,
              text: 10,
              textValue: 10,
              ...(overField === "quantity"
                ? { quantity: "over-digits" }
                : { [overField]: (SIZE_LIMITS[overField] as number) + 1 }),
            });
          if (count > MAX_EVENTS_PER_REQUEST)
            parsed.events.push({ ...last, eventId: `${last.eventId}-more` });
          return overBytes ? `${JSON.stringify(parsed)}${" ".repeat(8 * 1024)}` : JSON.stringify(parsed);
        };
        const bodies = [0, 1, 2].map(body);
        const cost = await costOf((attempt) => post(APPENDED, bodies[attempt] as string));
        expect(cost.statuses.every((status) => [200, 400, 413].includes(status))).toBe(true);
        withinBudget("batch", cost, count);
      }),
      {
        numRuns: 6,
        seed: 2302,
        examples: [[{ count: MAX_EVENTS_PER_REQUEST, overBytes: false, overField: null }]],
      },
    );
  });

  it("a trust policy at or over its limits, and the recall after it, on a 1,000-event subject", async () => {
    const sizes: fc.Arbitrary<PolicySizes> = fc.record({
      blockedSources: atOrOver(POLICY_LIMITS.blockedSources),
      sourceLength: atOrOver(POLICY_LIMITS.sourceLength),
      rules: atOrOver(POLICY_LIMITS.rules),
      globLength: atOrOver(POLICY_LIMITS.globLength),
    });
    let round = 0;
    await fc.assert(
      fc.asyncProperty(sizes, async (policySizes) => {
        // Alternately blocking one source in eight: an accepted policy moves the epoch each time.
        const blocking = round++ % 2 === 0 ? 7 : null;
        const policy = JSON.stringify(sizedPolicy(blocking, policySizes));
        const cost = await costOf(() =>
          send(`/v1/subjects/${encodeURIComponent(LARGE)}/policy`, { method: "PUT", body: policy }),
        );
        expect(cost.statuses.every((status) => status === 200 || status === 400)).toBe(true);
        withinBudget("policy", cost, 0);
        const recalled = await costOf(() => send(`/v1/subjects/${encodeURIComponent(LARGE)}/recall`));
        expect(recalled.statuses).toEqual([200, 200, 200]);
        withinBudget("recall after a policy", recalled, 0);
      }),
      { numRuns: 10, seed: 2303, examples: [[POLICY_LIMITS]] },
    );
    await send(`/v1/subjects/${encodeURIComponent(LARGE)}/policy`, {
      method: "PUT",
      body: JSON.stringify({ minTrust: "tool", blockedSources: [] }),
    });
  });

  it("a recall query at or over 96 words and 1,000 characters, with the largest budget, on a summarised 1,000-event subject", async () => {
    await run(deps, await takeSnapshot(deps, LARGE));
    const query = fc.record({
      words: atOrOver(WORST_QUERY_WORDS),
      length: atOrOver(MAX_QUERY_CHARACTERS),
      format: fc.constantFrom("json", "text"),
    });
    await fc.assert(
      fc.asyncProperty(query, async ({ words, length, format }) => {
        const text = sizedQuery(words, Math.max(length, words * 2));
        const path = `/v1/subjects/${encodeURIComponent(LARGE)}/recall?budget=100000000&format=${format}&query=${encodeURIComponent(text)}`;
        const cost = await costOf(() => send(path));
        expect(cost.statuses.every((status) => status === 200 || status === 400)).toBe(true);
        withinBudget("recall query", cost, 0);
      }),
      {
        numRuns: 12,
        seed: 2304,
        examples: [[{ words: WORST_QUERY_WORDS, length: MAX_QUERY_CHARACTERS, format: "text" }]],
      },
    );
  });
});
