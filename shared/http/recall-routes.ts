import { createRoute, z } from "@hono/zod-openapi";
import { currentSummary } from "#app/current-summary.ts";
import type { Deps } from "#app/deps.ts";
import { type RecallFormat, recall, textVersionOf } from "#app/recall.ts";
import { parseRecallOptions } from "#app/recall-options.ts";
import { renderServedRecallText } from "#app/recall-text.ts";
import { knownSubjectSnapshot, unknownSubjectError } from "#app/snapshot.ts";
import { firstIssue } from "#runtime/issues.ts";
import { Answers } from "./components.ts";
import {
  invalid,
  jsonAnswer,
  parseSubject,
  REFUSALS,
  resourceRouter,
  SubjectPath,
  subjectRoute,
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
      query: z.string().optional().openapi({
        description:
          "the question to answer, as an agent asks it: the claims and events it reaches are ranked first (CONTRACT §6 Search)",
      }),
      cursor: z.string().optional().openapi({ description: "nextCursor of the previous page" }),
      format: z.string().optional().openapi({
        description:
          "json (default), text (the recall as an agent reads it, CONTRACT §5a version 2) or text-v1 (its first version); without it, `Accept: text/plain` asks for text",
      }),
    }),
  },
  responses: {
    200: {
      description: "the recall (JSON, or text when asked for)",
      content: {
        "application/json": { schema: Answers.Recall },
        "text/plain": {
          schema: z
            .string()
            .openapi({ description: "CONTRACT §5a, memgate-recall-text/2 (or /1 with format=text-v1)" }),
        },
      },
    },
    ...REFUSALS,
  },
});

/** How an HTTP reader searches the cold layer (CONTRACT §5a's HINT). */
const HTTP_SEARCH_HINT = "GET /v1/subjects/{subject}/recall?query=WORDS";

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
      const format = parsed.data.format ?? formatAccepted(c.req.header("accept"));
      const options = { ...parsed.data, format, searchHint: HTTP_SEARCH_HINT };
      // Recall reads the clock itself: a subject with no events is found unknown from its answer.
      const answer = await recall(deps, subject, options);
      if (answer.highWater === 0) throw unknownSubjectError(subject);
      recallServed?.(answer.mode);
      const version = textVersionOf(format);
      if (version !== null)
        return c.text(renderServedRecallText(answer, { ...options, version }).text, 200, {
          "content-type": "text/plain; charset=utf-8",
        });
      return c.json(answer, 200);
    })
    .openapi(consolidate, async (c) => {
      const snapshot = await knownSubjectSnapshot(deps, parseSubject(c.req.valid("param").subject));
      // A retry, or a request on an unchanged subject: the published summary is the answer.
      const built = await currentSummary(deps, snapshot);
      if (built !== null) return c.json({ snapshot, queued: false, artifactId: built.artifactId }, 202);
      await deps.queue.send(snapshot);
      return c.json({ snapshot, queued: true }, 202);
    });
}

/**
 * The rendering an Accept header prefers: text when it rates `text/plain` above
 * `application/json` (each by its most specific matching range: exact, then `type/*`, then `*\/*`;
 * q defaults to 1), JSON otherwise: without the header, with `*\/*`, and on a tie.
 */
export function formatAccepted(accept: string | undefined): RecallFormat {
  if (accept === undefined) return "json";
  const ranges = accept.split(",").map((part) => {
    const [range = "", ...parameters] = part.split(";").map((piece) => piece.trim().toLowerCase());
    const q = parameters.find((parameter) => parameter.startsWith("q="));
    const quality = q === undefined ? 1 : Number(q.slice(2));
    return { range, quality: Number.isFinite(quality) ? quality : 0 };
  });
  const rate = (type: string): number => {
    const [major] = type.split("/");
    for (const candidate of [type, `${major}/*`, "*/*"]) {
      const found = ranges.find((r) => r.range === candidate);
      if (found) return found.quality;
    }
    return 0;
  };
  return rate("text/plain") > rate("application/json") ? "text" : "json";
}
