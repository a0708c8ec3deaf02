import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { parseObjectPaced } from "#domain/paced-parse.ts";
import { EventId } from "#domain/schemas.ts";
import { parseStrictJson, parseStrictJsonPaced } from "#domain/strict-json.ts";
import { decodeStrictUtf8, decodeStrictUtf8Paced } from "#domain/utf8.ts";

/**
 * The paced parses and decode (a server thread handed megabytes lets other requests run between
 * steps) give exactly what the one-step ones give: the same value, the same refusal.
 */
let pauses = 0;
const countingPause = () => {
  pauses++;
  return Promise.resolve();
};

async function same(text: string) {
  expect(await parseStrictJsonPaced(text, countingPause)).toEqual(parseStrictJson(text));
}

describe("parseStrictJsonPaced", () => {
  it("agrees with parseStrictJson on the edges of the outer arrays it splits", async () => {
    for (const text of [
      '{"events":[]}',
      '{"events":[ ]}',
      '{"events":[,1]}',
      '{"events":[1,]}',
      '{"events":[1,,2]}',
      '{"events":[1] "x":2}',
      '{"events":[1]} x',
      '{"events":[1],"events":[2]}',
      '{"events":[{"a":1,"a":2}]}',
      '{"a":[1,2],"b":[3],"c":{"d":[4]}}',
      '{"__proto__":[1,2],"x":[3]}',
      '{"ev\\u0065nts":[1,2]}',
      '{"events":[[1,2],[3,[4]]],"n":null}',
      '{"events":["a,]","[b\\"]", "\\\\"]}',
      '\uFEFF{"events":[1, 2]}',
      "[1,2,3]",
      '"text"',
      '{"events":[{"text":"x"}, {"text":"y"}]',
    ])
      await same(text);
  });

  it("agrees with parseStrictJson on arbitrary JSON, whitespace and damage", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.dictionary(fc.string(), fc.oneof(fc.array(fc.jsonValue()), fc.jsonValue())),
        fc.constantFrom("", " ", "\n  "),
        fc.nat(),
        fc.constantFrom("none", "cut", "comma", "bracket"),
        async (object, space, at, damage) => {
          let text = JSON.stringify(object, null, space);
          const i = text.length === 0 ? 0 : at % text.length;
          if (damage === "cut") text = text.slice(0, i);
          if (damage === "comma") text = `${text.slice(0, i)},${text.slice(i)}`;
          if (damage === "bracket") text = `${text.slice(0, i)}]${text.slice(i)}`;
          await same(text);
        },
      ),
      { numRuns: 500 },
    );
  });

  it("pauses between the elements of a large batch and the slices of its text", async () => {
    const events = Array.from({ length: 1000 }, (_, i) => ({ eventId: `e${i}`, text: "x".repeat(500) }));
    const text = JSON.stringify({ events });
    pauses = 0;
    const parsed = await parseStrictJsonPaced(text, countingPause);
    expect(parsed).toEqual({ ok: true, value: { events } });
    expect(pauses).toBeGreaterThanOrEqual(1000);
  });
});

describe("decodeStrictUtf8Paced", () => {
  it("decodes megabytes a step at a time, joining a sequence split between steps, and refuses the same bytes", async () => {
    const text = "añ€😀".repeat(400_000);
    const bytes = new TextEncoder().encode(text);
    expect(bytes.length).toBeGreaterThan(3 * 1024 * 1024);
    expect(await decodeStrictUtf8Paced(bytes, countingPause)).toEqual({ ok: true, text });
    const bad = bytes.slice();
    bad[2_500_000] = 0xff;
    expect(await decodeStrictUtf8Paced(bad, countingPause)).toEqual(decodeStrictUtf8(bad));
    expect(decodeStrictUtf8(bad).ok).toBe(false);
  });
});

describe("parseObjectPaced", () => {
  const Schema = z.object({
    id: z.string().min(1),
    ids: z.array(EventId),
    refs: z.array(z.object({ eventId: EventId, hash: z.string() })),
    capped: z.array(z.number()).max(3),
    optional: z.array(z.string()).optional(),
  });
  const valid = {
    id: "a",
    ids: Array.from({ length: 1000 }, (_, i) => `e${i}`),
    refs: Array.from({ length: 600 }, (_, i) => ({ eventId: `e${i}`, hash: `h${i}`, extra: true })),
    capped: [1, 2],
    unknown: "dropped",
  };

  async function sameAs(raw: unknown) {
    const whole = Schema.safeParse(raw);
    if (whole.success) expect(await parseObjectPaced(Schema, raw, countingPause)).toEqual(whole.data);
    else await expect(parseObjectPaced(Schema, raw, countingPause)).rejects.toThrow(whole.error.message);
  }

  it("checks each large array a step at a time, with the schema's value and the schema's refusal", async () => {
    pauses = 0;
    await sameAs(valid);
    expect(pauses).toBeGreaterThanOrEqual(6);
    await sameAs({ ...valid, optional: ["x"] });
    await sameAs({ ...valid, ids: [...valid.ids, "bad id"] });
    await sameAs({ ...valid, refs: [{ eventId: "e1" }] });
    await sameAs({ ...valid, capped: [1, 2, 3, 4] });
    await sameAs({ ...valid, id: "" });
    await sameAs({ ...valid, ids: "none" });
    await sameAs([valid]);
    await sameAs(null);
  });
});
