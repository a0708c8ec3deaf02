// The worst request of each kind the contract accepts (CONTRACT §1 "Sizes", §6): every field at
// its size limit, built to cost the server the most, and the same shapes around each limit.
// bench/healthz-under-worst.ts runs the worst against `memgate serve`; test/http/cost-ratio-fuzz.test.ts
// compares the cost of requests at and over each limit with a plain append's.
import { MAX_QUERY_CHARACTERS } from "#app/recall-options.ts";
import { MAX_EXPONENT, MAX_QUANTITY_CHARACTERS, MAX_SIGNIFICANT_DIGITS } from "#domain/quantity.ts";
import { LIMITS, MAX_TEXT_BYTES } from "#domain/schemas.ts";
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

/** How a quantity is written: at every bound, or over one of them. */
export type QuantityShape = "at-limits" | "over-digits" | "over-magnitude" | "over-length";

/**
 * A quantity at its bounds (64 significant digits written longhand to 1,100 characters, magnitude
 * −936) or just over one: 65 digits, magnitude −1001 (`"0.000…0001"`), or 1,101 characters.
 */
export function quantityOf(shape: QuantityShape, n: number): string {
  const digits = padded(String(n + 1).repeat(64), MAX_SIGNIFICANT_DIGITS, "7").replace(/^0/, "9");
  switch (shape) {
    case "over-digits":
      return `0.${"0".repeat(900)}${digits}3`;
    case "over-magnitude":
      return `0.${"0".repeat(MAX_EXPONENT)}1`;
    default: {
      const fraction = `0.${"0".repeat(935)}${digits}`;
      const length = MAX_QUANTITY_CHARACTERS + (shape === "over-length" ? 1 : 0);
      return "0".repeat(length - fraction.length) + fraction;
    }
  }
}

/** The size of each field of an event: each limit's value makes the worst accepted event. */
export interface EventSizes {
  /** Characters of the event's text (one byte each). */
  text: number;
  key: number;
  scope: number;
  source: number;
  /** Characters of the `{text}` value. */
  textValue: number;
  scopes: number;
  quantity: QuantityShape;
  unit: number;
}

export const SIZE_LIMITS: EventSizes = {
  text: MAX_TEXT_BYTES,
  key: LIMITS.keyCharacters,
  scope: LIMITS.scopeCharacters,
  source: LIMITS.sourceCharacters,
  textValue: LIMITS.textValueBytes,
  scopes: LIMITS.scopesPerValue,
  quantity: "at-limits",
  unit: LIMITS.unitCharacters,
};

/**
 * An event with each field of the given size, built to cost the most: a text full of numbers,
 * dates and ids; a quantity in a compound unit (converted through all its factors); a value of
 * scopes; a `{text}` value; its keys shared by one event in 16 with other values (`n`), so events
 * contradict each other (the conflict index and the epoch's work).
 */
export function sizedEvent(eventId: string, n: number, sizes: EventSizes) {
  const scope = padded("project:alpha/", sizes.scope, "s");
  const unit = padded(COMPOUND_UNITS[n % COMPOUND_UNITS.length] as string, sizes.unit, "m");
  return {
    eventId,
    kind: n % 5 === 0 ? "constraint" : "fact",
    text: wordyText(n, sizes.text),
    source: padded(longSource(n % 8), sizes.source, "s"),
    occurredAt: "2026-11-20T10:00:00.123+05:30",
    trust: "verified",
    assertions: [
      {
        key: padded(`project:alpha/budget-${n % 16}/`, sizes.key, "k"),
        value: { quantity: quantityOf(sizes.quantity, n), unit },
        polarity: "affirmed",
        scope,
      },
      {
        key: padded(`project:alpha/access-${n % 16}/`, sizes.key, "a"),
        value: { scopes: manyScopes(n, sizes.scopes) },
        polarity: n % 2 === 0 ? "affirmed" : "negated",
        scope,
      },
      {
        key: padded(`project:alpha/note-${n % 16}/`, sizes.key, "n"),
        value: { text: wordyText(n + 1, sizes.textValue) },
        polarity: "affirmed",
        scope,
      },
    ],
  };
}

/** `count` scopes per value. */
function manyScopes(n: number, count: number): string[] {
  return Array.from({ length: count }, (_, k) => `repo:r${(n + k) % 97}:${k % 2 ? "read" : "write"}:${k}`);
}

/** Text holding numbers, dates, ids and content words (what the gate and mentions read). */
function wordyText(n: number, length: number): string {
  const sentence = `On 2026-11-${String((n % 28) + 1).padStart(2, "0")} agent:planner@proj-${n % 40} set item ${n} of alpha to 12,500 USD for 30 days; never exceed ${n % 50} km unless approved. `;
  return padded(sentence.repeat(Math.ceil(length / sentence.length)), length);
}

/**
 * One append at the size limits: `count` events (default 1,000) in just under 5 MiB of JSON, each
 * a `sizedEvent` at every limit but its texts, which share what is left of the 5 MiB (at most
 * 16 KiB each). Event ids are `batch`-unique: each body appends new events.
 */
export function worstAppendBody(batch: number, count = MAX_EVENTS_PER_REQUEST): string {
  const bodyOf = (text: number, textValue: number) =>
    JSON.stringify({
      events: Array.from({ length: count }, (_, i) =>
        sizedEvent(`w${batch}-${i}`, batch * MAX_EVENTS_PER_REQUEST + i, { ...SIZE_LIMITS, text, textValue }),
      ),
    });
  // The text lengths that bring the body closest under the limit (every character here is one byte).
  const room = Math.floor((MAX_REQUEST_BYTES - 1024 - bodyOf(0, 0).length) / count);
  const text = Math.min(MAX_TEXT_BYTES, Math.ceil(room / 2));
  return bodyOf(text, Math.min(LIMITS.textValueBytes, room - text));
}

/** Where the deepest body nests: the whole of it, inside `{"events":[…]}`, or as one NDJSON line. */
export type DeepShape = "bare" | "in-events" | "ndjson";

/**
 * The deepest body a request can carry, refused (400) whatever it holds: 5 MiB of JSON nesting
 * 2.6 million levels (`[[[…]]]`), bare, as the first event of `{"events":[…]}`, or as one NDJSON
 * line. Parsed whole before its depth was checked it held the serving thread for seconds.
 */
export function deepestBody(shape: DeepShape = "bare"): string {
  const [open, close] = shape === "in-events" ? ['{"events":[', "]}"] : ["", ""];
  const levels = Math.floor((MAX_REQUEST_BYTES - open.length - close.length) / 2);
  return `${open}${"[".repeat(levels)}${"]".repeat(levels)}${close}`;
}

/** A body of `length` bytes refused at once by its shape (`events` is a string), no deeper than 1. */
export function flatRefusedBody(length: number): string {
  const shell = JSON.stringify({ events: "" });
  return JSON.stringify({ events: "x".repeat(length - shell.length) });
}

/** A plain append: one short note, the unit the cost bound is stated in. */
export function plainAppendBody(n: number): string {
  return JSON.stringify({ events: [{ eventId: `plain-${n}`, kind: "note", text: `Plain note ${n}.` }] });
}

/** The most words the worst query holds: as many as fit its longest length with their spaces. */
export const WORST_QUERY_WORDS = 96;

/**
 * A recall query of `words` words in `length` characters (the longest allowed: 1,000 characters):
 * common words of the large subject's log (each matching many of its cold events, the ones the
 * search keeps last), then long ones that match none, the last padded to the length.
 */
export function sizedQuery(words = WORST_QUERY_WORDS, length = MAX_QUERY_CHARACTERS): string {
  const common = ["chatted", "topic", "team", "follow", "ticket", "item", "costs", "usd"];
  const all = Array.from({ length: words }, (_, k) => common[k] ?? `unmatchedsearchword${k}`);
  return padded(all.join(" "), length, "q");
}

export const WORST_QUERY = sizedQuery();

/** The size of a trust policy: each limit's value makes the worst accepted one. */
export interface PolicySizes {
  blockedSources: number;
  sourceLength: number;
  rules: number;
  globLength: number;
}

export const POLICY_LIMITS: PolicySizes = {
  blockedSources: LIMITS.blockedSources,
  sourceLength: LIMITS.blockedSourceCharacters,
  rules: LIMITS.latestRules,
  globLength: LIMITS.globCharacters,
};

/**
 * A trust policy of the given size, built to cost the most: blocked sources that are prefixes
 * sharing all but their last characters with the large subject's sources (every event's source is
 * compared nearly to the end against each), `latest` rules whose key and scope globs are made of
 * many parts. `blocking` makes the first block the sources ending in that number, so alternating
 * policies move the epoch.
 */
export function sizedPolicy(blocking: number | null, sizes: PolicySizes = POLICY_LIMITS) {
  const blockedSources = Array.from({ length: sizes.blockedSources }, (_, k) =>
    k === 0 && blocking !== null
      ? longSource(blocking)
      : `${padded(longSource(0).slice(0, -4), sizes.sourceLength - 5)}~${String(k % 1000).padStart(3, "0")}*`,
  );
  const glob = (k: number) =>
    `${padded(`project:*${"a*".repeat(100)}`, sizes.globLength - 4, "*")}z${String(k % 100).padStart(2, "0")}*`;
  const latest = Array.from({ length: sizes.rules }, (_, k) => ({ key: glob(k), scope: glob(k) }));
  return { minTrust: "tool", blockedSources, latest };
}

/** A trust policy at its size limit. */
export function worstPolicy(blocking: number | null) {
  return sizedPolicy(blocking);
}
