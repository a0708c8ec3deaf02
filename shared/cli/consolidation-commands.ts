import { sweep } from "#app/append.ts";
import type { Deps } from "#app/deps.ts";
import { consolidationBudget, generate } from "#app/generate.ts";
import { publish } from "#app/publish.ts";
import { run } from "#app/run.ts";
import { knownSubjectSnapshot, readInputs, takeSnapshot } from "#app/snapshot.ts";
import { workOnMessage } from "#app/worker.ts";
import type { Snapshot } from "#domain/schemas.ts";
import { countTokens } from "#domain/tokens.ts";
import { InputError } from "#ports/errors.ts";
import {
  boundedInt,
  type Command,
  need,
  print,
  readSnapshot,
  storeCommand,
  subjectArg,
  type Values,
  withRuntime,
} from "./command.ts";
import type { Io } from "./output.ts";
import { EXIT } from "./output.ts";

/** The steps of a consolidation one by one (snapshot, generate, publish), together (run, consolidate), and the sweep. */
export const CONSOLIDATION_COMMANDS: Record<string, Command> = {
  snapshot: storeCommand(
    "memgate snapshot SUBJECT [--through H]",
    { through: { type: "string" } },
    async (values, positionals, io) => {
      const subject = subjectArg(positionals);
      return withRuntime(
        values,
        io,
        async (deps) => {
          const through = boundedInt(values, "through", Number.MAX_SAFE_INTEGER);
          await knownSubjectSnapshot(deps, subject);
          io.out(JSON.stringify(await takeSnapshot(deps, subject, through)));
          return EXIT.ok;
        },
        { readOnly: true },
      );
    },
  ),

  generate: storeCommand(
    "memgate generate SNAPSHOT.json [--model NAME] [--budget TOKENS]",
    {},
    async (values, positionals, io) => {
      const snapshot = await readSnapshot(need(positionals, 0, "SNAPSHOT.json"));
      return withRuntime(values, io, async (deps) => {
        const result = await generate(deps, snapshot);
        if (result.status === "dropped") {
          print(io, values, result, `dropped: ${result.reason}`);
          return EXIT.publishRefused;
        }
        print(
          io,
          values,
          result,
          `${result.status} ${result.artifactId} (${result.gate.reasons.length} gate reasons; not readable until published)`,
        );
        return result.status === "CANDIDATE" ? EXIT.ok : EXIT.rejected;
      });
    },
  ),

  prompt: storeCommand(
    "memgate prompt SNAPSHOT.json [--model NAME] [--budget TOKENS]\n\nThe rendered prompt(s) the model would be sent for the snapshot (each segment's, for segmented:<model>); nothing is sent.",
    {},
    async (values, positionals, io) => {
      const snapshot = await readSnapshot(need(positionals, 0, "SNAPSHOT.json"));
      return withRuntime(values, io, (deps) => showPrompts(deps, snapshot, values, io), {
        readOnly: true,
        renderOnly: true,
      });
    },
  ),

  publish: storeCommand("memgate publish ARTIFACT_ID", {}, async (values, positionals, io) => {
    const artifactId = need(positionals, 0, "ARTIFACT_ID");
    return withRuntime(values, io, async (deps) => {
      const result = await publish(deps, artifactId);
      print(
        io,
        values,
        result,
        result.status === "PUBLISHED" ? `PUBLISHED ${artifactId}` : `SHADOW ${artifactId} (awaiting review)`,
      );
      return EXIT.ok;
    });
  }),

  run: storeCommand("memgate run SNAPSHOT.json [--model NAME]", {}, async (values, positionals, io) => {
    const snapshot = await readSnapshot(need(positionals, 0, "SNAPSHOT.json"));
    return withRuntime(values, io, async (deps) => reportRun(await run(deps, snapshot), values, io));
  }),

  consolidate: storeCommand(
    "memgate consolidate SUBJECT [--model NAME]",
    {},
    async (values, positionals, io) => {
      const subject = subjectArg(positionals);
      return withRuntime(values, io, async (deps) => {
        // As the HTTP API's 404: consolidating a subject with no events would publish an empty
        // summary that makes it appear.
        await knownSubjectSnapshot(deps, subject);
        return reportRun(await run(deps, await takeSnapshot(deps, subject)), values, io);
      });
    },
  ),

  sweep: storeCommand(
    "memgate sweep [--run]\n\nRequests a rebuild for every subject that needs one by its committed state (events but no\nsummary, the epoch moved since the summary, a STALE summary, or rebuildAfterEvents uncovered\nevents) and finishes what a dead process left (STALE marks). A rebuild that came to nothing\n(REJECTED, failed) is tried again after 15, 30, 60 minutes, then left for a person; a SHADOW\nwaits for review. On the embedded store it also runs the\nrebuilds it requested (its queue lives in this process); on AWS the worker does, or --run here.",
    { run: { type: "boolean" } },
    async (values, _positionals, io) =>
      withRuntime(values, io, async (deps) => {
        const { requested, waiting, left } = await sweep(deps);
        const runs: Array<{ subject: string; status: string; artifactId?: string }> = [];
        if (values.store !== "aws" || values.run === true)
          for (const message of await drainQueue(deps, requested.length)) runs.push(message);
        const lines = [
          ...requested.map((r) => `rebuild requested for ${r.subject}: ${r.reason}`),
          ...runs.map((r) => `${r.status} ${r.artifactId ?? ""} (${r.subject})`),
          ...waiting.map((r) => `waiting: ${r.subject}: ${r.reason}`),
          ...left.map((r) => `left for a person: ${r.subject}: ${r.reason}`),
        ];
        print(
          io,
          values,
          { requested, runs, waiting, left },
          lines.length === 0 ? "nothing needs a rebuild" : lines.join("\n"),
        );
        return EXIT.ok;
      }),
  ),
};

/** The prompts a snapshot would send, rendered (`memgate prompt`); nothing is sent. */
async function showPrompts(deps: Deps, snapshot: Snapshot, values: Values, io: Io): Promise<number> {
  const current = await deps.events.snapshot(snapshot.subject);
  if (snapshot.highWater > current.highWater)
    throw new InputError(
      `the snapshot covers through ${snapshot.highWater}, but the log of ${snapshot.subject} ends at ${current.highWater}`,
    );
  const { context } = await readInputs(deps, snapshot.subject, snapshot.highWater);
  const budget = await consolidationBudget(deps);
  const previews =
    deps.model.preview?.({
      snapshot,
      context,
      prompt: deps.prompt,
      ...(budget === undefined ? {} : { budget }),
    }) ?? [];
  const prompts = previews.map((preview) => ({
    ...preview,
    tokens: countTokens(preview.system) + countTokens(preview.prompt),
  }));
  if (values.json === true) {
    io.out(
      JSON.stringify({
        model: deps.model.name,
        rendererVersion: deps.model.rendererVersion ?? null,
        prompts,
      }),
    );
    return EXIT.ok;
  }
  if (prompts.length === 0) {
    io.out(`${deps.model.name} sends no prompt: it writes its answer without a language model`);
    return EXIT.ok;
  }
  prompts.forEach((p, i) => {
    io.out(
      `=== ${p.kind} prompt ${i + 1} of ${prompts.length} · ${p.hash} · ${p.tokens} tokens${p.segment ? ` · segment ${p.segment}` : ""}\n--- system\n${p.system}\n--- user\n${p.prompt}`,
    );
  });
  if (deps.model.name.startsWith("segmented:"))
    io.out("=== summary prompt: rendered from the segments' answers, after they arrive");
  return EXIT.ok;
}

/** Runs queued snapshots as the worker would (the same use case), acknowledging each: what `sweep` requested. */
async function drainQueue(
  deps: Deps,
  expected: number,
): Promise<Array<{ subject: string; status: string; artifactId?: string }>> {
  const done: Array<{ subject: string; status: string; artifactId?: string }> = [];
  while (done.length < expected) {
    const messages = await deps.queue.receive(10);
    if (messages.length === 0) break;
    for (const message of messages) {
      const outcome = await workOnMessage(deps, message.body);
      if (outcome.action === "retry") {
        await deps.queue.release(message.receipt);
        throw outcome.error;
      }
      await deps.queue.ack(message.receipt);
      done.push({
        subject: message.body.subject,
        status: outcome.status === "refused" ? `refused (${outcome.refusal})` : outcome.status,
        ...("artifactId" in outcome ? { artifactId: outcome.artifactId } : {}),
      });
    }
  }
  return done;
}

/** A run's outcome: exit 0 published or shadowed, 1 rejected, 4 dropped (a fresher snapshot is the way on). */
export function reportRun(result: Awaited<ReturnType<typeof run>>, values: Values, io: Io): number {
  if (result.status === "dropped") {
    print(io, values, result, `dropped: ${result.reason}`);
    return EXIT.publishRefused;
  }
  print(io, values, result, `${result.status} ${result.artifactId}`);
  return result.status === "REJECTED" ? EXIT.rejected : EXIT.ok;
}
