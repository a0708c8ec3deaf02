import { z } from "zod";
import { canonicalDate } from "./dates.ts";
import {
  DECIMAL_PATTERN,
  isBoundedDecimal,
  MAX_EXPONENT,
  MAX_QUANTITY_CHARACTERS,
  MAX_SIGNIFICANT_DIGITS,
} from "./quantity.ts";

/**
 * The public formats of CONTRACT.md as zod schemas. Every boundary (files, API bodies, queue
 * messages, model answers, store items) is parsed through these; messages name the field and the fix.
 */

const utf8 = new TextEncoder();

/**
 * One zod issue on one line, the field first (`claims.0.value.quantity: quantity must be a decimal
 * string …`), as every refusal of bad input reads; `whole` names the value itself when the issue is
 * about all of it. (z.prettifyError writes every issue on two lines, for a terminal.)
 */
export function describeIssue(issue: z.core.$ZodIssue, whole: string): string {
  return `${issue.path.length > 0 ? issue.path.map(String).join(".") : whole}: ${issue.message}`;
}

/**
 * The path to the first string holding a lone UTF-16 surrogate, or null. Such text has no RFC 8785
 * form (it cannot be hashed) and no meaning; it is refused at the boundary with its field named.
 */
export function loneSurrogatePath(
  value: unknown,
  path: (string | number)[] = [],
): (string | number)[] | null {
  // Fast path first: nearly every value is well-formed, and this check allocates nothing.
  if (!holdsLoneSurrogate(value)) return null;
  if (typeof value === "string") return path;
  const entries: Array<[string | number, unknown]> = Array.isArray(value)
    ? [...value.entries()]
    : Object.entries(value as object);
  for (const [key, item] of entries) {
    if (typeof key === "string" && !key.isWellFormed()) return path;
    const found = loneSurrogatePath(item, [...path, key]);
    if (found) return found;
  }
  return path;
}

function holdsLoneSurrogate(value: unknown): boolean {
  if (typeof value === "string") return !value.isWellFormed();
  if (Array.isArray(value)) return value.some(holdsLoneSurrogate);
  if (value !== null && typeof value === "object") {
    for (const key in value) {
      if (!key.isWellFormed() || holdsLoneSurrogate((value as Record<string, unknown>)[key])) return true;
    }
  }
  return false;
}

/** CONTRACT §4b "Bounded input": JSON nested deeper than this is refused, unknown fields included. */
export const MAX_NESTING_DEPTH = 32;

/** Whether a parsed JSON value nests deeper than `limit` levels; iterative, so any depth is safe to ask. */
export function nestsDeeperThan(value: unknown, limit: number): boolean {
  const pending: Array<[unknown, number]> = [[value, 1]];
  while (pending.length > 0) {
    const [item, depth] = pending.pop() as [unknown, number];
    if (item === null || typeof item !== "object") continue;
    if (depth > limit) return true;
    for (const child of Array.isArray(item) ? item : Object.values(item)) pending.push([child, depth + 1]);
  }
  return false;
}

/** The refusal of `what` nesting deeper than MAX_NESTING_DEPTH (the schema's, and a body scan's). */
export function nestingMessage(what: string): string {
  return `${what} nests deeper than ${MAX_NESTING_DEPTH} levels of JSON; flatten it`;
}

/** Refuses input nested deeper than MAX_NESTING_DEPTH before the schema walks it. */
function boundedDepth<T extends z.ZodType>(schema: T, what: string) {
  return z
    .unknown()
    .superRefine((raw, ctx) => {
      if (nestsDeeperThan(raw, MAX_NESTING_DEPTH))
        ctx.addIssue({ code: "custom", message: nestingMessage(what), abort: true });
    })
    .pipe(schema);
}

const WELL_FORMED_MESSAGE = "must be well-formed Unicode text (it holds a lone UTF-16 surrogate)";

export const EVENT_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/;
export const MAX_TEXT_BYTES = 16 * 1024;
export const MAX_ASSERTIONS = 64;

export const MAX_SUBJECT_CHARACTERS = 128;

/**
 * The size of everything an agent can send (CONTRACT §1 "Sizes"), so that nothing that parses
 * costs more than a bounded amount of work: lengths in characters (code points) unless in bytes.
 */
export const LIMITS = {
  keyCharacters: 256,
  scopeCharacters: 128,
  sourceCharacters: 128,
  entityCharacters: 256,
  unitCharacters: 64,
  dateCharacters: 64,
  /** A `{text}` value, as an event's text. */
  textValueBytes: MAX_TEXT_BYTES,
  scopesPerValue: 64,
  supersedesPerEvent: 64,
  revokesPerEvent: 1000,
  blockedSources: 256,
  /** A blocked source or prefix pattern, as a source. */
  blockedSourceCharacters: 128,
  /** `latest` rules in one policy (and in the store's default), each glob's characters. */
  latestRules: 64,
  globCharacters: 256,
} as const;

/** At most `limit` code points (lone surrogates are refused elsewhere, with their field). */
function atMostCharacters(limit: number) {
  return (text: string) => text.length <= limit || [...text].length <= limit;
}

/** A string field bounded in code points, its message naming the bound. */
function boundedString(what: string, limit: number, required: string) {
  return z
    .string({ error: required })
    .min(1, { error: `${what} must not be empty` })
    .refine(atMostCharacters(limit), { error: `${what} must be at most ${limit} characters` });
}

/**
 * Characters that make one subject look like another where people read it (the review page,
 * logs): bidirectional controls (U+061C, U+200E, U+200F, U+202A–U+202E, U+2066–U+2069) and
 * zero-width characters (U+00AD, U+200B–U+200D, U+2060, U+FEFF, as CONTRACT §4b lists them).
 */
const INVISIBLE_IN_SUBJECTS =
  /[\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069\u00AD\u200B-\u200D\u2060\uFEFF]/u;

/**
 * A subject (CONTRACT §6): 1–128 characters after NFC normalisation, no control characters, no
 * bidirectional controls or zero-width characters. Parsing yields the NFC form, so one subject has
 * one spelling everywhere it is stored. The HTTP API, the command line and MCP parse with this.
 */
export const Subject = z
  .string({ error: "subject must be a string" })
  .refine((raw) => raw.isWellFormed(), { error: `subject ${WELL_FORMED_MESSAGE}` })
  .transform((raw) => raw.normalize("NFC"))
  .refine((subject) => subject.length > 0, { error: "subject must not be empty" })
  .refine((subject) => [...subject].length <= MAX_SUBJECT_CHARACTERS, {
    error: `subject must be at most ${MAX_SUBJECT_CHARACTERS} characters`,
  })
  .refine((subject) => !/\p{Cc}/u.test(subject), {
    error: "subject must not hold control characters (newlines, tabs, NUL …)",
  })
  .refine((subject) => !INVISIBLE_IN_SUBJECTS.test(subject), {
    error:
      "subject must not hold bidirectional controls or zero-width characters (U+202E, U+200B …): they make one subject look like another",
  });

export const EventId = z.string({ error: "must be a string event id" }).regex(EVENT_ID_PATTERN, {
  error: "must match ^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$ (letters, digits, . _ : -)",
});
export type EventId = z.infer<typeof EventId>;

const VALUE_KINDS = ["text", "bool", "quantity", "date", "entity", "scopes"] as const;
export type ValueKind = (typeof VALUE_KINDS)[number];

const TextValue = z.object({
  text: z
    .string({ error: "text must be a string" })
    .refine(
      (text) => text.length <= LIMITS.textValueBytes / 3 || utf8.encode(text).length <= LIMITS.textValueBytes,
      {
        error: `text must be at most ${LIMITS.textValueBytes} bytes of UTF-8, as an event's text`,
      },
    ),
});
const BoolValue = z.object({ bool: z.boolean({ error: "bool must be true or false" }) });
const QuantityValue = z.object({
  quantity: z
    .string({ error: 'quantity must be a decimal string such as "12500.00" (a JSON number is not accepted)' })
    .regex(DECIMAL_PATTERN, { error: 'quantity must be a decimal string such as "12500.00"' })
    .refine(isBoundedDecimal, {
      error: `quantity must have at most ${MAX_SIGNIFICANT_DIGITS} significant digits, a magnitude within 1e±${MAX_EXPONENT} however it is written (longhand included) and at most ${MAX_QUANTITY_CHARACTERS} characters`,
    }),
  unit: z
    .string({ error: "unit must be a string" })
    .min(1, { error: "unit must not be empty; omit it instead" })
    .refine(atMostCharacters(LIMITS.unitCharacters), {
      error: `unit must be at most ${LIMITS.unitCharacters} characters`,
    })
    .optional(),
});
const DateValue = z.object({
  date: z
    .string({ error: "date must be an ISO 8601 string" })
    .max(LIMITS.dateCharacters, { error: `date must be at most ${LIMITS.dateCharacters} characters` })
    .refine((text) => canonicalDate(text) !== null, {
      error: "date must be an ISO 8601 date (2026-11-20) or date-time (2026-11-20T10:00:00Z) that exists",
    }),
});
const EntityValue = z.object({
  entity: boundedString("entity", LIMITS.entityCharacters, "entity must be a string"),
});
const ScopesValue = z.object({
  scopes: z
    .array(boundedString("each scope", LIMITS.scopeCharacters, "each scope must be a string"), {
      error: "scopes must be an array",
    })
    .max(LIMITS.scopesPerValue, { error: `scopes holds at most ${LIMITS.scopesPerValue} scopes` }),
});

const VALUE_SCHEMAS = {
  text: TextValue,
  bool: BoolValue,
  quantity: QuantityValue,
  date: DateValue,
  entity: EntityValue,
  scopes: ScopesValue,
} as const;

/** A Value holds exactly one of text, bool, quantity(+unit), date, entity or scopes. */
export const Value = z.custom<ValueData>().superRefine((input, ctx) => {
  if (typeof input !== "object" || input === null || Array.isArray(input)) {
    ctx.addIssue({ code: "custom", message: `must be an object with one of: ${VALUE_KINDS.join(", ")}` });
    return;
  }
  const kinds = VALUE_KINDS.filter((kind) => kind in input);
  if (kinds.length !== 1) {
    ctx.addIssue({
      code: "custom",
      message:
        kinds.length === 0
          ? `must have one of: ${VALUE_KINDS.join(", ")}`
          : `must have exactly one of ${VALUE_KINDS.join(", ")}, found ${kinds.join(" and ")}`,
    });
    return;
  }
  const kind = kinds[0] as ValueKind;
  const result = VALUE_SCHEMAS[kind].safeParse(input);
  if (!result.success) {
    for (const issue of result.error.issues)
      ctx.addIssue({ code: "custom", message: issue.message, path: issue.path });
  }
});
export type ValueData =
  | z.infer<typeof TextValue>
  | z.infer<typeof BoolValue>
  | z.infer<typeof QuantityValue>
  | z.infer<typeof DateValue>
  | z.infer<typeof EntityValue>
  | z.infer<typeof ScopesValue>;

/** Keeps only the fields of the value's kind (unknown fields are ignored, never hashed as meaning). */
export function pickValueFields(input: ValueData): ValueData {
  if ("text" in input) return { text: input.text };
  if ("bool" in input) return { bool: input.bool };
  if ("quantity" in input)
    return input.unit === undefined
      ? { quantity: input.quantity }
      : { quantity: input.quantity, unit: input.unit };
  if ("date" in input) return { date: input.date };
  if ("entity" in input) return { entity: input.entity };
  return { scopes: input.scopes };
}

export const Polarity = z.enum(["affirmed", "negated"], {
  error: 'polarity must be "affirmed" or "negated"',
});
export type Polarity = z.infer<typeof Polarity>;

export const Assertion = z.object({
  key: boundedString("key", LIMITS.keyCharacters, "key is required: a string such as project:alpha/budget"),
  value: Value.transform(pickValueFields),
  polarity: Polarity,
  scope: boundedString("scope", LIMITS.scopeCharacters, "scope must be a string").default("global"),
});
export type Assertion = z.infer<typeof Assertion>;

export const EVENT_KINDS = [
  "fact",
  "preference",
  "constraint",
  "decision",
  "task",
  "permission",
  "note",
  "revocation",
] as const;
export const EventKind = z.enum(EVENT_KINDS, { error: `kind must be one of: ${EVENT_KINDS.join(", ")}` });
export type EventKind = z.infer<typeof EventKind>;

export const TRUST_LEVELS = ["untrusted", "tool", "user", "verified"] as const;
export const Trust = z.enum(TRUST_LEVELS, { error: `trust must be one of: ${TRUST_LEVELS.join(", ")}` });
export type Trust = z.infer<typeof Trust>;

export const MemoryEventObject = z
  .object({
    eventId: EventId,
    kind: EventKind,
    text: z
      .string({ error: "text must be a string" })
      .refine((text) => utf8.encode(text).length <= MAX_TEXT_BYTES, {
        error: `text must be at most ${MAX_TEXT_BYTES} bytes of UTF-8`,
      })
      .optional(),
    assertions: z
      .array(Assertion, { error: "assertions must be an array" })
      .max(MAX_ASSERTIONS, { error: `at most ${MAX_ASSERTIONS} assertions per event` })
      .optional(),
    supersedes: z
      .array(EventId, { error: "supersedes must be an array of event ids" })
      .max(LIMITS.supersedesPerEvent, {
        error: `supersedes names at most ${LIMITS.supersedesPerEvent} events`,
      })
      .optional(),
    revokes: z
      .array(EventId, { error: "revokes must be an array of event ids" })
      .max(LIMITS.revokesPerEvent, { error: `revokes names at most ${LIMITS.revokesPerEvent} events` })
      .optional(),
    taskStatus: z.enum(["open", "done"], { error: 'taskStatus must be "open" or "done"' }).optional(),
    trust: Trust.default("user"),
    source: boundedString("source", LIMITS.sourceCharacters, "source must be a string").optional(),
    occurredAt: z
      .string({ error: "occurredAt must be an ISO 8601 string" })
      .max(LIMITS.dateCharacters, { error: `occurredAt must be at most ${LIMITS.dateCharacters} characters` })
      .refine((text) => canonicalDate(text) !== null, {
        error: "occurredAt must be an ISO 8601 date or date-time",
      })
      .optional(),
    sequence: z
      .number({ error: "sequence must be a positive integer" })
      .int({ error: "sequence must be a positive integer" })
      .positive({ error: "sequence must be a positive integer" })
      .optional(),
  })
  .superRefine((event, ctx) => {
    const malformed = loneSurrogatePath(event);
    if (malformed) ctx.addIssue({ code: "custom", path: malformed, message: WELL_FORMED_MESSAGE });
    if (event.kind !== "revocation" && event.text === undefined)
      ctx.addIssue({ code: "custom", path: ["text"], message: `text is required on a ${event.kind} event` });
    if (event.kind === "revocation" && (event.revokes === undefined || event.revokes.length === 0))
      ctx.addIssue({
        code: "custom",
        path: ["revokes"],
        message: "a revocation must name the events it revokes",
      });
    if (event.kind !== "revocation" && event.revokes !== undefined)
      ctx.addIssue({
        code: "custom",
        path: ["revokes"],
        message: 'revokes is only allowed on kind "revocation"',
      });
    if (event.kind !== "task" && event.taskStatus !== undefined)
      ctx.addIssue({
        code: "custom",
        path: ["taskStatus"],
        message: 'taskStatus is only allowed on kind "task"',
      });
  })
  .transform((event) =>
    event.kind === "task" ? { ...event, taskStatus: event.taskStatus ?? "open" } : event,
  );
export const MemoryEvent = boundedDepth(MemoryEventObject, "the event");
export type MemoryEvent = z.infer<typeof MemoryEvent>;

/** An event as stored: the store (or the gate's file reader) has assigned its sequence. */
export type SequencedEvent = MemoryEvent & { sequence: number };

const Glob = (what: string) =>
  z
    .string({ error: `${what} must be a string glob such as "stock.*"` })
    .min(1, { error: `${what} must not be empty` })
    .refine(atMostCharacters(LIMITS.globCharacters), {
      error: `${what} must be at most ${LIMITS.globCharacters} characters`,
    })
    .refine((glob) => glob.isWellFormed(), { error: `${what} ${WELL_FORMED_MESSAGE}` })
    .refine((glob) => !/\p{Cc}/u.test(glob), { error: `${what} must not hold control characters` });

/**
 * A `latest` rule (CONTRACT §2, selector v3): the keys whose values are readings of something that
 * changes. A key glob alone covers every scope; `{key, scope}` covers the scopes its glob matches.
 * `*` matches any run of characters (none included); every other character matches itself.
 */
export const LatestRule = z.union(
  [
    Glob("a latest rule"),
    z.strictObject({ key: Glob("a latest rule's key"), scope: Glob("a latest rule's scope") }),
  ],
  { error: 'each latest rule is a key glob ("stock.*") or {"key": glob, "scope": glob}' },
);
export type LatestRule = z.infer<typeof LatestRule>;

export const LatestRules = z
  .array(LatestRule, { error: "latest must be an array of key globs" })
  .max(LIMITS.latestRules, { error: `latest holds at most ${LIMITS.latestRules} rules` });

export const TrustPolicy = z.object({
  minTrust: Trust.default("tool"),
  blockedSources: z
    .array(
      boundedString(
        "each blocked source",
        LIMITS.blockedSourceCharacters,
        "each blocked source must be a string",
      ),
    )
    .max(LIMITS.blockedSources, {
      error: `blockedSources holds at most ${LIMITS.blockedSources} sources or prefixes`,
    })
    .default([]),
  /** Keys whose values are readings: the latest reading holds, the others are earlier readings. */
  latest: LatestRules.optional(),
});
export type TrustPolicy = z.infer<typeof TrustPolicy>;
export const DEFAULT_TRUST_POLICY: TrustPolicy = { minTrust: "tool", blockedSources: [] };

/**
 * A subject's policy as its clock keeps it: the policy as set (a `latest` of its own, or none) and
 * the store's default rules as they were last applied to this subject (`storeLatest`), so what a
 * subject selects is one read of its own clock however the store default moves.
 */
export const StoredPolicy = TrustPolicy.extend({ storeLatest: LatestRules.optional() });
export type StoredPolicy = z.infer<typeof StoredPolicy>;

const NonEmptyIds = (field: string) =>
  z
    .array(z.string({ error: `${field} must hold event ids` }), {
      error: `${field} must be an array of event ids`,
    })
    .min(1, {
      error: `${field} must name at least one event`,
    });

/** settled and contested (CONTRACT §3), and earlier: a reading a later one replaced (selector v3). */
export const CLAIM_STATUSES = ["settled", "contested", "earlier"] as const;

export const Claim = z.object({
  key: z.string({ error: "claim key is required" }).min(1),
  scope: z.string({ error: "claim scope must be a string" }).min(1).default("global"),
  // Read as written: the gate reads only the kind's own fields, and a candidate is never hashed as an input.
  value: Value,
  polarity: Polarity,
  status: z.enum(CLAIM_STATUSES, { error: 'status must be "settled", "contested" or "earlier"' }),
  text: z.string({ error: "claim text must be a string" }).optional(),
  /** When the restated reading was taken (its event's occurredAt, or that day): an earlier reading's date. */
  asOf: z
    .string({ error: "asOf must be an ISO 8601 date or date-time string" })
    .refine((text) => canonicalDate(text) !== null, {
      error: "asOf must be an ISO 8601 date (2026-10-26) or date-time that exists",
    })
    .optional(),
  derivedFrom: NonEmptyIds("derivedFrom"),
});
export type Claim = z.infer<typeof Claim>;

export const PendingItem = z.object({
  text: z.string({ error: "pending text is required" }),
  derivedFrom: NonEmptyIds("derivedFrom"),
});
export type PendingItem = z.infer<typeof PendingItem>;

export const ConflictRef = z.object({
  key: z.string({ error: "conflict key is required" }).min(1),
  scope: z.string({ error: "conflict scope must be a string" }).min(1).default("global"),
  members: NonEmptyIds("members"),
});
export type ConflictRef = z.infer<typeof ConflictRef>;

export const ConsolidationOutputObject = z
  .object({
    claims: z.array(Claim, { error: "claims is required: an array" }),
    pending: z.array(PendingItem, { error: "pending is required: an array" }),
    unresolvedConflicts: z.array(ConflictRef, { error: "unresolvedConflicts is required: an array" }),
    coldRefs: z.array(z.string({ error: "coldRefs must hold event ids" })).default([]),
    summary: z.string({ error: "summary is required: a string" }),
  })
  .superRefine((output, ctx) => {
    const malformed = loneSurrogatePath(output);
    if (malformed) ctx.addIssue({ code: "custom", path: malformed, message: WELL_FORMED_MESSAGE });
  });
export const ConsolidationOutput = boundedDepth(ConsolidationOutputObject, "the candidate");
export type ConsolidationOutput = z.infer<typeof ConsolidationOutput>;

export const ExpectedAlias = z.object({
  parentArtifactId: z.string().min(1),
  sourceEpoch: z.number().int().nonnegative(),
  coversThrough: z.number().int().nonnegative(),
});
export type ExpectedAlias = z.infer<typeof ExpectedAlias>;

/**
 * What one consistent read of clock and alias yields; the queue message body. `epochMovedAt` is
 * the clock's highWater after the write that last moved inputEpoch (0 while it never moved): no
 * snapshot of that epoch covers less (CONTRACT §2). A store's read always sets it; a message may
 * leave it out, and what consumes a message reads it afresh from the clock.
 */
export const Snapshot = z.object({
  subject: Subject,
  highWater: z.number({ error: "highWater must be an integer" }).int().nonnegative(),
  inputEpoch: z.number({ error: "inputEpoch must be an integer" }).int().nonnegative(),
  epochMovedAt: z.number({ error: "epochMovedAt must be an integer" }).int().nonnegative().optional(),
  expectedAlias: ExpectedAlias.nullable(),
});
export type Snapshot = z.infer<typeof Snapshot>;

export const InputRef = z.object({
  eventId: EventId,
  sequence: z.number().int().positive(),
  hash: z.string().regex(/^sha256:[0-9a-f]{64}$/),
});
export type InputRef = z.infer<typeof InputRef>;

/** Binds an artifact to the exact inputs, fences and versions it was made from (the seed's manifest). */
const tokenCount = z.number().int().nonnegative();

/** One prompt of a generation (CONTRACT §5 v2, the models issue): what was sent, or reused, and its tokens. */
export const ModelCallEntry = z.object({
  kind: z.enum(["consolidate", "segment", "summary", "judge"]),
  attempt: z.number().int().positive(),
  promptHash: z.string(),
  segment: z.string().optional(),
  reused: z.boolean(),
  inputTokens: tokenCount,
  outputTokens: tokenCount,
  problem: z.string().optional(),
});

/** How a candidate was generated: attempts (repair), every prompt sent, tokens, segments reused. */
export const GenerationRecord = z.object({
  rendererVersion: z.string().optional(),
  /** The templates rendered (version and hash), when they are not only the manifest's prompt. */
  templates: z.array(z.object({ version: z.string(), hash: z.string() })).optional(),
  attempts: z.number().int().positive(),
  calls: z.array(ModelCallEntry),
  inputTokens: tokenCount,
  outputTokens: tokenCount,
  segments: z.object({ total: tokenCount, reused: tokenCount }).optional(),
  /** Why the last repair could not be asked (the model failed): the refusal before it stands. */
  repairFailure: z.string().optional(),
});
export type GenerationRecord = z.infer<typeof GenerationRecord>;

export const Manifest = z.object({
  artifactId: z.string().min(1),
  subject: z.string().min(1),
  newCoversThrough: z.number().int().nonnegative(),
  inputEpoch: z.number().int().nonnegative(),
  expectedAlias: ExpectedAlias.nullable(),
  inputIds: z.array(EventId),
  inputs: z.array(InputRef),
  inputRoot: z.string().regex(/^sha256:[0-9a-f]{64}$/),
  selectorVersion: z.string().min(1),
  promptVersion: z.string().min(1),
  promptHash: z.string().optional(),
  modelSnapshot: z.string().min(1),
  policy: TrustPolicy,
  /**
   * Selector v3: the inputs holding an earlier reading (a later reading on that key and scope
   * holds), each with the reading that holds; absent when there were none.
   */
  earlierReadings: z
    .array(z.object({ eventId: EventId, key: z.string(), scope: z.string(), latest: EventId }))
    .optional(),
  createdAt: z.string().optional(),
  generation: GenerationRecord.optional(),
});
export type Manifest = z.infer<typeof Manifest>;
