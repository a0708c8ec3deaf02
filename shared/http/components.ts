import { z } from "@hono/zod-openapi";
import type { Manifest } from "#domain/schemas.ts";
import {
  ConsolidationOutputObject,
  EventId,
  ExpectedAlias,
  LatestRules,
  MemoryEventObject,
  Snapshot,
  TrustPolicy,
} from "#domain/schemas.ts";
import type { ArtifactStatus, ArtifactRecord as StoredRecord } from "#ports/artifact-records.ts";
import { MAX_EVENTS_PER_REQUEST } from "#runtime/settings.ts";

/** Request bodies the router parses (and documents) with these very schemas. */
export const SettingsPatch = z
  .object({
    publishMode: z.enum(["live", "shadow"], { error: 'must be "live" or "shadow"' }),
    recallBypass: z.boolean({ error: "must be true or false" }),
    rebuildAfterEvents: z
      .number({ error: "must be a whole number of events" })
      .int({ error: "must be a whole number of events" })
      .min(1, { error: "must be at least 1" })
      .max(1_000_000, { error: "must be at most 1000000" }),
    /** The store's default latest rules (CONTRACT §2): applied to every subject without its own. */
    latest: LatestRules,
    budget: z
      .number({ error: "must be a whole number of tokens, or null for none" })
      .int({ error: "must be a whole number of tokens, or null for none" })
      .min(1, { error: "must be at least 1" })
      .max(100_000_000, { error: "must be at most 100000000" })
      .nullable(),
  })
  .partial()
  .strict();

export const Revocations = z
  .object({
    eventIds: z
      .array(EventId, { error: "must be an array of event ids" })
      .min(1, { error: "must name at least one event" })
      .max(MAX_EVENTS_PER_REQUEST, { error: `at most ${MAX_EVENTS_PER_REQUEST} event ids a request` }),
    reason: z
      .string({ error: "must be text" })
      .max(16 * 1024, { error: "at most 16384 characters" })
      .optional(),
  })
  .strict();

const Problem = z.object({
  error: z.object({ code: z.string(), message: z.string(), field: z.string().optional() }),
});
const AliasView = z.object({
  artifactId: z.string(),
  sourceEpoch: z.number().int(),
  coversThrough: z.number().int(),
});
const Clock = z.object({
  highWater: z.number().int(),
  inputEpoch: z.number().int(),
  alias: AliasView.nullable(),
  staled: z.array(z.string()).optional(),
  rebuildRequested: z.boolean().optional(),
  /** Revocations: the ids a valid revocation already revoked (nothing appended for them). */
  alreadyRevoked: z.array(z.string()).optional(),
});
const AppendResult = z.object({
  appended: z.array(z.string()),
  duplicates: z.array(z.string()),
  highWater: z.number().int(),
  inputEpoch: z.number().int(),
  epochMoved: z.boolean(),
  staled: z.array(z.string()),
  rebuildRequested: z.boolean(),
});
/** Served events carry the sequence the store assigned. */
const StoredEvent = MemoryEventObject;
const Output = ConsolidationOutputObject;
const Recall = z.object({
  mode: z.enum(["summary", "raw"]),
  reason: z.string(),
  highWater: z.number().int(),
  inputEpoch: z.number().int(),
  artifactId: z.string().nullable(),
  scope: z.string().nullable(),
  claims: Output.shape.claims,
  pending: Output.shape.pending,
  unresolvedConflicts: Output.shape.unresolvedConflicts,
  summary: z.string().nullable(),
  tail: z.array(StoredEvent),
  events: z.array(StoredEvent),
  cold: z.array(StoredEvent),
  days: z
    .object({ claims: z.array(z.string().nullable()), pending: z.array(z.string().nullable()) })
    .openapi({ description: "the day shown beside each served claim and pending item (aligned with them)" }),
  earlierReadings: z.array(
    z.object({
      eventId: z.string(),
      key: z.string(),
      scope: z.string(),
      polarity: z.enum(["affirmed", "negated"]),
      value: z.unknown(),
      occurredAt: z.string().nullable(),
      latest: z.string(),
    }),
  ),
  omitted: z.object({
    claims: z.number().int(),
    pending: z.number().int(),
    unresolvedConflicts: z.number().int(),
    summary: z.boolean(),
    cold: z.number().int(),
    oversized: z.array(
      z.object({ eventId: z.string(), sequence: z.number().int(), tokens: z.number().int() }),
    ),
  }),
  nextCursor: z.string().nullable(),
  servedTokens: z.number().int(),
  coldInputs: z.number().int().nullable(),
  citedMatches: z.number().int().openapi({
    description:
      "how many of `cold` (the inputs the query reached) a claim or pending item derives from; the others are cold inputs",
  }),
  budgetBelowFrame: z.object({ budget: z.number().int(), needed: z.number().int() }).nullable().openapi({
    description:
      "text under a budget below what its first line and notes alone need (no item served): the budget and that need; null otherwise",
  }),
});
const ArtifactRecord = z.object({
  subject: z.string(),
  artifactId: z.string(),
  status: z.enum(["CANDIDATE", "REJECTED", "SHADOW", "PUBLISHED", "SUPERSEDED", "ABANDONED", "STALE"]),
  lifecycle: z.string(),
  stale: z.boolean(),
  coversThrough: z.number().int(),
  inputEpoch: z.number().int(),
  parentArtifactId: z.string().nullable(),
  inputRoot: z.string(),
  gate: z.object({ verdict: z.enum(["pass", "reject"]) }).loose(),
  createdAt: z.string(),
});

const Queued = z.object({
  snapshot: Snapshot,
  /** False when the published summary already covers the snapshot: nothing was queued. */
  queued: z.boolean(),
  /** The published summary that already covers the snapshot (when nothing was queued). */
  artifactId: z.string().optional(),
});
const ArtifactList = z.object({ artifacts: z.array(ArtifactRecord) });
const Artifact = z.object({ record: ArtifactRecord, manifest: z.object({}).loose(), body: Output });
const Settings = SettingsPatch;
const AnyObject = z.object({}).loose();

/** Every schema the OpenAPI document names, generated from the zod schemas (never hand-written). */
const SCHEMAS = {
  Problem,
  MemoryEvent: MemoryEventObject,
  EventBatch: z.object({ events: z.array(MemoryEventObject).min(1).max(MAX_EVENTS_PER_REQUEST) }),
  AppendResult,
  Revocations,
  Clock,
  Recall,
  Snapshot,
  ExpectedAlias,
  LatestRules,
  Queued,
  ArtifactList,
  Artifact,
  TrustPolicy,
  Settings,
  AnyObject,
} satisfies Record<string, z.ZodType>;

type JsonSchema = Record<string, unknown>;
type SchemaName = keyof typeof SCHEMAS & string;

/**
 * The document's schemas, generated from the zod schemas with zod 4's `toJSONSchema` (the very
 * schemas the handlers parse with), so the document cannot drift from what is enforced.
 */
export const API_COMPONENTS: Record<string, JsonSchema> = Object.fromEntries(
  Object.entries(SCHEMAS).map(([name, schema]) => {
    const { $schema: _dialect, ...jsonSchema } = z.toJSONSchema(schema, {
      io: "input",
      unrepresentable: "any",
      target: "draft-2020-12",
    }) as JsonSchema;
    return [name, jsonSchema];
  }),
);

/** A reference to one of the named schemas: how request bodies are documented (handlers parse them). */
export function ref(name: SchemaName): { $ref: string } {
  if (!(name in SCHEMAS)) throw new Error(`no API schema named ${name}`);
  return { $ref: `#/components/schemas/${name}` };
}

/**
 * A route's answer of type T, referred to by name in the document: the handler's `c.json(…)` is
 * checked against T, and the document's components are API_COMPONENTS above (the route generator
 * is told the type only, as it cannot describe refinements). A fresh schema each: `.openapi`
 * exists only on schemas made after @hono/zod-openapi loaded, and the domain's are made before it
 * wherever the domain loads first.
 */
function served<T>(name: SchemaName): z.ZodType<T> {
  // Answers are objects (never null): a schema that accepted null would be documented as nullable.
  return z
    .custom<T>((value) => typeof value === "object" && value !== null)
    .openapi(name, { type: "object" });
}

/** The answer typed as the named schema's output. */
function answer<N extends SchemaName>(name: N): z.ZodType<z.output<(typeof SCHEMAS)[N]>> {
  return served<z.output<(typeof SCHEMAS)[N]>>(name);
}

/** A record as listings show it: the contract's status (STALE when marked), its lifecycle beside it. */
export type ListedRecord = Omit<StoredRecord, "status"> & {
  status: ArtifactStatus | "STALE";
  lifecycle: ArtifactStatus;
};

/**
 * The answers the routes declare, typed. Two are typed by what the store serves rather than by
 * their documented schema, which TypeScript cannot hold them against: a record's gate report is
 * open-ended, and an artifact's body is whatever was written (a REJECTED one's may not fit the
 * output schema at all).
 */
export const Answers = {
  Problem: answer("Problem"),
  AppendResult: answer("AppendResult"),
  Clock: answer("Clock"),
  Recall: answer("Recall"),
  Queued: answer("Queued"),
  ArtifactList: served<{ artifacts: ListedRecord[] }>("ArtifactList"),
  Artifact: served<{ record: ListedRecord; manifest: Manifest; body: unknown }>("Artifact"),
  TrustPolicy: answer("TrustPolicy"),
  Settings: answer("Settings"),
  AnyObject: answer("AnyObject"),
};
