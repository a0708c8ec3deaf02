import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { canonicalJson, decodeStoredEvent, eventHash, inputRefs, inputRoot } from "#domain/hashing.ts";
import { log } from "../support/builders.ts";

/** RFC 8785 Appendix B: IEEE 754 bit patterns and their required serialisation. */
const NUMBER_VECTORS: Array<[string, string]> = [
  ["0000000000000000", "0"],
  ["8000000000000000", "0"],
  ["0000000000000001", "5e-324"],
  ["8000000000000001", "-5e-324"],
  ["7fefffffffffffff", "1.7976931348623157e+308"],
  ["ffefffffffffffff", "-1.7976931348623157e+308"],
  ["4340000000000000", "9007199254740992"],
  ["c340000000000000", "-9007199254740992"],
  ["4430000000000000", "295147905179352830000"],
  ["44b52d02c7e14af5", "9.999999999999997e+22"],
  ["44b52d02c7e14af6", "1e+23"],
  ["44b52d02c7e14af7", "1.0000000000000001e+23"],
  ["444b1ae4d6e2ef4e", "999999999999999700000"],
  ["444b1ae4d6e2ef4f", "999999999999999900000"],
  ["444b1ae4d6e2ef50", "1e+21"],
  ["3eb0c6f7a0b5ed8c", "9.999999999999997e-7"],
  ["3eb0c6f7a0b5ed8d", "0.000001"],
  ["41b3de4355555553", "333333333.3333332"],
  ["41b3de4355555554", "333333333.33333325"],
  ["41b3de4355555555", "333333333.3333333"],
  ["41b3de4355555556", "333333333.3333334"],
  ["41b3de4355555557", "333333333.33333343"],
  ["becbf647612f3696", "-0.0000033333333333333333"],
  ["43143ff3c1cb0959", "1424953923781206.2"],
];

function fromBits(hex: string): number {
  const view = new DataView(new ArrayBuffer(8));
  view.setBigUint64(0, BigInt(`0x${hex}`));
  return view.getFloat64(0);
}

describe("RFC 8785 canonical JSON", () => {
  it.each(NUMBER_VECTORS)("serialises the double %s as %s", (bits, expected) => {
    expect(canonicalJson(fromBits(bits))).toBe(expected);
  });

  it("refuses NaN and Infinity", () => {
    expect(() => canonicalJson(fromBits("7fffffffffffffff"))).toThrow();
    expect(() => canonicalJson(fromBits("7ff0000000000000"))).toThrow();
  });

  it("matches the RFC's section 3.2.2 example", () => {
    const input = JSON.parse(
      '{"numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001], "string": "\\u20ac$\\u000F\\u000aA\'\\u0042\\u0022\\u005c\\\\\\"\\/", "literals": [null, true, false]}',
    );
    expect(canonicalJson(input)).toBe(
      '{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"string":"€$\\u000f\\nA\'B\\"\\\\\\\\\\"/"}',
    );
  });

  it("sorts keys by UTF-16 code units as section 3.2.3 shows", () => {
    const input = {
      "\u20ac": "Euro Sign",
      "\r": "Carriage Return",
      "\ufb33": "Hebrew Letter Dalet With Dagesh",
      "1": "One",
      "\ud83d\ude00": "Emoji: Grinning Face",
      "\u0080": "Control",
      "\u00f6": "Latin Small Letter O With Diaeresis",
    };
    // Read the order off the text: JSON.parse would move the integer-like key "1" first.
    const keys = [...canonicalJson(input).matchAll(/"((?:[^"\\]|\\.)*)":/g)].map((match) =>
      JSON.parse(`"${match[1]}"`),
    );
    expect(keys).toEqual(["\r", "1", "\u0080", "\u00f6", "\u20ac", "\ud83d\ude00", "\ufb33"]);
  });
});

/** Rebuilds a JSON value with every object's keys in a shuffled order. */
function shuffleKeys(value: unknown, seed: number): unknown {
  if (Array.isArray(value)) return value.map((item, index) => shuffleKeys(item, seed + index));
  if (value === null || typeof value !== "object") return value;
  const entries = Object.entries(value);
  const rotated = entries
    .map((entry, index) => [entries[(index + seed) % entries.length] ?? entry, index] as const)
    .map(([e]) => e);
  if (seed % 2 === 1) rotated.reverse();
  return Object.fromEntries(rotated.map(([key, inner]) => [key, shuffleKeys(inner, seed + 1)]));
}

describe("event hashing", () => {
  const [event] = log({
    eventId: "m-91",
    kind: "constraint",
    text: "Budget for alpha is 12,500 USD; never use vendor X.",
    assertions: [
      {
        key: "project:alpha/budget",
        value: { quantity: "12500.00", unit: "USD" },
        polarity: "affirmed",
        scope: "project:alpha",
      },
    ],
    source: "agent:planner",
  });

  it("is stable under any key order", () => {
    fc.assert(
      fc.property(fc.nat(1000), (seed) => {
        const [shuffled] = log(shuffleKeys(JSON.parse(JSON.stringify(event)), seed) as never);
        expect(eventHash(shuffled as never)).toBe(eventHash(event as never));
      }),
    );
  });

  it("ignores the sequence and applied defaults, not the content", () => {
    const [explicit] = log({
      eventId: "m-91",
      kind: "constraint",
      text: event?.text,
      assertions: event?.assertions,
      source: "agent:planner",
      trust: "user",
      sequence: 40,
    });
    expect(eventHash(explicit as never)).toBe(eventHash(event as never));
    const [changed] = log({
      eventId: "m-91",
      kind: "constraint",
      text: `${event?.text} `,
      assertions: event?.assertions,
      source: "agent:planner",
    });
    expect(eventHash(changed as never)).not.toBe(eventHash(event as never));
  });

  it("binds the input root to ids, sequences and hashes in sequence order", () => {
    const events = log(
      { eventId: "a", kind: "fact", text: "one" },
      { eventId: "b", kind: "fact", text: "two" },
    );
    const root = inputRoot(inputRefs(events));
    expect(root).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(inputRoot(inputRefs([...events].reverse()))).toBe(root);
    expect(inputRoot(inputRefs(events.map((e) => ({ ...e, sequence: e.sequence + 1 }))))).not.toBe(root);
  });
});

describe("decoding a stored event", () => {
  const body = JSON.stringify({ eventId: "d-1", kind: "note", text: "read back" });
  const hash = `sha256:${"b".repeat(64)}`;

  it("answers the same body, sequence and hash with the same frozen event; another sequence or hash decodes anew", () => {
    const first = decodeStoredEvent(body, 3, hash);
    expect(first).toMatchObject({ eventId: "d-1", kind: "note", text: "read back", sequence: 3 });
    expect(eventHash(first)).toBe(hash);
    expect(decodeStoredEvent(body, 3, hash)).toBe(first);
    expect(Object.isFrozen(first)).toBe(true);
    expect(() => {
      (first as { text: string }).text = "changed";
    }).toThrow(TypeError);
    const moved = decodeStoredEvent(body, 4, hash);
    expect(moved).not.toBe(first);
    expect(moved.sequence).toBe(4);
    const rehashed = decodeStoredEvent(body, 4, `sha256:${"c".repeat(64)}`);
    expect(eventHash(rehashed)).toBe(`sha256:${"c".repeat(64)}`);
  });

  it("refuses a damaged body every time it is read", () => {
    const damaged = JSON.stringify({ eventId: "d-2", kind: "not-a-kind", text: "x" });
    expect(() => decodeStoredEvent(damaged, 1, hash)).toThrow();
    expect(() => decodeStoredEvent(damaged, 1, hash)).toThrow();
  });
});
