import { timingSafeEqual } from "node:crypto";
import { createRoute, OpenAPIHono, type RouteConfig, z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { bodyLimit } from "hono/body-limit";
import { appendEvents, changeTrustPolicy, revokeEvents } from "#app/append.ts";
import { subjectOfArtifact } from "#app/artifact-id.ts";
import type { Deps } from "#app/deps.ts";
import { explainClaims } from "#app/explain.ts";
import { lineageDot, lineageProv } from "#app/lineage.ts";
import { recall } from "#app/recall.ts";
import { parseRecallOptions } from "#app/recall-options.ts";
import { approve, reject, review, subjectStatuses } from "#app/review.ts";
import { MemoryEvent, type Snapshot, Subject, TrustPolicy } from "#domain/schemas.ts";
import { shownStatus } from "#ports/artifact-records.ts";
import { REVIEW_HEADERS, REVIEW_HTML, REVIEW_SCRIPT, REVIEW_STYLE } from "#review/page.ts";
import {
  API_COMPONENTS,
  MAX_EVENTS_PER_REQUEST,
  MAX_REQUEST_BYTES,
  Revocations,
  ref,
  SettingsPatch,
} from "./components.ts";
import { fieldPath, HttpProblemError, invalid, problemOf } from "./problems.ts";

export interface ApiOptions {
  /** The use cases' dependencies (stores, model, clock, ids), opened once by the caller. */
  deps: Deps;
  /** When set, every route but /healthz needs `Authorization: Bearer <token>` (memgate serve). */
  token?: string | undefined;
  /** One line per request (method, path, status, milliseconds). */
  logRequest?: (line: string) => void;
  /** Called for each 500 with the error (the answer only says it was logged). */
  logUnexpected?: (error: unknown) => void;
  /** Called for each recall answered, with its mode (the RecallServed metric). */
  recallServed?: (mode: "summary" | "raw") => void;
}

/** The HTTP API of CONTRACT §6 over the use cases: one router for API Gateway and `memgate serve`. */
export function createApi(options: ApiOptions): OpenAPIHono {
  const { deps } = options;
  const app = new OpenAPIHono({
    defaultHook: (result) => {
      if (!result.success) {
        const issue = result.error.issues[0];
        const field = fieldPath(issue?.path ?? []) || "request";
        throw invalid(field, issue?.message ?? "invalid");
      }
    },
  });

  app.use("*", async (c, next) => {
    const started = performance.now();
    await next();
    options.logRequest?.(
      `${c.req.method} ${new URL(c.req.url).pathname} ${c.res.status} ${Math.round(performance.now() - started)}ms`,
    );
  });
  if (options.token !== undefined) app.use("*", bearerAuth(options.token));
  app.use(
    "*",
    bodyLimit({
      maxSize: MAX_REQUEST_BYTES,
      onError: () => {
        throw new HttpProblemError(
          413,
          "too-large",
          `body: a request holds at most ${MAX_REQUEST_BYTES} bytes (5 MiB); split the batch`,
          "body",
        );
      },
    }),
  );
  app.onError((error, c) => {
    const problem = problemOf(error);
    if (problem.status === 500) options.logUnexpected?.(error);
    if (problem.retryAfterSeconds !== undefined) c.header("Retry-After", String(problem.retryAfterSeconds));
    return c.json(problem.body(), problem.status);
  });
  app.notFound((c) =>
    c.json(
      {
        error: {
          code: "not-found",
          message: `path: no route ${c.req.method} ${new URL(c.req.url).pathname}; see GET /v1/openapi.json`,
          field: "path",
        },
      },
      404,
    ),
  );

  // Bodies and answers are documented by reference to schemas generated from the zod schemas the
  // handlers parse with; the handlers' own types are the use cases', so one cast registers them.
  const route = (definition: RouteConfig, handler: (c: Context) => Promise<Response> | Response) =>
    app.openapi(createRoute(definition), handler as never);
  for (const [name, schema] of Object.entries(API_COMPONENTS))
    app.openAPIRegistry.registerComponent("schemas", name, schema);

  const subjectPath = z.object({ subject: z.string().openapi({ description: "percent-encoded subject" }) });
  const artifactPath = z.object({
    artifactId: z.string().openapi({ description: "percent-encoded artifact id" }),
  });
  const json = (schema: ReturnType<typeof ref>, description: string) => ({
    description,
    content: { "application/json": { schema } },
  });
  const errors = {
    400: json(ref("Problem"), "invalid input; nothing was written"),
    404: json(ref("Problem"), "unknown subject or artifact"),
  };

  route(
    {
      method: "post",
      path: "/v1/subjects/{subject}/events",
      summary: "Append memory events (write-once, idempotent per event id)",
      request: {
        params: subjectPath,
        body: {
          required: true,
          content: {
            "application/json": { schema: ref("EventBatch") },
            "application/x-ndjson": { schema: ref("MemoryEvent") },
          },
        },
      },
      responses: {
        200: json(ref("AppendResult"), "appended"),
        ...errors,
        409: json(ref("Problem"), "an event id re-sent with different content"),
        413: json(ref("Problem"), "over 1,000 events or 5 MiB"),
        415: json(ref("Problem"), "not JSON or NDJSON"),
      },
    },
    async (c) => {
      const subject = subjectParam(c);
      const events = await readEvents(c);
      const outcome = await appendEvents(deps, subject, events);
      return c.json(
        {
          appended: outcome.appended,
          duplicates: outcome.duplicates,
          highWater: outcome.highWater,
          inputEpoch: outcome.inputEpoch,
          epochMoved: outcome.epochMoved,
          staled: outcome.staled,
          rebuildRequested: outcome.rebuildRequested,
        },
        200,
      );
    },
  );

  route(
    {
      method: "post",
      path: "/v1/subjects/{subject}/revocations",
      summary: "Revoke events: recall stops serving what used them at once",
      request: {
        params: subjectPath,
        body: { required: true, content: { "application/json": { schema: ref("Revocations") } } },
      },
      responses: { 200: json(ref("Clock"), "the clock after the revocation"), ...errors },
    },
    async (c) => {
      const subject = subjectParam(c);
      const body = parseBody(Revocations, await readJson(c));
      await mustExist(subject);
      const outcome = await revokeEvents(deps, subject, body.eventIds, body.reason);
      return c.json(
        {
          ...clockView(await deps.events.snapshot(subject)),
          staled: outcome.staled,
          rebuildRequested: outcome.rebuildRequested,
        },
        200,
      );
    },
  );

  route(
    {
      method: "get",
      path: "/v1/subjects/{subject}/clock",
      summary: "The subject's clock and read alias",
      request: { params: subjectPath },
      responses: { 200: json(ref("Clock"), "the clock"), ...errors },
    },
    async (c) => {
      const subject = subjectParam(c);
      return c.json(clockView(await mustExist(subject)), 200);
    },
  );

  route(
    {
      method: "get",
      path: "/v1/subjects/{subject}/recall",
      summary: "What an agent should remember: the summary and its tail, or raw valid events",
      request: {
        params: subjectPath,
        query: z.object({
          scope: z.string().optional().openapi({ description: "that scope's items and the global ones" }),
          budget: z.string().optional().openapi({ description: "at most this many tokens (cl100k_base)" }),
          query: z.string().optional().openapi({ description: "lexical search over the cold layer" }),
          cursor: z.string().optional().openapi({ description: "nextCursor of the previous page" }),
        }),
      },
      responses: { 200: json(ref("Recall"), "the recall"), ...errors },
    },
    async (c) => {
      const subject = subjectParam(c);
      const parsed = parseRecallOptions(c.req.query());
      if (!parsed.success) {
        const issue = parsed.error.issues[0];
        throw invalid(issue?.path.join(".") || "query", issue?.message ?? "invalid");
      }
      // Recall reads the clock itself: a subject with no events is found unknown from its answer.
      const answer = await recall(deps, subject, parsed.data);
      if (answer.highWater === 0) throw unknownSubject(subject);
      options.recallServed?.(answer.mode);
      return c.json(answer, 200);
    },
  );

  route(
    {
      method: "post",
      path: "/v1/subjects/{subject}/consolidations",
      summary: "Queue a consolidation of the subject at its current clock",
      request: { params: subjectPath },
      responses: { 202: json(ref("Queued"), "queued"), ...errors },
    },
    async (c) => {
      const subject = subjectParam(c);
      const snapshot = await mustExist(subject);
      await deps.queue.send(snapshot);
      return c.json({ snapshot }, 202);
    },
  );

  route(
    {
      method: "get",
      path: "/v1/subjects/{subject}/artifacts",
      summary: "The subject's artifacts with their status",
      request: { params: subjectPath },
      responses: { 200: json(ref("ArtifactList"), "artifacts, oldest first"), ...errors },
    },
    async (c) => {
      const subject = subjectParam(c);
      await mustExist(subject);
      const records = await deps.artifacts.listRecords(subject);
      return c.json(
        { artifacts: records.map((r) => ({ ...r, status: shownStatus(r), lifecycle: r.status })) },
        200,
      );
    },
  );

  route(
    {
      method: "get",
      path: "/v1/artifacts/{artifactId}",
      summary: "One artifact: its record, manifest and body",
      request: { params: artifactPath },
      responses: { 200: json(ref("Artifact"), "the artifact"), ...errors },
    },
    async (c) => {
      const { subject, artifactId, record } = await artifactParam(c);
      const [manifest, body] = await Promise.all([
        deps.artifacts.readManifest(subject, artifactId),
        deps.artifacts.readArtifact(subject, artifactId),
      ]);
      return c.json(
        { record: { ...record, status: shownStatus(record), lifecycle: record.status }, manifest, body },
        200,
      );
    },
  );

  route(
    {
      method: "get",
      path: "/v1/artifacts/{artifactId}/lineage",
      summary: "An artifact's derivation (W3C PROV-JSON or Graphviz dot)",
      request: {
        params: artifactPath,
        query: z.object({
          format: z.string().optional().openapi({ description: "prov-json (default) or dot" }),
        }),
      },
      responses: {
        200: {
          description: "the lineage",
          content: {
            "application/json": { schema: ref("AnyObject") },
            "text/vnd.graphviz": { schema: { type: "string" } },
          },
        },
        ...errors,
      },
    },
    async (c) => {
      const format = c.req.query("format") ?? "prov-json";
      if (format !== "prov-json" && format !== "dot")
        throw invalid("format", `must be prov-json or dot, got "${format}"`);
      const { subject, artifactId, record } = await artifactParam(c);
      const [manifest, body] = await Promise.all([
        deps.artifacts.readManifest(subject, artifactId),
        deps.artifacts.readArtifact(subject, artifactId),
      ]);
      const input = { manifest, body, status: shownStatus(record) };
      if (format === "dot") return c.body(lineageDot(input), 200, { "content-type": "text/vnd.graphviz" });
      return c.json(lineageProv(input), 200);
    },
  );

  route(
    {
      method: "get",
      path: "/v1/subjects/{subject}/review",
      summary: "The current answer and each SHADOW candidate with its must-preserve checklist",
      request: { params: subjectPath },
      responses: { 200: json(ref("AnyObject"), "the review"), ...errors },
    },
    async (c) => {
      const subject = subjectParam(c);
      await mustExist(subject);
      const { current, shadows } = await review(deps, subject);
      return c.json({ current, shadows }, 200);
    },
  );

  route(
    {
      method: "post",
      path: "/v1/artifacts/{artifactId}/approve",
      summary: "Publish a reviewed SHADOW artifact through the same compare-and-set",
      request: { params: artifactPath },
      responses: {
        200: json(ref("AnyObject"), "published"),
        ...errors,
        409: json(ref("Problem"), "the publish was refused (the alias or epoch moved): rebuild"),
      },
    },
    async (c) => {
      const { artifactId } = await artifactParam(c);
      return c.json(await approve(deps, artifactId), 200);
    },
  );

  route(
    {
      method: "get",
      path: "/v1/subjects",
      summary: "Subjects with what recall serves now and the SHADOW artifacts awaiting review",
      request: {
        query: z.object({
          after: z.string().optional().openapi({ description: "the last subject of the previous page" }),
          limit: z.string().optional().openapi({ description: "at most this many (1–100, default 50)" }),
        }),
      },
      responses: { 200: json(ref("AnyObject"), "one page of subjects"), 400: errors[400] },
    },
    async (c) => {
      const after = c.req.query("after");
      const limitText = c.req.query("limit") ?? "50";
      if (!/^\d{1,3}$/.test(limitText) || Number(limitText) < 1 || Number(limitText) > 100)
        throw invalid("limit", "must be a whole number from 1 to 100");
      const limit = Number(limitText);
      const all = await deps.events.listSubjects();
      const page = all.filter((subject) => after === undefined || subject > after).slice(0, limit);
      const next = page.length === limit && all.indexOf(page[page.length - 1] as string) < all.length - 1;
      return c.json(
        { subjects: await subjectStatuses(deps, page), next: next ? page[page.length - 1] : null },
        200,
      );
    },
  );

  route(
    {
      method: "post",
      path: "/v1/artifacts/{artifactId}/reject",
      summary: "A reviewer's no: the SHADOW artifact becomes REJECTED (kept, never published)",
      request: { params: artifactPath },
      responses: {
        200: json(ref("AnyObject"), "rejected"),
        ...errors,
        409: json(ref("Problem"), "not a SHADOW artifact"),
      },
    },
    async (c) => {
      const { subject, artifactId } = await artifactParam(c);
      await reject(deps, subject, artifactId);
      return c.json({ status: "REJECTED", artifactId }, 200);
    },
  );

  route(
    {
      method: "get",
      path: "/v1/artifacts/{artifactId}/claims",
      summary: "Each claim (or those of one key) with the events it was derived from",
      request: {
        params: artifactPath,
        query: z.object({ key: z.string().optional().openapi({ description: "only this key's claims" }) }),
      },
      responses: { 200: json(ref("AnyObject"), "the claims and their evidence"), ...errors },
    },
    async (c) => {
      const { subject, artifactId } = await artifactParam(c);
      return c.json(await explainClaims(deps, subject, { artifactId, key: c.req.query("key") }), 200);
    },
  );

  app.get("/review", (c) => c.html(REVIEW_HTML, 200, REVIEW_HEADERS));
  app.get("/review/app.js", (c) =>
    c.body(REVIEW_SCRIPT, 200, { ...REVIEW_HEADERS, "content-type": "text/javascript; charset=utf-8" }),
  );
  app.get("/review/app.css", (c) =>
    c.body(REVIEW_STYLE, 200, { ...REVIEW_HEADERS, "content-type": "text/css; charset=utf-8" }),
  );

  route(
    {
      method: "get",
      path: "/v1/subjects/{subject}/policy",
      summary: "The subject's trust policy",
      request: { params: subjectPath },
      responses: { 200: json(ref("TrustPolicy"), "the policy"), ...errors },
    },
    async (c) => c.json(await deps.events.trustPolicy(subjectParam(c)), 200),
  );

  route(
    {
      method: "put",
      path: "/v1/subjects/{subject}/policy",
      summary: "Set the subject's trust policy (the epoch moves when validity changes)",
      request: {
        params: subjectPath,
        body: { required: true, content: { "application/json": { schema: ref("TrustPolicy") } } },
      },
      responses: { 200: json(ref("AnyObject"), "the policy and the clock after it"), ...errors },
    },
    async (c) => {
      const subject = subjectParam(c);
      const policy = parseBody(TrustPolicy.strict(), await readJson(c));
      return c.json(await changeTrustPolicy(deps, subject, policy), 200);
    },
  );

  route(
    {
      method: "get",
      path: "/v1/settings",
      summary: "The tenant's settings",
      responses: { 200: json(ref("Settings"), "the settings") },
    },
    async (c) => c.json(await deps.settings.settings(), 200),
  );

  route(
    {
      method: "put",
      path: "/v1/settings",
      summary: "Change the tenant's settings (publish mode, recall bypass, rebuild threshold)",
      request: { body: { required: true, content: { "application/json": { schema: ref("Settings") } } } },
      responses: { 200: json(ref("Settings"), "the settings after the change"), 400: errors[400] },
    },
    async (c) => {
      const patch = parseBody(SettingsPatch, await readJson(c));
      const clean = Object.fromEntries(Object.entries(patch).filter(([, v]) => v !== undefined));
      return c.json(await deps.settings.updateSettings(clean), 200);
    },
  );

  app.get("/healthz", (c) => c.json({ ok: true }, 200));
  app.doc31("/v1/openapi.json", {
    openapi: "3.1.0",
    info: {
      title: "memgate",
      version: "2",
      description: "Agents' long-term memory, consolidated without silently losing meaning (CONTRACT §6).",
    },
  });

  /** The subject's clock and alias in one read; 404 for a subject with no events: nothing to read. */
  async function mustExist(subject: string): Promise<Snapshot> {
    const snapshot = await deps.events.snapshot(subject);
    if (snapshot.highWater === 0 && snapshot.expectedAlias === null) throw unknownSubject(subject);
    return snapshot;
  }

  function clockView(snapshot: Snapshot) {
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

  async function artifactParam(c: Context) {
    const artifactId = c.req.param("artifactId") ?? "";
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

  return app;
}

/** The subject path segment under the contract's rule (1–128 characters after NFC, no controls). */
function unknownSubject(subject: string): HttpProblemError {
  return new HttpProblemError(404, "not-found", `subject: no events for "${subject}"`, "subject");
}

function subjectParam(c: Context): string {
  const parsed = Subject.safeParse(c.req.param("subject"));
  if (!parsed.success) throw invalid("subject", parsed.error.issues[0]?.message ?? "invalid subject");
  return parsed.data;
}

function parseBody<T>(schema: z.ZodType<T>, raw: unknown): T {
  const parsed = schema.safeParse(raw);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const field = fieldPath(issue?.path ?? [], "") || "body";
  throw invalid(field, issue?.message ?? "invalid");
}

function mediaType(c: Context): string {
  return (c.req.header("content-type") ?? "").split(";")[0]?.trim().toLowerCase() ?? "";
}

async function readJson(c: Context): Promise<unknown> {
  const type = mediaType(c);
  if (type !== "application/json")
    throw new HttpProblemError(
      415,
      "unsupported-media-type",
      `content-type: send application/json, got "${type}"`,
      "content-type",
    );
  const text = await c.req.text();
  try {
    return JSON.parse(text);
  } catch {
    throw invalid("body", "not valid JSON");
  }
}

/**
 * An event batch: `{"events":[…]}` as JSON or one event per line as NDJSON. Every event is checked
 * before anything is appended; the first bad one is named by its index and field. `sequence` is
 * the store's to assign and is dropped.
 */
async function readEvents(c: Context): Promise<MemoryEvent[]> {
  const type = mediaType(c);
  let raw: unknown[];
  if (type === "application/x-ndjson") {
    const lines = (await c.req.text()).split("\n");
    raw = [];
    for (const [index, line] of lines.entries()) {
      if (line.trim() === "") continue;
      if (raw.length >= MAX_EVENTS_PER_REQUEST) throw tooManyEvents();
      try {
        raw.push(JSON.parse(line));
      } catch {
        throw invalid(`line ${index + 1}`, "not valid JSON (NDJSON: one event per line)");
      }
    }
  } else {
    const body = await readJson(c);
    if (typeof body !== "object" || body === null || !Array.isArray((body as { events?: unknown }).events))
      throw invalid("events", 'send {"events":[MemoryEvent, …]}');
    raw = (body as { events: unknown[] }).events;
    if (raw.length > MAX_EVENTS_PER_REQUEST) throw tooManyEvents();
  }
  if (raw.length === 0) throw invalid("events", "send at least one event");
  return raw.map((item, index) => {
    const parsed = MemoryEvent.safeParse(item);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      const field = `events[${index}]${fieldPath(issue?.path ?? [], ".")}`;
      throw invalid(field, issue?.message ?? "invalid event");
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

const PUBLIC_PATHS = new Set(["/healthz", "/review", "/review/app.js", "/review/app.css"]);

function bearerAuth(token: string) {
  const expected = Buffer.from(`Bearer ${token}`);
  return async (c: Context, next: () => Promise<void>) => {
    // The health check and the review page's static files hold no memory: the page asks for the
    // token and sends it with every API call it makes.
    if (PUBLIC_PATHS.has(new URL(c.req.url).pathname)) return next();
    const given = Buffer.from(c.req.header("authorization") ?? "");
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
      c.header("WWW-Authenticate", 'Bearer realm="memgate"');
      return c.json(
        {
          error: {
            code: "unauthorized",
            message:
              "Authorization: send the token memgate serve was started with, as Authorization: Bearer <token>",
            field: "Authorization",
          },
        },
        401,
      );
    }
    return next();
  };
}
