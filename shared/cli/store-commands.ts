import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { StoreHomeError } from "#adapters/embedded/sqlite-store.ts";
import { appendEvents, changeTrustPolicy, revokeEvents, sweep } from "#app/append.ts";
import { subjectOfArtifact } from "#app/artifact-id.ts";
import { audit } from "#app/audit.ts";
import type { Deps } from "#app/deps.ts";
import { generate } from "#app/generate.ts";
import { lineageDot, lineageProv } from "#app/lineage.ts";
import { publish } from "#app/publish.ts";
import type { Recall } from "#app/recall.ts";
import { recall } from "#app/recall.ts";
import { parseRecallOptions } from "#app/recall-options.ts";
import { recover } from "#app/recover.ts";
import { approve, review } from "#app/review.ts";
import { run } from "#app/run.ts";
import { migrateSelectors } from "#app/selector-migration.ts";
import { readInputs, takeSnapshot } from "#app/snapshot.ts";
import { workOnMessage } from "#app/worker.ts";
import { Snapshot, Subject, TrustPolicy } from "#domain/schemas.ts";
import { EventLogError } from "#domain/selector.ts";
import { countTokens } from "#domain/tokens.ts";
import { SELECTOR_VERSION, SELECTOR_VERSIONS, type SelectorVersion } from "#domain/validity.ts";
import { startLocalServer } from "#http/local-server.ts";
import { describeIssues, InputError, parseEventLines } from "#io/event-file.ts";
import { readUserText } from "#io/read-text.ts";
import { createMcpServer } from "#mcp/server.ts";
import { shownStatus } from "#ports/artifact-records.ts";
import {
  AlreadyWrittenError,
  AppendRejectedError,
  EventConflictError,
  NotFoundError,
  PublishRefusedError,
  StoreContentionError,
} from "#ports/errors.ts";
import { GenerationFailedError } from "#ports/model.ts";
import { env } from "#runtime/config.ts";
import type { Io } from "./output.ts";
import { EXIT, MEMGATE_VERSION, UsageError } from "./output.ts";
import { checkModelName, openStores, pipelineDeps } from "./wiring.ts";

/** Flags every store command takes. */
export const STORE_OPTIONS = {
  home: { type: "string" },
  store: { type: "string" },
  model: { type: "string" },
  prompt: { type: "string" },
  budget: { type: "string" },
  "timeout-ms": { type: "string" },
} as const;

type Values = Record<string, string | boolean | undefined>;

/** A whole-number flag, digits only (no exponent, sign or fraction), at most `max`. */
function boundedInt(value: string | boolean | undefined, flag: string, max: number): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== "string" || !/^\d{1,15}$/.test(value) || Number(value) > max)
    throw new UsageError(`${flag} must be a whole number from 0 to ${max}, got "${String(value)}"`);
  return Number(value);
}

/** Opens the stores and the use cases' dependencies, runs `work`, always closes. */
async function withDeps<T>(
  values: Values,
  io: Io,
  work: (deps: Deps) => Promise<T>,
  options: { selectorVersion?: SelectorVersion; readOnly?: boolean; renderOnly?: boolean } = {},
): Promise<T> {
  // Every flag is checked before a store is opened: a refused command creates nothing.
  const store = (values.store as string | undefined) ?? "embedded";
  if (store !== "embedded" && store !== "aws")
    throw new UsageError(`--store must be embedded or aws, got "${store}"`);
  const pipeline = {
    model: values.model as string | undefined,
    prompt: values.prompt as string | undefined,
    budget: boundedInt(values.budget, "--budget", MAX_BUDGET_TOKENS),
    timeoutMs: boundedInt(values["timeout-ms"], "--timeout-ms", MAX_TIMEOUT_MS),
    progress: (line: string) => io.err(`memgate: ${line}`),
    renderOnly: options.renderOnly,
  };
  if (pipeline.model !== undefined && !options.renderOnly) checkModelName(pipeline.model);
  const stores = await openStores({
    store,
    home: values.home as string | undefined,
    mustExist: options.readOnly === true,
  });
  try {
    // No --model: the store's own setting (`memgate settings --model`), else deterministic-v1.
    if (pipeline.model === undefined) pipeline.model = (await stores.settings.settings()).model;
    let deps: Deps;
    try {
      deps = {
        ...pipelineDeps(stores, pipeline),
        ...(options.selectorVersion ? { selectorVersion: options.selectorVersion } : {}),
      };
    } catch (error) {
      if (error instanceof UsageError) throw error;
      throw new InputError(error instanceof Error ? error.message : String(error), { cause: error });
    }
    // The embedded store moves its subjects to the current selector when it is opened (a query
    // that finds none once done); a DynamoDB table is moved once by `memgate migrate --store aws`.
    if (store === "embedded") await migrateSelectors(deps);
    return await work(deps);
  } finally {
    stores.close();
  }
}

/** withDeps for commands that only read: on a missing embedded home they say so and create nothing. */
function withStoreDeps<T>(values: Values, io: Io, work: (deps: Deps) => Promise<T>): Promise<T> {
  return withDeps(values, io, work, { readOnly: true });
}

/** Far above any summary's budget, far below where token counting or JSON numbers misbehave. */
const MAX_BUDGET_TOKENS = 100_000_000;
const MAX_TIMEOUT_MS = 3_600_000;

/** The SUBJECT argument under the contract's rule (1–128 characters after NFC, no control characters). */
function subjectArg(positionals: string[]): string {
  const parsed = Subject.safeParse(need(positionals, 0, "SUBJECT"));
  if (!parsed.success) throw new UsageError(`SUBJECT: ${parsed.error.issues[0]?.message ?? "invalid"}`);
  return parsed.data;
}

function need(positionals: string[], index: number, what: string): string {
  const value = positionals[index];
  if (value === undefined || value === "") throw new UsageError(`${what} is required`);
  return value;
}

async function readSnapshot(path: string): Promise<Snapshot> {
  let json: unknown;
  try {
    json = JSON.parse(await readUserText(path, "snapshot file"));
  } catch (error) {
    if (error instanceof InputError) throw error;
    throw new InputError(`${path}: not valid JSON`, { cause: error });
  }
  const parsed = Snapshot.safeParse(json);
  if (!parsed.success) throw new InputError(`${path}: ${describeIssues(parsed.error)}`);
  return parsed.data;
}

function print(io: Io, values: Values, json: unknown, human: string): void {
  io.out(values.json === true ? JSON.stringify(json) : human);
}

export interface StoreCommand {
  usage: string;
  options: Record<string, { type: "string" | "boolean"; multiple?: boolean }>;
  run(values: Values, positionals: string[], io: Io): Promise<number>;
}

const command = (
  usage: string,
  extra: Record<string, { type: "string" | "boolean"; multiple?: boolean }>,
  body: StoreCommand["run"],
): StoreCommand => ({
  usage,
  options: { ...STORE_OPTIONS, ...extra },
  run: (values, positionals, io) => mapErrors(() => body(values, positionals, io), io),
});

/** Domain outcomes become the contract's exit codes, with one clear line on stderr. */
async function mapErrors(body: () => Promise<number>, io: Io): Promise<number> {
  try {
    return await body();
  } catch (error) {
    if (error instanceof PublishRefusedError) {
      io.err(`memgate: ${error.message}`);
      return EXIT.publishRefused;
    }
    if (error instanceof StoreContentionError) {
      io.err(`memgate: ${error.message}`);
      return EXIT.engineFailed;
    }
    if (error instanceof GenerationFailedError) {
      io.err(`memgate: generation failed: ${error.message}`);
      return EXIT.generationFailed;
    }
    if (
      error instanceof EventConflictError ||
      error instanceof AppendRejectedError ||
      error instanceof EventLogError ||
      error instanceof NotFoundError ||
      error instanceof AlreadyWrittenError ||
      error instanceof StoreHomeError
    )
      throw new InputError(error.message, { cause: error });
    throw error;
  }
}

function describeRecall(result: Recall): string {
  const lines = [`${result.mode.toUpperCase()}: ${result.reason}`];
  if (result.mode === "summary") {
    if (result.summary) lines.push(`summary: ${result.summary}`);
    for (const claim of result.claims)
      lines.push(
        `  ${claim.status === "contested" ? "contested" : "claim"} ${claim.key}${claim.scope === "global" ? "" : ` @ ${claim.scope}`} = ${JSON.stringify(claim.value)}${claim.polarity === "negated" ? " (negated)" : ""}  <- ${claim.derivedFrom.join(", ")}`,
      );
    for (const item of result.pending)
      lines.push(`  pending: ${item.text}  <- ${item.derivedFrom.join(", ")}`);
    for (const event of result.tail)
      lines.push(`  tail ${event.sequence} ${event.eventId}: ${event.text ?? ""}`);
    for (const event of result.cold)
      lines.push(`  cold match ${event.sequence} ${event.eventId}: ${event.text ?? ""}`);
  } else {
    for (const event of result.events)
      lines.push(`  ${event.sequence} ${event.eventId} [${event.kind}] ${event.text ?? ""}`);
  }
  if (result.nextCursor) lines.push(`more: --cursor ${result.nextCursor}`);
  return lines.join("\n");
}

export const STORE_COMMANDS: Record<string, StoreCommand> = {
  append: command(
    "memgate append SUBJECT FILE.jsonl|- [--home DIR] [--store aws] [--json]",
    {},
    async (values, positionals, io) => {
      const subject = subjectArg(positionals);
      const file = need(positionals, 1, "FILE.jsonl (or - for standard input)");
      const events = parseEventLines(await readUserText(file, "events file"), file, {
        assignSequence: false,
      }).map(({ sequence: _s, ...event }) => event);
      return withDeps(values, io, async (deps) => {
        const result = await appendEvents(deps, subject, events);
        print(
          io,
          values,
          result,
          `appended ${result.appended.length} (${result.duplicates.length} already stored); highWater ${result.highWater}, epoch ${result.inputEpoch}${result.epochMoved ? " (moved)" : ""}${result.staled.length > 0 ? `; STALE: ${result.staled.join(", ")}` : ""}`,
        );
        return EXIT.ok;
      });
    },
  ),

  revoke: command(
    "memgate revoke SUBJECT EVENT_ID [--reason TEXT]",
    { reason: { type: "string" } },
    async (values, positionals, io) => {
      const subject = subjectArg(positionals);
      const eventId = need(positionals, 1, "EVENT_ID");
      return withDeps(values, io, async (deps) => {
        const result = await revokeEvents(deps, subject, [eventId], values.reason as string | undefined);
        print(
          io,
          values,
          result,
          `revoked ${eventId}: epoch ${result.inputEpoch}; STALE: ${result.staled.join(", ") || "none"}; rebuild requested`,
        );
        return EXIT.ok;
      });
    },
  ),

  clock: command("memgate clock SUBJECT", {}, async (values, positionals, io) => {
    const subject = subjectArg(positionals);
    return withStoreDeps(values, io, async (deps) => {
      const snapshot = await deps.events.snapshot(subject);
      const alias = snapshot.expectedAlias
        ? {
            artifactId: snapshot.expectedAlias.parentArtifactId,
            sourceEpoch: snapshot.expectedAlias.sourceEpoch,
            coversThrough: snapshot.expectedAlias.coversThrough,
          }
        : null;
      const json = { highWater: snapshot.highWater, inputEpoch: snapshot.inputEpoch, alias };
      print(
        io,
        values,
        json,
        `highWater ${json.highWater}, epoch ${json.inputEpoch}, alias ${alias ? `${alias.artifactId} (epoch ${alias.sourceEpoch}, covers ${alias.coversThrough})` : "none"}`,
      );
      return EXIT.ok;
    });
  }),

  snapshot: command(
    "memgate snapshot SUBJECT [--through H]",
    { through: { type: "string" } },
    async (values, positionals, io) => {
      const subject = subjectArg(positionals);
      return withStoreDeps(values, io, async (deps) => {
        const snapshot = await takeSnapshot(
          deps,
          subject,
          boundedInt(values.through, "--through", Number.MAX_SAFE_INTEGER),
        );
        io.out(JSON.stringify(snapshot));
        return EXIT.ok;
      });
    },
  ),

  generate: command(
    "memgate generate SNAPSHOT.json [--model NAME] [--budget TOKENS]",
    {},
    async (values, positionals, io) => {
      const snapshot = await readSnapshot(need(positionals, 0, "SNAPSHOT.json"));
      return withDeps(values, io, async (deps) => {
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

  prompt: command(
    "memgate prompt SNAPSHOT.json [--model NAME] [--budget TOKENS]\n\nThe rendered prompt(s) the model would be sent for the snapshot (each segment's, for segmented:<model>); nothing is sent.",
    {},
    async (values, positionals, io) => {
      const snapshot = await readSnapshot(need(positionals, 0, "SNAPSHOT.json"));
      return withDeps(
        values,
        io,
        async (deps) => {
          const current = await deps.events.snapshot(snapshot.subject);
          if (snapshot.highWater > current.highWater)
            throw new InputError(
              `the snapshot covers through ${snapshot.highWater}, but the log of ${snapshot.subject} ends at ${current.highWater}`,
            );
          const { context } = await readInputs(deps, snapshot.subject, snapshot.highWater);
          const previews =
            deps.model.preview?.({
              snapshot,
              context,
              prompt: deps.prompt,
              ...(deps.budget === undefined ? {} : { budget: deps.budget }),
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
        },
        { readOnly: true, renderOnly: true },
      );
    },
  ),

  publish: command("memgate publish ARTIFACT_ID", {}, async (values, positionals, io) => {
    const artifactId = need(positionals, 0, "ARTIFACT_ID");
    return withDeps(values, io, async (deps) => {
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

  run: command("memgate run SNAPSHOT.json [--model NAME]", {}, async (values, positionals, io) => {
    const snapshot = await readSnapshot(need(positionals, 0, "SNAPSHOT.json"));
    return withDeps(values, io, async (deps) => runAndReport(deps, snapshot, values, io));
  }),

  consolidate: command("memgate consolidate SUBJECT [--model NAME]", {}, async (values, positionals, io) => {
    const subject = subjectArg(positionals);
    return withDeps(values, io, async (deps) =>
      runAndReport(deps, await takeSnapshot(deps, subject), values, io),
    );
  }),

  recall: command(
    "memgate recall SUBJECT [--scope S] [--budget TOKENS] [--query TEXT] [--cursor C]",
    { cursor: { type: "string" }, scope: { type: "string" }, query: { type: "string" } },
    async (values, positionals, io) => {
      const subject = subjectArg(positionals);
      const options = parseRecallOptions({
        budget: values.budget,
        cursor: values.cursor,
        scope: values.scope,
        query: values.query,
      });
      if (!options.success) throw new UsageError(`--${describeIssues(options.error)}`);
      return withStoreDeps(values, io, async (deps) => {
        const result = await recall(deps, subject, options.data);
        print(io, values, result, describeRecall(result));
        return EXIT.ok;
      });
    },
  ),

  artifacts: command("memgate artifacts SUBJECT", {}, async (values, positionals, io) => {
    const subject = subjectArg(positionals);
    return withStoreDeps(values, io, async (deps) => {
      const records = await deps.artifacts.listRecords(subject);
      print(
        io,
        values,
        // The contract's status (STALE when marked), the lifecycle beside it.
        records.map((r) => ({ ...r, status: shownStatus(r), lifecycle: r.status })),
        records.length === 0
          ? `no artifacts for ${subject}`
          : records
              .map(
                (r) =>
                  `${shownStatus(r).padEnd(10)} ${r.artifactId}  covers ${r.coversThrough} at epoch ${r.inputEpoch}  gate ${r.gate.verdict}`,
              )
              .join("\n"),
      );
      return EXIT.ok;
    });
  }),

  lineage: command(
    "memgate lineage ARTIFACT_ID [--format prov-json|dot]",
    { format: { type: "string" } },
    async (values, positionals, io) => {
      const artifactId = need(positionals, 0, "ARTIFACT_ID");
      const format = (values.format as string | undefined) ?? "prov-json";
      if (format !== "prov-json" && format !== "dot")
        throw new UsageError(`--format must be prov-json or dot, got "${format}"`);
      return withStoreDeps(values, io, async (deps) => {
        const subject = subjectOfArtifact(artifactId);
        const [manifest, body, record] = await Promise.all([
          deps.artifacts.readManifest(subject, artifactId),
          deps.artifacts.readArtifact(subject, artifactId),
          deps.artifacts.getRecord(subject, artifactId),
        ]);
        const input = { manifest, body, status: record ? shownStatus(record) : "UNKNOWN" };
        io.out(
          format === "dot"
            ? lineageDot(input)
            : JSON.stringify(lineageProv(input), null, values.json === true ? 0 : 2),
        );
        return EXIT.ok;
      });
    },
  ),

  review: command("memgate review SUBJECT", {}, async (values, positionals, io) => {
    const subject = subjectArg(positionals);
    return withStoreDeps(values, io, async (deps) => {
      const result = await review(deps, subject);
      print(io, values, result, result.text);
      return EXIT.ok;
    });
  }),

  approve: command("memgate approve ARTIFACT_ID", {}, async (values, positionals, io) => {
    const artifactId = need(positionals, 0, "ARTIFACT_ID");
    return withDeps(values, io, async (deps) => {
      const result = await approve(deps, artifactId);
      print(io, values, result, `PUBLISHED ${artifactId} after review`);
      return EXIT.ok;
    });
  }),

  recover: command(
    "memgate recover SUBJECT [--selector v1|v2] [--prompt VERSION] [--model NAME]",
    { selector: { type: "string" } },
    async (values, positionals, io) => {
      const subject = subjectArg(positionals);
      const selector = (values.selector as string | undefined) ?? SELECTOR_VERSION;
      if (!(SELECTOR_VERSIONS as readonly string[]).includes(selector))
        throw new UsageError(`--selector must be one of ${SELECTOR_VERSIONS.join(", ")}, got "${selector}"`);
      return withDeps(
        values,
        io,
        async (deps) => {
          const result = await recover(deps, subject);
          if (result.status === "current") {
            print(io, values, result, result.reason);
            return EXIT.ok;
          }
          return reportRun(result, values, io);
        },
        { selectorVersion: selector as SelectorVersion },
      );
    },
  ),

  sweep: command(
    "memgate sweep [--run]\n\nRequests a rebuild for every subject that needs one by its committed state (events but no\nsummary, the epoch moved since the summary, or rebuildAfterEvents uncovered events) and\nfinishes what a dead process left (STALE marks). On the embedded store it also runs the\nrebuilds it requested (its queue lives in this process); on AWS the worker does, or --run here.",
    { run: { type: "boolean" } },
    async (values, _positionals, io) =>
      withDeps(values, io, async (deps) => {
        const requested = await sweep(deps);
        const runs: Array<{ subject: string; status: string; artifactId?: string }> = [];
        if (values.store !== "aws" || values.run === true)
          for (const message of await drainQueue(deps, requested.length)) runs.push(message);
        print(
          io,
          values,
          { requested, runs },
          requested.length === 0
            ? "nothing needs a rebuild"
            : [
                ...requested.map((r) => `rebuild requested for ${r.subject}: ${r.reason}`),
                ...runs.map((r) => `${r.status} ${r.artifactId ?? ""} (${r.subject})`),
              ].join("\n"),
        );
        return EXIT.ok;
      }),
  ),

  serve: command(
    "memgate serve [--port 8787] [--host 127.0.0.1] [--token T] [--home DIR] [--store aws] [--model NAME]\n\nThe HTTP API (CONTRACT §6) over the store, with the consolidation worker in process and a sweep\nat start and every minute. Binds loopback by default; with --token (or $MEMGATE_TOKEN) every\nroute but /healthz needs Authorization: Bearer <token>. Prints its URL; one log line per request\ngoes to stderr. SIGINT or SIGTERM stops it after the current generation.",
    { port: { type: "string" }, host: { type: "string" }, token: { type: "string" } },
    async (values, _positionals, io) => {
      const port = boundedInt(values.port, "--port", 65_535) ?? 8787;
      const host = (values.host as string | undefined) ?? "127.0.0.1";
      if (host.trim() === "")
        throw new UsageError("--host is empty: name an address to bind (default 127.0.0.1)");
      const token = (values.token as string | undefined) ?? env.MEMGATE_TOKEN;
      if (token !== undefined && token.length < 8)
        throw new UsageError("--token must be at least 8 characters (or leave it out on loopback)");
      return withDeps(values, io, async (deps) => {
        let server: Awaited<ReturnType<typeof startLocalServer>>;
        try {
          server = await startLocalServer(deps, {
            port,
            host,
            token,
            out: (line) => io.out(line),
            log: (line) => io.err(`memgate: ${line}`),
          });
        } catch (error) {
          const code = (error as NodeJS.ErrnoException).code;
          if (code === "EADDRINUSE" || code === "EADDRNOTAVAIL" || code === "EACCES")
            throw new InputError(
              `--host ${host} --port ${port}: cannot listen there (${code}); choose another`,
            );
          throw error;
        }
        if (token === undefined && !["127.0.0.1", "::1", "localhost"].includes(host))
          io.err(
            `memgate: warning: listening on ${host} without --token: anyone who can reach it reads and writes memory`,
          );
        await new Promise<void>((resolve) => {
          process.once("SIGINT", resolve);
          process.once("SIGTERM", resolve);
        });
        io.err("memgate: stopping: no new requests; finishing the current generation");
        await server.close();
        io.err("memgate: stopped");
        return EXIT.ok;
      });
    },
  ),

  mcp: command(
    "memgate mcp [--subject SUBJECT] [--home DIR] [--store aws] [--model NAME]\n\nmemgate as a Model Context Protocol server over stdio: tools remember, recall, forget,\nconsolidate and explain, the same use cases as the CLI and the HTTP API. Add it to an MCP\nclient's configuration as the command `npx memgate mcp --home <DIR>`. Logs go to stderr.",
    { subject: { type: "string" } },
    async (values, _positionals, io) => {
      const subject = values.subject === undefined ? undefined : subjectArg([values.subject as string]);
      return withDeps(values, io, async (deps) => {
        const server = createMcpServer({ deps, defaultSubject: subject, version: MEMGATE_VERSION });
        const closed = new Promise<void>((resolve) => {
          server.onclose = resolve;
        });
        await server.connect(new StdioServerTransport());
        // The client closing our stdin ends the session.
        process.stdin.once("end", () => void server.close());
        io.err(`memgate: MCP server ready on stdio${subject ? ` (default subject ${subject})` : ""}`);
        await closed;
        return EXIT.ok;
      });
    },
  ),

  audit: command(
    "memgate audit [SUBJECT...] [--sample N] [--seed S] [--json]\n\nThe independent check of what recall serves: for each subject serving a summary, its inputs are\nselected again from the raw layer and hashed again, the input root compared with the manifest's,\nand the current gate run again on the stored answer. A stale-visible or false-fact finding is\ncontained at once (the summary is marked STALE, recall answers raw, a rebuild is requested).\nExit 1 when anything was found.",
    { sample: { type: "string" }, seed: { type: "string" } },
    async (values, positionals, io) => {
      const subjects =
        positionals.length > 0 ? positionals.map((subject) => subjectArg([subject])) : undefined;
      const sample = boundedInt(values.sample, "--sample", 1_000_000);
      const seed = boundedInt(values.seed, "--seed", 4_294_967_295);
      return withStoreDeps(values, io, async (deps) => {
        const report = await audit(deps, {
          ...(subjects ? { subjects } : {}),
          ...(sample === undefined ? {} : { sample }),
          ...(seed === undefined ? {} : { seed }),
        });
        print(
          io,
          values,
          report,
          [
            `${report.subjects} subjects audited, ${report.served} serving a summary: stale visible ${report.staleVisible}, false facts ${report.falseFact}`,
            ...report.findings.map((f) => `  ${f.kind} ${f.subject} ${f.artifactId}: ${f.detail}`),
            ...(report.contained.length > 0
              ? [`contained (now STALE, rebuild requested): ${report.contained.join(", ")}`]
              : []),
          ].join("\n"),
        );
        return report.findings.length > 0 ? EXIT.rejected : EXIT.ok;
      });
    },
  ),

  migrate: command(
    "memgate migrate\n\nMoves every subject created before selector v2 onto it: where v2 reads a log differently\n(a supersession chain, a compatible pair v1 called a conflict) the epoch moves once, recall\nfalls back to raw and a rebuild is requested. The embedded store does this by itself when\nopened; run it once on a DynamoDB table (--store aws).",
    {},
    async (values, _positionals, io) =>
      withDeps(values, io, async (deps) => {
        const migrated = await migrateSelectors(deps);
        const moved = migrated.filter((m) => m.epochMoved);
        print(
          io,
          values,
          { migrated },
          `${migrated.length} subjects moved to selector ${SELECTOR_VERSION}; epoch moved for ${moved.length}${moved.length > 0 ? `: ${moved.map((m) => m.subject).join(", ")}` : ""}`,
        );
        return EXIT.ok;
      }),
  ),

  policy: command(
    "memgate policy SUBJECT [--min-trust untrusted|tool|user|verified] [--block SOURCE]... [--unblock SOURCE]...",
    {
      "min-trust": { type: "string" },
      block: { type: "string", multiple: true },
      unblock: { type: "string", multiple: true },
    },
    async (values, positionals, io) => {
      const subject = subjectArg(positionals);
      const minTrust = values["min-trust"] as string | undefined;
      const block = (values.block as unknown as string[] | undefined) ?? [];
      const unblock = (values.unblock as unknown as string[] | undefined) ?? [];
      return withDeps(values, io, async (deps) => {
        const current = await deps.events.trustPolicy(subject);
        if (minTrust === undefined && block.length === 0 && unblock.length === 0) {
          print(
            io,
            values,
            current,
            `minTrust ${current.minTrust}; blocked: ${current.blockedSources.join(", ") || "none"}`,
          );
          return EXIT.ok;
        }
        const parsed = TrustPolicy.safeParse({
          minTrust: minTrust ?? current.minTrust,
          blockedSources: [...new Set([...current.blockedSources, ...block])].filter(
            (source) => !unblock.includes(source),
          ),
        });
        if (!parsed.success) throw new UsageError(describeIssues(parsed.error));
        const result = await changeTrustPolicy(deps, subject, parsed.data);
        print(
          io,
          values,
          result,
          `policy set: minTrust ${result.policy.minTrust}, blocked ${result.policy.blockedSources.join(", ") || "none"}; epoch ${result.inputEpoch}; STALE: ${result.staled.join(", ") || "none"}`,
        );
        return EXIT.ok;
      });
    },
  ),

  settings: command(
    "memgate settings [--publish-mode live|shadow] [--bypass on|off] [--rebuild-after EVENTS] [--model NAME]\n\n--model sets the model commands and memgate serve use when none is named (the Lambdas take MEMGATE_MODEL from the stack).",
    { "publish-mode": { type: "string" }, bypass: { type: "string" }, "rebuild-after": { type: "string" } },
    async (values, _positionals, io) => {
      const mode = values["publish-mode"] as string | undefined;
      const bypass = values.bypass as string | undefined;
      const rebuildAfter = boundedInt(values["rebuild-after"], "--rebuild-after", 1_000_000);
      if (rebuildAfter === 0) throw new UsageError("--rebuild-after must be at least 1");
      if (mode !== undefined && mode !== "live" && mode !== "shadow")
        throw new UsageError(`--publish-mode must be live or shadow, got "${mode}"`);
      if (bypass !== undefined && bypass !== "on" && bypass !== "off")
        throw new UsageError(`--bypass must be on or off, got "${bypass}"`);
      return withDeps(values, io, async (deps) => {
        const patch = {
          ...(mode === undefined ? {} : { publishMode: mode as "live" | "shadow" }),
          ...(bypass === undefined ? {} : { recallBypass: bypass === "on" }),
          ...(rebuildAfter === undefined ? {} : { rebuildAfterEvents: rebuildAfter }),
          ...(typeof values.model === "string" ? { model: values.model } : {}),
        };
        const settings =
          Object.keys(patch).length > 0
            ? await deps.settings.updateSettings(patch)
            : await deps.settings.settings();
        print(
          io,
          values,
          settings,
          `publish mode ${settings.publishMode}, recall bypass ${settings.recallBypass ? "on" : "off"}, rebuild after ${settings.rebuildAfterEvents} uncovered events, model ${settings.model ?? "deterministic-v1"}`,
        );
        return EXIT.ok;
      });
    },
  ),
};

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

async function runAndReport(deps: Deps, snapshot: Snapshot, values: Values, io: Io): Promise<number> {
  return reportRun(await run(deps, snapshot), values, io);
}

function reportRun(result: Awaited<ReturnType<typeof run>>, values: Values, io: Io): number {
  if (result.status === "dropped") {
    print(io, values, result, `dropped: ${result.reason}`);
    return EXIT.publishRefused;
  }
  print(io, values, result, `${result.status} ${result.artifactId}`);
  return result.status === "REJECTED" ? EXIT.rejected : EXIT.ok;
}
