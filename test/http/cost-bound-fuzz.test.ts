// The cost bound (CONTRACT §1 "Sizes"): random large requests of every kind an agent can send, each
// either refused at parse time with the oversized field named (and nothing written) or accepted
// with every cost driver within its bound. The work is measured by counting what the server must
// handle (the digits of each exact quantity, characters, scopes, words, blocked sources), never by
// timing, so the test holds on a loaded machine.
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MAX_QUERY_CHARACTERS } from "#app/recall-options.ts";
import { MAX_QUANTITY_CHARACTERS, parseDecimal } from "#domain/quantity.ts";
import { LIMITS, MAX_TEXT_BYTES } from "#domain/schemas.ts";
import { depsOverStore, temporaryStore } from "#harness/pipeline-builders.ts";
import { createApi } from "#http/api.ts";

const store = temporaryStore("cost");
afterAll(() => store.close());
const deps = depsOverStore(store);
const app = createApi({ deps });
const SUBJECT = "cost/fuzz";

beforeAll(async () => {
  await deps.events.append(SUBJECT, [
    { eventId: "seed-1", kind: "fact", text: "The subject exists.", trust: "user" },
  ]);
});

/** The most digits an accepted quantity's exact value may hold (numerator or denominator). */
const MAX_EXACT_DIGITS = 1000 + 64 + 2;

/** A size around a limit: mostly within it, often a little over, sometimes far over. */
const around = (limit: number) =>
  fc.oneof(
    { weight: 8, arbitrary: fc.integer({ min: 1, max: limit }) },
    { weight: 1, arbitrary: fc.integer({ min: limit + 1, max: limit * 2 }) },
    { weight: 1, arbitrary: fc.integer({ min: limit * 2, max: limit * 20 }) },
  );

/** Quantities however written: exponent form, longhand with leading or trailing zeros, many digits. */
const quantity = fc.oneof(
  fc.integer({ min: 0, max: 1200 }).map((zeros) => `0.${"0".repeat(zeros)}1`),
  fc.integer({ min: 0, max: 1200 }).map((zeros) => `1${"0".repeat(zeros)}`),
  fc.integer({ min: 1, max: 200 }).map((digits) => "7".repeat(digits)),
  fc.integer({ min: -3000, max: 3000 }).map((exponent) => `1.5e${exponent}`),
  fc.integer({ min: 0, max: 400_000 }).map((zeros) => `${"0".repeat(zeros)}2.5`),
);

interface Sized {
  event: Record<string, unknown>;
  /** The fields over their bound, as the refusal names them (a prefix of error.field). */
  over: string[];
}

const sizedEvent: fc.Arbitrary<Sized> = fc
  .record({
    key: around(LIMITS.keyCharacters),
    scope: around(LIMITS.scopeCharacters),
    source: around(LIMITS.sourceCharacters),
    textValue: around(MAX_TEXT_BYTES),
    scopes: around(LIMITS.scopesPerValue),
    quantity,
  })
  .map(({ key, scope, source, textValue, scopes, quantity }) => {
    const over: string[] = [];
    if (key > LIMITS.keyCharacters) over.push("events[0].assertions[0].key");
    if (scope > LIMITS.scopeCharacters) over.push("events[0].assertions[0].scope");
    if (source > LIMITS.sourceCharacters) over.push("events[0].source");
    if (textValue > MAX_TEXT_BYTES) over.push("events[0].assertions[1].value.text");
    if (scopes > LIMITS.scopesPerValue) over.push("events[0].assertions[2].value.scopes");
    if (!withinQuantityBounds(quantity)) over.push("events[0].assertions[3].value.quantity");
    const event = {
      eventId: `e-${key}-${scope}-${source}-${textValue}-${scopes}-${quantity.length}`,
      kind: "fact",
      text: "Sizes fuzz.",
      source: "s".repeat(source),
      assertions: [
        { key: "k".repeat(key), value: { bool: true }, polarity: "affirmed", scope: "c".repeat(scope) },
        { key: "t", value: { text: "w".repeat(textValue) }, polarity: "affirmed" },
        {
          key: "s",
          value: { scopes: Array.from({ length: scopes }, (_, i) => `r:${i}`) },
          polarity: "affirmed",
        },
        { key: "q", value: { quantity, unit: "m" }, polarity: "affirmed" },
      ],
    };
    return { event, over };
  });

/** An independent reading of the quantity bound: 64 significant digits, magnitude 1e±1000, 1,100 characters. */
function withinQuantityBounds(text: string): boolean {
  if (text.length > MAX_QUANTITY_CHARACTERS) return false;
  const [mantissa = "", exponentText = "0"] = text.split("e");
  const [whole = "", fraction = ""] = mantissa.split(".");
  const exponent = Number(exponentText);
  if (Math.abs(exponent) > 1000) return false;
  const digits = `${whole}${fraction}`;
  const first = digits.search(/[1-9]/);
  if (first < 0) return true;
  const magnitude = exponent + whole.length - first - 1;
  return digits.length - first <= 64 && Math.abs(magnitude) <= 1000;
}

/** Digits of the larger of numerator and denominator: the size of the exact arithmetic on it. */
function exactDigits(text: string): number {
  const value = parseDecimal(text);
  return Math.max(value.n.toString().length, value.d.toString().length);
}

async function send(path: string, init: RequestInit) {
  const response = await app.request(path, init);
  // biome-ignore lint/suspicious/noExplicitAny: assertions read whatever the answer holds
  const body: any = await response.json();
  return { status: response.status, body };
}

describe("every request costs a bounded amount of work, or is refused naming what is too large", () => {
  it("events: refused exactly when a field is over its size, the first such field named; accepted ones stay within the counted bounds", async () => {
    const seen = { accepted: 0, refused: 0 };
    await fc.assert(
      fc.asyncProperty(sizedEvent, async ({ event, over }) => {
        const before = await deps.events.snapshot(SUBJECT);
        const answer = await send(`/v1/subjects/${encodeURIComponent(SUBJECT)}/events`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ events: [event] }),
        });
        if (over.length > 0) {
          expect(answer.status).toBe(400);
          expect(over.some((field) => String(answer.body.error.field).startsWith(field))).toBe(true);
          expect(await deps.events.snapshot(SUBJECT)).toEqual(before);
          seen.refused++;
          return;
        }
        expect(answer.status).toBe(200);
        seen.accepted++;
        // Counted work of what was accepted: each cost driver is within its bound.
        const stored = (await deps.events.eventsById(SUBJECT, [event.eventId as string])).get(
          event.eventId as string,
        );
        const assertions = stored?.event.assertions ?? [];
        for (const assertion of assertions) {
          expect([...assertion.key].length).toBeLessThanOrEqual(LIMITS.keyCharacters);
          expect([...assertion.scope].length).toBeLessThanOrEqual(LIMITS.scopeCharacters);
          const value = assertion.value;
          if ("quantity" in value) expect(exactDigits(value.quantity)).toBeLessThanOrEqual(MAX_EXACT_DIGITS);
          if ("text" in value) expect(Buffer.byteLength(value.text)).toBeLessThanOrEqual(MAX_TEXT_BYTES);
          if ("scopes" in value) expect(value.scopes.length).toBeLessThanOrEqual(LIMITS.scopesPerValue);
        }
      }),
      { numRuns: 100, seed: 2323 },
    );
    // Both sides of the bound were exercised.
    expect(seen.accepted).toBeGreaterThan(5);
    expect(seen.refused).toBeGreaterThan(5);
  });

  it("trust policies: more blocked sources than the bound are refused; what is accepted checks at most 256 patterns per event", async () => {
    await fc.assert(
      fc.asyncProperty(
        around(LIMITS.blockedSources),
        around(LIMITS.blockedSourceCharacters),
        async (count, length) => {
          const blockedSources = Array.from({ length: count }, (_, i) => `${i}:`.padEnd(length, "x"));
          const answer = await send(`/v1/subjects/${encodeURIComponent(SUBJECT)}/policy`, {
            method: "PUT",
            headers: { "content-type": "application/json" },
            body: JSON.stringify({ minTrust: "tool", blockedSources }),
          });
          const over = count > LIMITS.blockedSources || length > LIMITS.blockedSourceCharacters;
          expect(answer.status).toBe(over ? 400 : 200);
          if (over) expect(answer.body.error.field).toMatch(/^blockedSources/);
          const stored = await deps.events.trustPolicy(SUBJECT);
          // The work of a recall's source check: patterns × characters, both bounded.
          expect(stored.blockedSources.length * LIMITS.blockedSourceCharacters).toBeLessThanOrEqual(
            LIMITS.blockedSources * LIMITS.blockedSourceCharacters,
          );
        },
      ),
      { numRuns: 30, seed: 23 },
    );
    await send(`/v1/subjects/${encodeURIComponent(SUBJECT)}/policy`, {
      method: "PUT",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ minTrust: "tool", blockedSources: [] }),
    });
  });

  it("recall queries: over 1,000 characters are refused naming query; any number of words below it is answered (cut to its most informative)", async () => {
    const word = fc.stringMatching(/^[a-z]{1,12}$/);
    // A subject of its own, with a few events: the bound under test is the query's.
    const subject = "cost/query";
    await deps.events.append(subject, [
      { eventId: "q-1", kind: "fact", text: "Backups run nightly.", trust: "user" },
    ]);
    await fc.assert(
      fc.asyncProperty(fc.array(word, { maxLength: 1200 }), async (words) => {
        const query = words.join(" ");
        const answer = await send(
          `/v1/subjects/${encodeURIComponent(subject)}/recall?budget=200&query=${encodeURIComponent(query)}`,
          {},
        );
        const over = query.length > MAX_QUERY_CHARACTERS;
        expect(answer.status).toBe(over ? 400 : 200);
        if (over) expect(answer.body.error.field).toBe("query");
      }),
      { numRuns: 60, seed: 499 },
    );
  });
});
