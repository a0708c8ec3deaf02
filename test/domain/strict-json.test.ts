import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { gateCandidateText } from "#domain/gate/index.ts";
import { firstDuplicateKey, parseStrictJson } from "#domain/strict-json.ts";
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
