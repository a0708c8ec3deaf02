// The worst request of each kind the contract accepts (CONTRACT §1 "Sizes", §6): every field at
// its size limit, built to cost the server the most. bench/healthz-under-worst.ts runs them against
// `memgate serve`; test/http/cost-ratio-fuzz.test.ts compares their cost with a plain append's.
import { MAX_QUERY_CHARACTERS, MAX_QUERY_WORDS } from "#app/recall-options.ts";
import { MAX_QUANTITY_CHARACTERS } from "#domain/quantity.ts";
import { LIMITS } from "#domain/schemas.ts";
import { MAX_EVENTS_PER_REQUEST, MAX_REQUEST_BYTES } from "#runtime/settings.ts";

/** `text` padded (or cut) to exactly `length` characters with `fill` repeated. */
export function padded(text: string, length: number, fill = "x"): string {
  return (text + fill.repeat(Math.max(0, length - text.length))).slice(0, length);
}

/** Compound units of up to 64 characters: each quantity is converted through all of their factors. */
export const COMPOUND_UNITS = [
  "kW*h/km*kg^2*m^-3*s^2/mol*cd*K*A^-1*lb*ft^2/gal*psi*mi/hr/N",
  "mW*h/(km*kg^2)*m^-3*s^2/(mol*cd*K)*lbf*ft^2/gal*psi*mi/hour",
  "MJ*ms^2/(nmi*ug^3)*mm^-2/(mmol*lx)*ozf*inch^3/cup*bar*yd/min",
  "GW*d/(cm*mg)*dm^-3*us^2/(kmol*cd*degC)*ton*acre/L*atm*ft/week",
] as const;

/** Sources of the large subject's events: 128 characters, the last ones telling them apart. */
export function longSource(n: number): string {
  return `${padded(`agent:${"planner-".repeat(20)}`, LIMITS.sourceCharacters - 4)}-${String(n).padStart(3, "0")}`;
}

/** A quantity at its bounds: 64 significant digits, written longhand to 1,100 characters, magnitude −936. */
function longhandQuantity(n: number): string {
  const digits = padded(String(n + 1).repeat(64), 64, "7").replace(/^0/, "9");
  const fraction = `0.${"0".repeat(935)}${digits}`;
  return "0".repeat(MAX_QUANTITY_CHARACTERS - fraction.length) + fraction;
}

/** 64 scopes per value: the most a value holds. */
function manyScopes(n: number): string[] {
  return Array.from(
    { length: LIMITS.scopesPerValue },
    (_, k) => `repo:r${(n + k) % 97}:${k % 2 ? "read" : "write"}`,
  );
}

/** Text holding numbers, dates, ids and content words (what the gate and mentions read). */
function wordyText(n: number, length: number): string {
  const sentence = `On 2026-11-${String((n % 28) + 1).padStart(2, "0")} agent:planner@proj-${n % 40} set item ${n} of alpha to 12,500 USD for 30 days; never exceed ${n % 50} km unless approved. `;
  return padded(sentence.repeat(Math.ceil(length / sentence.length)), length);
}

/**
 * One append at the size limits: 1,000 events in just under 5 MiB of JSON. Every event holds a key
 * of 256 and scopes of 128 characters, a source of 128, a quantity of 64 significant digits
 * written longhand to 1,100 characters in a compound unit, a value of 64 scopes, a `{text}` value
 * and a text full of numbers, dates and ids; each key is shared by one event in 16 with other
 * values, so every batch contradicts itself and the subject's earlier batches (the conflict index
 * and the epoch's work). Event ids are `batch`-unique: each body appends 1,000 new events.
 */
export function worstAppendBody(batch: number): string {
  const scope = padded("project:alpha/", LIMITS.scopeCharacters, "s");
  const event = (i: number, textLength: number) => {
    const n = batch * MAX_EVENTS_PER_REQUEST + i;
    return {
      eventId: `w${batch}-${i}`,
      kind: i % 5 === 0 ? "constraint" : "fact",
      text: wordyText(n, textLength),
      source: longSource(i % 8),
      occurredAt: "2026-11-20T10:00:00.123+05:30",
      trust: "verified",
      assertions: [
        {
          key: padded(`project:alpha/budget-${i % 16}/`, LIMITS.keyCharacters, "k"),
          value: { quantity: longhandQuantity(n), unit: COMPOUND_UNITS[i % COMPOUND_UNITS.length] },
          polarity: "affirmed",
          scope,
        },
        {
          key: padded(`project:alpha/access-${i % 16}/`, LIMITS.keyCharacters, "a"),
          value: { scopes: manyScopes(n) },
          polarity: i % 2 === 0 ? "affirmed" : "negated",
          scope,
        },
        {
          key: padded(`project:alpha/note-${i % 16}/`, LIMITS.keyCharacters, "n"),
          value: { text: wordyText(n + 1, 400) },
          polarity: "affirmed",
          scope,
        },
      ],
    };
  };
  const bodyOf = (textLength: number) =>
    JSON.stringify({
      events: Array.from({ length: MAX_EVENTS_PER_REQUEST }, (_, i) => event(i, textLength)),
    });
  // The text length that brings the body closest under the limit (every character here is one byte).
  const base = bodyOf(0).length;
  const textLength = Math.floor((MAX_REQUEST_BYTES - 1024 - base) / MAX_EVENTS_PER_REQUEST);
  return bodyOf(textLength);
}

/** A plain append: one short note, the unit the cost bound is stated in. */
export function plainAppendBody(n: number): string {
  return JSON.stringify({ events: [{ eventId: `plain-${n}`, kind: "note", text: `Plain note ${n}.` }] });
}

/**
 * The longest recall query: 16 words in 256 characters, common words of the large subject's log
 * (each matching many of its cold events) and long ones that match none.
 */
export const WORST_QUERY = (() => {
  const common = ["chatted", "topic", "team", "follow", "ticket", "item", "costs", "usd"];
  const long = (k: number) => `unmatchedsearchword${k}`;
  const words = [...common, ...Array.from({ length: MAX_QUERY_WORDS - common.length }, (_, k) => long(k))];
  const query = words.join(" ");
  return padded(query, MAX_QUERY_CHARACTERS, "q");
})();

/**
 * A trust policy at its size limit: 256 blocked sources of 128 characters, each a prefix sharing
 * all but its last characters with the large subject's sources (every event's source is compared
 * nearly to the end against each), and 64 `latest` rules whose key and scope globs hold 256
 * characters of many parts. `blocking` adds one that blocks the sources ending in that number,
 * so alternating policies move the epoch.
 */
export function worstPolicy(blocking: number | null) {
  const blockedSources = Array.from({ length: LIMITS.blockedSources }, (_, k) =>
    k === 0 && blocking !== null
      ? longSource(blocking)
      : `${padded(longSource(0).slice(0, -4), LIMITS.blockedSourceCharacters - 5)}~${String(k).padStart(3, "0")}*`,
  );
  const glob = (prefix: string, k: number) =>
    padded(`${prefix}*${"a*".repeat(100)}`, LIMITS.globCharacters - 4, "*") +
    `z${String(k).padStart(2, "0")}*`;
  const latest = Array.from({ length: LIMITS.latestRules }, (_, k) => ({
    key: glob("project:", k),
    scope: glob("project:", k),
  }));
  return { minTrust: "tool", blockedSources, latest };
}
