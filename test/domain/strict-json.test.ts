import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { gateCandidateText } from "#domain/gate/index.ts";
import { firstDuplicateKey, parseStrictJson, parseStrictJsonPaced } from "#domain/strict-json.ts";
import { firstInvalidUtf8 } from "#domain/utf8.ts";
import { candidate, codes, contextOf, fact, log, settled } from "../support/builders.ts";

describe("strict candidate JSON", () => {
  it("finds a key written twice in one object, at any depth, after decoding escapes", () => {
    expect(firstDuplicateKey('{"a":1,"b":{"c":1,"\\u0063":2}}')).toEqual({ key: "c", path: "$.b" });
    expect(firstDuplicateKey('{"claims":[{"key":"k"},{"key":"k"}]}')).toBeNull();
    expect(firstDuplicateKey('{"a":"{\\"a\\":1,\\"a\\":2}"}')).toBeNull();
    expect(firstDuplicateKey('[{"x":1},{"x":2,"y":[{"x":1,"x":3}]}]')).toEqual({
      key: "x",
      path: "$[1].y[0]",
    });
  });

  it("ends on text that is not JSON: a string left open stops the pass, a duplicate is reported only for JSON", () => {
    for (const text of ['"mS#', '{"a":1,"b', '{"a":"x\\', '["\\"]'])
      expect(firstDuplicateKey(text), text).toBeNull();
    expect(parseStrictJson('"mS#')).toMatchObject({
      ok: false,
      problem: expect.stringMatching(/not valid JSON/),
    });
    expect(parseStrictJson('"mS#')).not.toHaveProperty("duplicate");
    expect(parseStrictJson('{"a":1,"a":2}')).toMatchObject({ ok: false, duplicate: { key: "a", path: "$" } });
  });

  it("never reports a duplicate in random JSON that has none", () => {
    fc.assert(
      fc.property(fc.json({ depthSize: "small" }), (text) => {
        const value = JSON.parse(text);
        // JSON.stringify never writes a key twice, so a round trip has none.
        expect(firstDuplicateKey(JSON.stringify(value))).toBeNull();
      }),
    );
  });

  it("finds a key written twice in random JSON, whatever its characters and escapes, with its object's path", () => {
    const trickyKey = fc.string({
      unit: fc.constantFrom("a", '"', "\\", "\u00e9", "\n", "}", "[", ",", ":"),
    });
    fc.assert(
      fc.property(
        fc.array(fc.json({ depthSize: "small" }), { maxLength: 4 }),
        fc.dictionary(trickyKey, fc.jsonValue({ depthSize: "small" }), { minKeys: 1, maxKeys: 5 }),
        fc.nat(),
        (before, object, pick) => {
          const keys = Object.keys(object);
          const key = keys[pick % keys.length] as string;
          const once = JSON.stringify(object);
          const twice = `${once.slice(0, -1)},${JSON.stringify(key).replace(/a/g, "\\u0061")}:1}`;
          const text = `{"events":[${[...before, twice].join(",")}]}`;
          expect(firstDuplicateKey(text)).toEqual({ key, path: `$.events[${before.length}]` });
        },
      ),
    );
  });

  it("refuses trailing text and duplicate keys as schema-invalid, accepts a byte order mark", () => {
    const events = log(fact("m-1", "budget", { quantity: "12500", unit: "USD" }));
    const context = contextOf(events);
    const honest = candidate({ claims: [settled("budget", { quantity: "12500", unit: "USD" }, ["m-1"])] });
    const text = JSON.stringify(honest);
    expect(gateCandidateText(context, `\uFEFF${text}`).verdict).toBe("pass");
    expect(codes(gateCandidateText(context, `${text} trailing`))).toEqual(["schema-invalid"]);
    const twice = text.replace('"summary":""', '"summary":"","summary":"Budget is 99 USD."');
    const report = gateCandidateText(context, twice);
    expect(codes(report)).toEqual(["schema-invalid"]);
    expect(report.reasons[0]?.detail).toMatch(/duplicate key "summary"/);
    expect(parseStrictJson("[1] [2]").ok).toBe(false);
  });

  it("refuses a candidate nested deeper than 32 levels or with an unbounded quantity as schema-invalid", () => {
    const context = contextOf(log(fact("m-1", "budget", { quantity: "12500", unit: "USD" })));
    const deep = `{"claims":[],"pending":[],"unresolvedConflicts":[],"summary":"","x":${"[".repeat(40)}${"]".repeat(40)}}`;
    expect(gateCandidateText(context, deep).reasons[0]?.detail).toMatch(/nests deeper than 32/);
    const huge = candidate({ claims: [settled("budget", { quantity: "1e5000", unit: "USD" }, ["m-1"])] });
    expect(codes(gateCandidateText(context, JSON.stringify(huge)))).toEqual(["schema-invalid"]);
  });
});

describe("strict JSON with a depth bound", () => {
  const nested = (levels: number) => `${"[".repeat(levels)}${"]".repeat(levels)}`;

  it("accepts text nesting as deep as the bound, refuses one level more naming where, before parsing", () => {
    expect(parseStrictJson(nested(34), { maxDepth: 34 })).toEqual({
      ok: true,
      value: JSON.parse(nested(34)),
    });
    expect(parseStrictJson(nested(35), { maxDepth: 34 })).toMatchObject({
      ok: false,
      problem: "nests deeper than 34 levels of JSON (at $[0][0][0][0][0][0]…)",
      tooDeep: { path: "$[0][0][0][0][0][0]…" },
    });
    // Where: the first levels, keys cut short, so a path of long keys stays a line.
    const long = "k".repeat(1000);
    expect(parseStrictJson(`{"events":[{"a":1},{"${long}":[[1]]}]}`, { maxDepth: 4 })).toMatchObject({
      tooDeep: { path: `$.events[1].${"k".repeat(40)}[0]` },
    });
    // Text that never closes, or is no JSON past the depth, is refused by its depth all the same.
    expect(parseStrictJson("[".repeat(5_000_000), { maxDepth: 34 })).toHaveProperty("tooDeep");
    // Without a bound nothing changes.
    expect(parseStrictJson(nested(100)).ok).toBe(true);
  });

  it("reads on past a duplicate key to the depth, so deep text after one is never parsed", () => {
    const text = `{"a":1,"a":2,"b":${nested(40)}}`;
    expect(parseStrictJson(text, { maxDepth: 34 })).toHaveProperty("tooDeep");
    expect(parseStrictJson(`{"a":1,"a":2,"b":${nested(3)}}`, { maxDepth: 34 })).toMatchObject({
      duplicate: { key: "a", path: "$" },
    });
  });

  it("the paced parse gives the same answers under a bound, and stops its scan at the first level too deep", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.json({ depthSize: "medium" }),
        fc.integer({ min: 1, max: 6 }),
        async (text, maxDepth) => {
          expect(await parseStrictJsonPaced(text, () => Promise.resolve(), { maxDepth })).toEqual(
            parseStrictJson(text, { maxDepth }),
          );
        },
      ),
      { numRuns: 300 },
    );
    let pauses = 0;
    const deep = `{"events":[${nested(2_600_000)}]}`;
    const paced = await parseStrictJsonPaced(deep, async () => void pauses++, { maxDepth: 34 });
    expect(paced).toMatchObject({ ok: false, tooDeep: { path: "$.events[0][0][0][0][0]…" } });
    expect(pauses).toBe(0);
  });
});

describe("UTF-8 validation", () => {
  it("finds the first invalid byte: overlongs, surrogates, truncated and stray continuation bytes", () => {
    const bytes = (...values: number[]) => new Uint8Array(values);
    expect(firstInvalidUtf8(new TextEncoder().encode("héllo 记 🎉"))).toBe(15);
    expect(firstInvalidUtf8(bytes(0x61, 0xc0, 0xaf))).toBe(1); // overlong
    expect(firstInvalidUtf8(bytes(0x61, 0xed, 0xa0, 0x80))).toBe(1); // a surrogate
    expect(firstInvalidUtf8(bytes(0x61, 0x62, 0xe8, 0xae))).toBe(2); // truncated
    expect(firstInvalidUtf8(bytes(0x80))).toBe(0); // stray continuation
    expect(firstInvalidUtf8(bytes(0xf4, 0x90, 0x80, 0x80))).toBe(0); // beyond U+10FFFF
  });

  it("agrees with the platform's strict decoder on random bytes", () => {
    const strict = new TextDecoder("utf-8", { fatal: true });
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 24 }), (data) => {
        let valid = true;
        try {
          strict.decode(data);
        } catch {
          valid = false;
        }
        expect(firstInvalidUtf8(data) === data.length).toBe(valid);
      }),
      { numRuns: 2000 },
    );
  });
});
