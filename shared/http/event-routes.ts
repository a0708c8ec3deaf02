import { createRoute } from "@hono/zod-openapi";
import { appendValidEvents, revokeEvents } from "#app/append.ts";
import type { Deps } from "#app/deps.ts";
import { knownSubjectSnapshot } from "#app/snapshot.ts";
import { Answers, Revocations, ref } from "./components.ts";
import {
  clockView,
  jsonAnswer,
  parseBody,
  parseSubject,
  REFUSALS,
  readEvents,
  readJson,
  resourceRouter,
  SubjectPath,
  subjectRoute,
} from "./router.ts";

const append = createRoute({
  method: "post",
  path: "/v1/subjects/{subject}/events",
  summary: "Append memory events (write-once, idempotent per event id)",
  request: {
    params: SubjectPath,
    body: {
      required: true,
      content: {
        "application/json": { schema: ref("EventBatch") },
        "application/x-ndjson": { schema: ref("MemoryEvent") },
      },
    },
  },
  responses: {
    200: jsonAnswer(Answers.AppendResult, "appended"),
    ...REFUSALS,
    409: jsonAnswer(Answers.Problem, "an event id re-sent with different content"),
    413: jsonAnswer(Answers.Problem, "over 1,000 events or 5 MiB"),
    415: jsonAnswer(Answers.Problem, "not JSON or NDJSON"),
  },
});

const revoke = createRoute({
  method: "post",
  path: "/v1/subjects/{subject}/revocations",
  summary: "Revoke events: recall stops serving what used them at once",
  request: {
    params: SubjectPath,
    body: { required: true, content: { "application/json": { schema: ref("Revocations") } } },
  },
  responses: { 200: jsonAnswer(Answers.Clock, "the clock after the revocation"), ...REFUSALS },
});

const clock = subjectRoute({
  method: "get",
  path: "/v1/subjects/{subject}/clock",
  summary: "The subject's clock and read alias",
  responses: { 200: jsonAnswer(Answers.Clock, "the clock") },
});

/** The raw layer: events appended and revoked, the clock they move. */
export function eventRoutes(deps: Deps) {
  return resourceRouter()
    .openapi(append, async (c) => {
      const subject = parseSubject(c.req.valid("param").subject);
      const events = await readEvents(c.req.raw, deps.pause);
      const outcome = await appendValidEvents(deps, subject, events);
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
    })
    .openapi(revoke, async (c) => {
      const subject = parseSubject(c.req.valid("param").subject);
      const body = parseBody(Revocations, await readJson(c.req.raw, deps.pause));
      await knownSubjectSnapshot(deps, subject);
      const outcome = await revokeEvents(deps, subject, body.eventIds, body.reason);
      return c.json(
        {
          ...clockView(await deps.events.snapshot(subject)),
          staled: outcome.staled,
          rebuildRequested: outcome.rebuildRequested,
          alreadyRevoked: outcome.alreadyRevoked,
        },
        200,
      );
    })
    .openapi(clock, async (c) => {
      const subject = parseSubject(c.req.valid("param").subject);
      return c.json(clockView(await knownSubjectSnapshot(deps, subject)), 200);
    });
}
