import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { SqliteStore } from "#adapters/embedded/sqlite-store.ts";
import { readInputs } from "#app/snapshot.ts";
import { consolidate } from "#domain/consolidator.ts";
import { gateCandidate } from "#domain/gate/index.ts";
import { mustPreserveFingerprint } from "#domain/must-preserve.ts";
import { MemoryEvent } from "#domain/schemas.ts";
import { eventLog } from "../support/arbitraries.ts";

/**
 * The seed's regrouping property, through a real store: the same events appended in different
 * batch splits (each batch planned and committed on its own, the conflict index growing batch by
 * batch) give the same valid inputs, must-preserve set, conflicts and verdicts.
 */
const store = new SqliteStore(mkdtempSync(join(tmpdir(), "memgate-regroup-")));
afterAll(() => store.close());
let subjects = 0;

async function appendIn(batches: number[], events: MemoryEvent[]): Promise<string> {
  const subject = `regroup-${++subjects}`;
  let at = 0;
  for (let b = 0; at < events.length; b++) {
    const size = batches[b % batches.length] ?? 1;
    await store.append(subject, events.slice(at, at + size));
    at += size;
  }
  return subject;
}

async function meaningOf(subject: string) {
  const clock = await store.snapshot(subject);
  const { context } = await readInputs({ events: store }, subject, clock.highWater);
  return { context, clock };
}

describe("regrouping append batches through the embedded store", () => {
  it("changes neither the valid inputs, the must-preserve set, the conflicts nor the verdict", async () => {
    await fc.assert(
      fc.asyncProperty(
        eventLog,
        fc.array(fc.integer({ min: 1, max: 6 }), { minLength: 1, maxLength: 8 }),
        async (inputs, sizes) => {
          const events = inputs.map((input) => MemoryEvent.parse(input));
          const whole = await meaningOf(await appendIn([events.length], events));
          const split = await meaningOf(await appendIn(sizes, events));
          expect(split.clock.highWater).toBe(whole.clock.highWater);
          expect([...split.context.selection.validIds]).toEqual([...whole.context.selection.validIds]);
          expect(mustPreserveFingerprint(split.context.mustPreserve)).toEqual(
            mustPreserveFingerprint(whole.context.mustPreserve),
          );
          expect(split.context.selection.conflicts).toEqual(whole.context.selection.conflicts);
          const honest = consolidate(whole.context);
          const bent = { ...honest, claims: honest.claims.slice(1) };
          for (const output of [honest, bent])
            expect(gateCandidate(split.context, output)).toEqual(gateCandidate(whole.context, output));
        },
      ),
      { numRuns: 80 },
    );
  });
});
