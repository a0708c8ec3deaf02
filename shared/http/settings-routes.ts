import { createRoute, z } from "@hono/zod-openapi";
import { changeStoreLatest, changeTrustPolicy } from "#app/append.ts";
import type { Deps } from "#app/deps.ts";
import { subjectStatuses } from "#app/review.ts";
import { policyAsSet } from "#domain/readings.ts";
import { TrustPolicy } from "#domain/schemas.ts";
import { Answers, ref, SettingsPatch } from "./components.ts";
import {
  invalid,
  jsonAnswer,
  parseBody,
  parseSubject,
  REFUSALS,
  readJson,
  resourceRouter,
  SubjectPath,
  subjectRoute,
} from "./router.ts";

const getPolicy = subjectRoute({
  method: "get",
  path: "/v1/subjects/{subject}/policy",
  summary: "The subject's trust policy",
  responses: { 200: jsonAnswer(Answers.TrustPolicy, "the policy") },
});

const putPolicy = createRoute({
  method: "put",
  path: "/v1/subjects/{subject}/policy",
  summary: "Set the subject's trust policy (the epoch moves when validity changes)",
  request: {
    params: SubjectPath,
    body: { required: true, content: { "application/json": { schema: ref("TrustPolicy") } } },
  },
  responses: { 200: jsonAnswer(Answers.AnyObject, "the policy and the clock after it"), ...REFUSALS },
});

const getSettings = createRoute({
  method: "get",
  path: "/v1/settings",
  summary: "The tenant's settings",
  responses: { 200: jsonAnswer(Answers.Settings, "the settings") },
});

const putSettings = createRoute({
  method: "put",
  path: "/v1/settings",
  summary:
    "Change the tenant's settings (publish mode, recall bypass, rebuild threshold, default latest rules, the summary's default token budget: null clears it)",
  request: { body: { required: true, content: { "application/json": { schema: ref("Settings") } } } },
  responses: { 200: jsonAnswer(Answers.Settings, "the settings after the change"), 400: REFUSALS[400] },
});

const subjects = createRoute({
  method: "get",
  path: "/v1/subjects",
  summary: "Subjects with what recall serves now and the SHADOW artifacts awaiting review",
  request: {
    query: z.object({
      after: z.string().optional().openapi({ description: "the last subject of the previous page" }),
      limit: z.string().optional().openapi({ description: "at most this many (1–100, default 50)" }),
    }),
  },
  responses: { 200: jsonAnswer(Answers.AnyObject, "one page of subjects"), 400: REFUSALS[400] },
});

/** A subject's trust policy and the tenant's settings. */
export function policyRoutes(deps: Deps) {
  return resourceRouter()
    .openapi(getPolicy, async (c) =>
      // The policy as set: its own latest rules, never the store default it may follow.
      c.json(policyAsSet(await deps.events.storedPolicy(parseSubject(c.req.valid("param").subject))), 200),
    )
    .openapi(putPolicy, async (c) => {
      const subject = parseSubject(c.req.valid("param").subject);
      const policy = parseBody(TrustPolicy.strict(), await readJson(c.req.raw, deps.pause));
      return c.json(await changeTrustPolicy(deps, subject, policy), 200);
    });
}

/** The tenant's settings. */
export function settingsRoutes(deps: Deps) {
  return resourceRouter()
    .openapi(getSettings, async (c) => c.json(await deps.settings.settings(), 200))
    .openapi(putSettings, async (c) => {
      const { publishMode, recallBypass, rebuildAfterEvents, latest, budget } = parseBody(
        SettingsPatch,
        await readJson(c.req.raw, deps.pause),
      );
      const settings = await deps.settings.updateSettings({
        ...(publishMode === undefined ? {} : { publishMode }),
        ...(recallBypass === undefined ? {} : { recallBypass }),
        ...(rebuildAfterEvents === undefined ? {} : { rebuildAfterEvents }),
        ...(budget === undefined ? {} : { budget }),
      });
      if (latest === undefined) return c.json(settings, 200);
      // The store's default rules are applied to every subject, not only written.
      await changeStoreLatest(deps, latest);
      return c.json(await deps.settings.settings(), 200);
    });
}

/** The subjects, a page at a time, with what recall serves for each. */
export function subjectRoutes(deps: Deps) {
  return resourceRouter().openapi(subjects, async (c) => {
    const { after, limit: limitText = "50" } = c.req.valid("query");
    if (!/^\d{1,3}$/.test(limitText) || Number(limitText) < 1 || Number(limitText) > 100)
      throw invalid("limit", "must be a whole number from 1 to 100");
    const page = await deps.events.subjectsPage(after ?? null, Number(limitText));
    const last = page.subjects.at(-1);
    return c.json(
      { subjects: await subjectStatuses(deps, page.subjects), next: page.more && last ? last : null },
      200,
    );
  });
}
