import { createRoute, OpenAPIHono, type RouteConfig, z } from "@hono/zod-openapi";
import type { MiddlewareHandler } from "hono";
import { subjectOfArtifact } from "#app/artifact-id.ts";
import type { Deps } from "#app/deps.ts";
import { MAX_NESTING_DEPTH, MemoryEvent, nestingMessage, type Snapshot, Subject } from "#domain/schemas.ts";
import { parseStrictJson, parseStrictJsonPaced, type StrictJson } from "#domain/strict-json.ts";
import { decodeStrictUtf8Paced } from "#domain/utf8.ts";
import { InputError } from "#ports/errors.ts";
import { mapWithPauses, neverPause, type Pause } from "#ports/time.ts";
import { firstIssue } from "#runtime/issues.ts";
import { MAX_EVENTS_PER_REQUEST } from "#runtime/settings.ts";
import { requestCanonicalPath } from "./canonical-path.ts";
import { Answers } from "./components.ts";
import { HttpProblemError } from "./problems.ts";

/**
 * What every resource's router shares: how a bad path parameter or query is refused, the path
 * parameters, the documented error answers, and the reading of subjects, artifacts and bodies.
 * Every refusal happens before a use case writes.
 */

/** A resource's router: a path parameter or query that fails its schema is a 400 naming it. */
export function resourceRouter(): OpenAPIHono {
  return new OpenAPIHono({
    defaultHook: (result) => {
      if (!result.success) {
        const { field, message } = firstIssue(result.error, "request");
        throw invalid(field, message);
      }
    },
  });
}

/** Bad input in a request: 400 with the field named, as every other bad input. */
export function invalid(field: string, message: string): InputError {
  return new InputError(`${field}: ${message}`, { field });
}

export const SubjectPath = z.object({
  subject: z.string().openapi({ description: "percent-encoded subject" }),
});
export const ArtifactPath = z.object({
  artifactId: z.string().openapi({ description: "percent-encoded artifact id" }),
});

/** A JSON answer of a route, typed by its schema. */
export function jsonAnswer<T extends z.ZodType>(schema: T, description: string) {
  return { description, content: { "application/json": { schema } } };
}

/** The refusals every subject or artifact route may answer. */
export const REFUSALS = {
  400: jsonAnswer(Answers.Problem, "invalid input; nothing was written"),
  404: jsonAnswer(Answers.Problem, "unknown subject or artifact"),
};

type Method = RouteConfig["method"];
type Responses = RouteConfig["responses"];

/** A route on one subject or one artifact: what differs from one such route to the next. */
interface RouteOn<M extends Method, P extends string, R extends Responses> {
  method: M;
  path: P;
  summary: string;
  /** Its answers beside the refusals every such route may give (400, 404). */
  responses: R;
}

/** Routes on one thing a path parameter names, each typed by its answers. */
function routesOn<const Params extends z.ZodObject>(params: Params) {
  return <const M extends Method, const P extends string, const R extends Responses>(
    route: RouteOn<M, P, R>,
  ) => createRoute({ ...route, request: { params }, responses: { ...REFUSALS, ...route.responses } });
}

/** A route on one subject (`{subject}` in its path, parsed by the handler). */
export const subjectRoute = routesOn(SubjectPath);
/** A route on one artifact (`{artifactId}` in its path). */
export const artifactRoute = routesOn(ArtifactPath);

/**
 * Every `/v1/subjects/{subject}/…` request: the subject segment of the canonical path (decoded
 * once; a path that does not decode was refused before) under the contract's rule. Runs before
 * every subject route, so the handlers read a checked subject.
 */
export const subjectSegmentChecked: MiddlewareHandler = async (c, next) => {
  const path = requestCanonicalPath(c.req.raw);
  const segment =
    path.ok && path.segments[1] === "v1" && path.segments[2] === "subjects" ? path.segments[3] : undefined;
  if (segment !== undefined) parseSubject(segment);
  await next();
};

/**
 * The subject path segment under the contract's rule (1–128 characters after NFC, no controls, no
 * bidirectional controls or zero-width characters).
 */
export function parseSubject(raw: string): string {
  const known = acceptedSubjects.get(raw);
  if (known !== undefined) return known;
  const parsed = Subject.safeParse(raw);
  if (!parsed.success) throw invalid("subject", firstIssue(parsed.error, "subject").message);
  if (acceptedSubjects.size >= ACCEPTED_SUBJECTS_LIMIT) acceptedSubjects.clear();
  acceptedSubjects.set(raw, parsed.data);
  return parsed.data;
}

/**
 * Subjects accepted lately, by the text sent: every subject route checks its segment twice (the
 * middleware above, then the handler), and agents send the same few subjects again and again.
 */
const acceptedSubjects = new Map<string, string>();
const ACCEPTED_SUBJECTS_LIMIT = 4096;

/** The clock as §6 shows it (the alias by its artifact). */
export function clockView(snapshot: Snapshot) {
  const alias = snapshot.expectedAlias;
  return {
    highWater: snapshot.highWater,
    inputEpoch: snapshot.inputEpoch,
    alias: alias
      ? {
          artifactId: alias.parentArtifactId,
          sourceEpoch: alias.sourceEpoch,
          coversThrough: alias.coversThrough,
        }
      : null,
  };
}

/** The artifact a path names, with its subject and record; 404 when there is none. */
export async function findArtifact(deps: Deps, artifactId: string) {
  const unknown = () =>
    new HttpProblemError(
      404,
      "not-found",
      `artifactId: no artifact "${artifactId.slice(0, 200)}"`,
      "artifactId",
    );
  let subject: string;
  try {
    subject = subjectOfArtifact(artifactId);
  } catch {
    throw unknown();
  }
  if (!Subject.safeParse(subject).success) throw unknown();
  const record = await deps.artifacts.getRecord(subject, artifactId);
  if (!record) throw unknown();
  return { subject, artifactId, record };
}

/** A body parsed with its schema; the first issue is the 400's field. */
export function parseBody<T>(schema: z.ZodType<T>, raw: unknown): T {
  const parsed = schema.safeParse(raw);
  if (parsed.success) return parsed.data;
  const { field, message } = firstIssue(parsed.error, "body");
  throw invalid(field, message);
}

function mediaType(request: Request): string {
  return (request.headers.get("content-type") ?? "").split(";")[0]?.trim().toLowerCase() ?? "";
}

/**
 * A body's text, decoded as strict UTF-8: invalid bytes are a 400 naming the byte offset (as the
 * command line refuses a file), never stored as U+FFFD.
 */
async function readText(request: Request, pause: Pause): Promise<string> {
  const decoded = await decodeStrictUtf8Paced(new Uint8Array(await request.arrayBuffer()), pause);
  if (!decoded.ok)
    throw invalid(
      "body",
      `line ${decoded.line} is not valid UTF-8 (byte offset ${decoded.offset}); send UTF-8 text`,
    );
  return decoded.text;
}

/** Bodies from this size on are parsed with pauses (a step at a time), smaller ones at once. */
const PACED_BODY_CHARACTERS = 64 * 1024;

/**
 * How deep a JSON body may nest (CONTRACT §4b "Bounded input", §6): an event holds at most
 * MAX_NESTING_DEPTH levels and sits two levels down in `{"events":[…]}`, and no other body comes
 * near. Deeper text is refused while it is scanned, before any value is built: a body of 5 MiB of
 * `[` is refused after reading its first levels, not after parsing millions of arrays on the
 * serving thread.
 */
const MAX_BODY_DEPTH = MAX_NESTING_DEPTH + 2;

/**
 * JSON text as strictly as a candidate (CONTRACT §4b): one value, and no object with a key twice
 * (JSON.parse would keep the last one silently); the 400 names the duplicated field. A body
 * nesting too deep names the event it is in (`events[2]`, as the event's schema would) or the body.
 */
function strictValue(parsed: StrictJson, where: string, notJson: string): unknown {
  if (parsed.ok) return parsed.value;
  if (parsed.tooDeep !== undefined) {
    const event = /^\$\.events\[(\d+)\]/.exec(parsed.tooDeep.path)?.[1];
    if (event !== undefined) throw invalid(`events[${event}]`, nestingMessage("the event"));
    throw invalid(
      where,
      `nests deeper than ${MAX_BODY_DEPTH} levels of JSON (at ${parsed.tooDeep.path}); flatten it (an event holds at most ${MAX_NESTING_DEPTH}, inside {"events":[…]})`,
    );
  }
  // Only text JSON.parse accepted is searched for a duplicate: other text is simply not JSON.
  const { duplicate } = parsed;
  if (duplicate === undefined) throw invalid(where, notJson);
  const inside = duplicate.path.replace(/^\$\.?/, "");
  const field = `${where === "body" ? "" : `${where} `}${inside === "" ? "" : `${inside}.`}${duplicate.key}`;
  throw invalid(field, `appears twice in one object; send each field once`);
}

/** A JSON body (415 for any other media type, 400 for text that is not strict JSON in UTF-8). */
export async function readJson(request: Request, pause: Pause = neverPause): Promise<unknown> {
  const type = mediaType(request);
  if (type !== "application/json")
    throw new HttpProblemError(
      415,
      "unsupported-media-type",
      `content-type: send application/json, got "${type}"`,
      "content-type",
    );
  const text = await readText(request, pause);
  const bounded = { maxDepth: MAX_BODY_DEPTH };
  const parsed =
    text.length < PACED_BODY_CHARACTERS
      ? parseStrictJson(text, bounded)
      : await parseStrictJsonPaced(text, pause, bounded);
  return strictValue(parsed, "body", "not valid JSON");
}

/**
 * An event batch: `{"events":[…]}` as JSON or one event per line as NDJSON. Every event is checked
 * before anything is appended; the first bad one is named by its index and field. `sequence` is
 * the store's to assign and is dropped.
 */
export async function readEvents(request: Request, pause: Pause = neverPause): Promise<MemoryEvent[]> {
  let raw: unknown[];
  if (mediaType(request) === "application/x-ndjson") {
    const lines = (await readText(request, pause)).split("\n");
    raw = [];
    for (const [index, line] of lines.entries()) {
      if (line.trim() === "") continue;
      if (raw.length >= MAX_EVENTS_PER_REQUEST) throw tooManyEvents();
      await pause();
      // A line is one event: nesting past its own limit is that event's refusal, read from the scan.
      const parsed = parseStrictJson(line, { maxDepth: MAX_NESTING_DEPTH });
      if (!parsed.ok && parsed.tooDeep !== undefined)
        throw invalid(`events[${raw.length}]`, nestingMessage("the event"));
      raw.push(strictValue(parsed, `line ${index + 1}`, "not valid JSON (NDJSON: one event per line)"));
    }
  } else {
    const body = await readJson(request, pause);
    const events = typeof body === "object" && body !== null && "events" in body ? body.events : undefined;
    if (!Array.isArray(events)) throw invalid("events", 'send {"events":[MemoryEvent, …]}');
    raw = events;
    if (raw.length > MAX_EVENTS_PER_REQUEST) throw tooManyEvents();
  }
  if (raw.length === 0) throw invalid("events", "send at least one event");
  return mapWithPauses(raw, pause, (item, index) => {
    const parsed = MemoryEvent.safeParse(item);
    if (!parsed.success) {
      const { field, message } = firstIssue(parsed.error, "", { lead: "." });
      throw invalid(`events[${index}]${field}`, message);
    }
    const { sequence: _sequence, ...event } = parsed.data;
    return event;
  });
}

function tooManyEvents(): HttpProblemError {
  return new HttpProblemError(
    413,
    "too-large",
    `events: a request holds at most ${MAX_EVENTS_PER_REQUEST} events; split the batch`,
    "events",
  );
}
