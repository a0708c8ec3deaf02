import type { Deps } from "#app/deps.ts";
import { approve, reject, review } from "#app/review.ts";
import { knownSubjectSnapshot } from "#app/snapshot.ts";
import { Answers } from "./components.ts";
import {
  artifactRoute,
  findArtifact,
  jsonAnswer,
  parseSubject,
  resourceRouter,
  subjectRoute,
} from "./router.ts";

const reviewRoute = subjectRoute({
  method: "get",
  path: "/v1/subjects/{subject}/review",
  summary: "The current answer and each SHADOW candidate with its must-preserve checklist",
  responses: { 200: jsonAnswer(Answers.AnyObject, "the review") },
});

const approveRoute = artifactRoute({
  method: "post",
  path: "/v1/artifacts/{artifactId}/approve",
  summary: "Publish a reviewed SHADOW artifact through the same compare-and-set",
  responses: {
    200: jsonAnswer(Answers.AnyObject, "published"),
    409: jsonAnswer(Answers.Problem, "the publish was refused (the alias or epoch moved): rebuild"),
  },
});

const rejectRoute = artifactRoute({
  method: "post",
  path: "/v1/artifacts/{artifactId}/reject",
  summary: "A reviewer's no: the SHADOW artifact becomes REJECTED (kept, never published)",
  responses: {
    200: jsonAnswer(Answers.AnyObject, "rejected"),
    409: jsonAnswer(Answers.Problem, "not a SHADOW artifact"),
  },
});

/** A reviewer's view of SHADOW candidates and their yes (approve) or no (reject). */
export function reviewRoutes(deps: Deps) {
  return resourceRouter()
    .openapi(reviewRoute, async (c) => {
      const subject = parseSubject(c.req.valid("param").subject);
      await knownSubjectSnapshot(deps, subject);
      const { current, shadows } = await review(deps, subject);
      return c.json({ current, shadows }, 200);
    })
    .openapi(approveRoute, async (c) => {
      const { artifactId } = await findArtifact(deps, c.req.valid("param").artifactId);
      return c.json(await approve(deps, artifactId), 200);
    })
    .openapi(rejectRoute, async (c) => {
      const { subject, artifactId } = await findArtifact(deps, c.req.valid("param").artifactId);
      await reject(deps, subject, artifactId);
      return c.json({ status: "REJECTED", artifactId }, 200);
    });
}
