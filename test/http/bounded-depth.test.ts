// A body's nesting is bounded while it is scanned (CONTRACT §6): 5 MiB nested 2.6 million levels
// deep was refused with the right 400 only after one unpaced parse of it, 1–2 s in which the
// serving thread answered nothing. Now the scan stops at the first level past the limit, so the
// refusal costs what refusing a flat body of the same size costs: the CPU time (user + system,
// the median of three, never wall-clock time) of each is compared in one run.
import { afterAll, describe, expect, it, vi } from "vitest";
import { MAX_NESTING_DEPTH } from "#domain/schemas.ts";
import { depsOverStore, temporaryStore } from "#harness/pipeline-builders.ts";
import { type DeepShape, deepestBody, flatRefusedBody } from "#harness/worst-requests.ts";
import { createApi } from "#http/api.ts";

const store = temporaryStore("bounded-depth");
afterAll(() => store.close());
const deps = depsOverStore(store);
const app = createApi({ deps });
const EVENTS = "/v1/subjects/deep/events";

async function post(body: string, type = "application/json") {
  const response = await app.request(EVENTS, { method: "POST", headers: { "content-type": type }, body });
  const answer = (await response.json()) as { error?: { field?: string; message?: string } };
  return { status: response.status, field: answer.error?.field, message: answer.error?.message };
}

async function cpuMs(work: () => Promise<unknown>): Promise<number> {
  const before = process.cpuUsage();
  await work();
  const used = process.cpuUsage(before);
  return (used.user + used.system) / 1000;
}

async function medianCpuMs(work: () => Promise<unknown>): Promise<number> {
  const samples: number[] = [];
  for (let i = 0; i < 3; i++) samples.push(await cpuMs(work));
  return samples.sort((a, b) => a - b)[1] as number;
}

/** An event whose unknown field nests so that the whole event is `levels` deep. */
const eventNesting = (levels: number) =>
  JSON.stringify({
    events: [
      JSON.parse(
        `{"eventId":"d-${levels}","kind":"note","text":"x","extra":${"[".repeat(levels - 1)}${"]".repeat(levels - 1)}}`,
      ),
    ],
  });

const SHAPES: Array<[DeepShape, string, string]> = [
  ["bare", "application/json", "body"],
  ["in-events", "application/json", "events[0]"],
  ["ndjson", "application/x-ndjson", "events[0]"],
];

describe("a body nested millions of levels deep", () => {
  it("is refused with the 400 its shape calls for, and nothing is written", async () => {
    for (const [shape, type, field] of SHAPES) {
      const answer = await post(deepestBody(shape), type);
      expect([answer.status, answer.field], shape).toEqual([400, field]);
      expect(answer.message, shape).toMatch(/nests deeper than (32|34) levels of JSON/);
    }
    expect(await deps.events.listSubjects()).not.toContain("deep");
  });

  it("is refused before any value is built: JSON.parse never sees it", async () => {
    const parse = vi.spyOn(JSON, "parse");
    try {
      for (const [shape, type] of SHAPES) {
        parse.mockClear();
        expect((await post(deepestBody(shape), type)).status).toBe(400);
        const longest = Math.max(0, ...parse.mock.calls.map(([text]) => String(text).length));
        expect(longest, shape).toBeLessThan(1000);
      }
    } finally {
      parse.mockRestore();
    }
  });

  it("costs what refusing a flat body of the same size costs (it cost 15-45x as much: over a second)", async () => {
    for (const [shape, type] of SHAPES) {
      const deep = deepestBody(shape);
      const flat = flatRefusedBody(deep.length);
      expect(flat.length).toBe(deep.length);
      await post(flat);
      const flatMs = await medianCpuMs(() => post(flat));
      const deepMs = await medianCpuMs(() => post(deep, type));
      expect(deepMs, `${shape}: ${deepMs.toFixed(0)} ms against ${flatMs.toFixed(0)} ms`).toBeLessThan(
        3 * Math.max(flatMs, 5),
      );
    }
  });

  it("keeps the limit where the event's schema has it: an event 32 levels deep passes, 33 is refused the same way", async () => {
    expect(MAX_NESTING_DEPTH).toBe(32);
    expect((await post(eventNesting(32))).status).toBe(200);
    const deeper = await post(eventNesting(33));
    expect([deeper.status, deeper.field, deeper.message]).toEqual([
      400,
      "events[0]",
      "events[0]: the event nests deeper than 32 levels of JSON; flatten it",
    ]);
  });
});
