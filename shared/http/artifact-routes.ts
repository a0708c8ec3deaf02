import { createRoute, z } from "@hono/zod-openapi";
import type { Deps } from "#app/deps.ts";
import { explainClaims } from "#app/explain.ts";
import { lineageDot, lineageProv } from "#app/lineage.ts";
import { knownSubjectSnapshot } from "#app/snapshot.ts";
import { type ArtifactRecord, shownStatus } from "#ports/artifact-records.ts";
import { Answers, type ListedRecord } from "./components.ts";
import {
  ArtifactPath,
  artifactRoute,
  findArtifact,
  invalid,
  jsonAnswer,
  parseSubject,
  REFUSALS,
  resourceRouter,
  subjectRoute,
} from "./router.ts";

const list = subjectRoute({
  method: "get",
  path: "/v1/subjects/{subject}/artifacts",
  summary: "The subject's artifacts with their status",
  responses: { 200: jsonAnswer(Answers.ArtifactList, "artifacts, oldest first") },
});

const artifact = artifactRoute({
  method: "get",
  path: "/v1/artifacts/{artifactId}",
  summary: "One artifact: its record, manifest and body",
  responses: { 200: jsonAnswer(Answers.Artifact, "the artifact") },
});

const lineage = createRoute({
  method: "get",
  path: "/v1/artifacts/{artifactId}/lineage",
  summary: "An artifact's derivation (W3C PROV-JSON or Graphviz dot)",
  request: {
    params: ArtifactPath,
    query: z.object({
      format: z.string().optional().openapi({ description: "prov-json (default) or dot" }),
    }),
  },
  responses: {
    200: {
      description: "the lineage",
      content: {
        "application/json": { schema: Answers.AnyObject },
        "text/vnd.graphviz": { schema: { type: "string" as const } },
      },
    },
    ...REFUSALS,
  },
});

const claims = createRoute({
  method: "get",
  path: "/v1/artifacts/{artifactId}/claims",
  summary: "Each claim (or those of one key) with the events it was derived from",
  request: {
    params: ArtifactPath,
    query: z.object({ key: z.string().optional().openapi({ description: "only this key's claims" }) }),
  },
  responses: { 200: jsonAnswer(Answers.AnyObject, "the claims and their evidence"), ...REFUSALS },
});

/** What was made of a subject's events: artifacts with their status, lineage and claims' evidence. */
export function artifactRoutes(deps: Deps) {
  return resourceRouter()
    .openapi(list, async (c) => {
      const subject = parseSubject(c.req.valid("param").subject);
      await knownSubjectSnapshot(deps, subject);
      const records = await deps.artifacts.listRecords(subject);
      return c.json({ artifacts: records.map(listed) }, 200);
    })
    .openapi(artifact, async (c) => {
      const { subject, artifactId, record } = await findArtifact(deps, c.req.valid("param").artifactId);
      const [manifest, body] = await Promise.all([
        deps.artifacts.readManifest(subject, artifactId),
        deps.artifacts.readArtifact(subject, artifactId),
      ]);
      return c.json({ record: listed(record), manifest, body }, 200);
    })
    .openapi(lineage, async (c) => {
      const format = c.req.valid("query").format ?? "prov-json";
      if (format !== "prov-json" && format !== "dot")
        throw invalid("format", `must be prov-json or dot, got "${format}"`);
      const { subject, artifactId, record } = await findArtifact(deps, c.req.valid("param").artifactId);
      const [manifest, body] = await Promise.all([
        deps.artifacts.readManifest(subject, artifactId),
        deps.artifacts.readArtifact(subject, artifactId),
      ]);
      const input = { manifest, body, status: shownStatus(record) };
      if (format === "dot") return c.body(lineageDot(input), 200, { "content-type": "text/vnd.graphviz" });
      return c.json(lineageProv(input), 200);
    })
    .openapi(claims, async (c) => {
      const { subject, artifactId } = await findArtifact(deps, c.req.valid("param").artifactId);
      return c.json(await explainClaims(deps, subject, { artifactId, key: c.req.valid("query").key }), 200);
    });
}

/** A record as listings show it. */
function listed(record: ArtifactRecord): ListedRecord {
  return { ...record, status: shownStatus(record), lifecycle: record.status };
}
