import { createRoute, z } from "@hono/zod-openapi";
import type { Deps } from "#app/deps.ts";
import { recall } from "#app/recall.ts";
import { parseRecallOptions } from "#app/recall-options.ts";
import { firstIssue } from "#runtime/issues.ts";
import { Answers } from "./components.ts";
import {
  invalid,
  jsonAnswer,
  mustExist,
  parseSubject,
  REFUSALS,
  resourceRouter,
  SubjectPath,
  subjectRoute,
  unknownSubject,
} from "./router.ts";

const recallRoute = createRoute({
  method: "get",
  path: "/v1/subjects/{subject}/recall",
  summary: "What an agent should remember: the summary and its tail, or raw valid events",
  request: {
    params: SubjectPath,
    query: z.object({
      scope: z.string().optional().openapi({ description: "that scope's items and the global ones" }),
      budget: z.string().optional().openapi({ description: "at most this many tokens (cl100k_base)" }),
      query: z.string().optional().openapi({ description: "lexical search over the cold layer" }),
      cursor: z.string().optional().openapi({ description: "nextCursor of the previous page" }),
    }),
  },
  responses: { 200: jsonAnswer(Answers.Recall, "the recall"), ...REFUSALS },
});

const consolidate = subjectRoute({
  method: "post",
  path: "/v1/subjects/{subject}/consolidations",
  summary: "Queue a consolidation of the subject at its current clock",
  responses: { 202: jsonAnswer(Answers.Queued, "queued") },
});

/** Reading memory (recall) and asking for a new summary of it (a consolidation, queued). */
export function recallRoutes(deps: Deps, recallServed?: (mode: "summary" | "raw") => void) {
  return resourceRouter()
    .openapi(recallRoute, async (c) => {
      const subject = parseSubject(c.req.valid("param").subject);
      // Every query parameter, not only the documented ones: an unknown one is refused, as on the CLI.
      const parsed = parseRecallOptions(c.req.query());
      if (!parsed.success) {
        const { field, message } = firstIssue(parsed.error, "query", { style: "dots" });
        throw invalid(field, message);
      }
      // Recall reads the clock itself: a subject with no events is found unknown from its answer.
      const answer = await recall(deps, subject, parsed.data);
      if (answer.highWater === 0) throw unknownSubject(subject);
      recallServed?.(answer.mode);
      return c.json(answer, 200);
    })
    .openapi(consolidate, async (c) => {
      const snapshot = await mustExist(deps, parseSubject(c.req.valid("param").subject));
      await deps.queue.send(snapshot);
      return c.json({ snapshot }, 202);
    });
}
