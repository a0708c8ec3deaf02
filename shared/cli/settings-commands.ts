import { changeTrustPolicy } from "#app/append.ts";
import { recover } from "#app/recover.ts";
import { migrateSelectors } from "#app/selector-migration.ts";
import { TrustPolicy } from "#domain/schemas.ts";
import { SELECTOR_VERSION, SELECTOR_VERSIONS, type SelectorVersion } from "#domain/validity.ts";
import { describeIssues } from "#runtime/issues.ts";
import {
  boundedInt,
  type Command,
  print,
  storeCommand,
  subjectArg,
  text,
  texts,
  withRuntime,
} from "./command.ts";
import { reportRun } from "./consolidation-commands.ts";
import { EXIT, UsageError } from "./output.ts";

/** How the store behaves: tenant settings, a subject's trust policy, selector migration and recovery. */
export const SETTINGS_COMMANDS: Record<string, Command> = {
  settings: storeCommand(
    "memgate settings [--publish-mode live|shadow] [--bypass on|off] [--rebuild-after EVENTS] [--model NAME]\n\n--model sets the model commands and memgate serve use when none is named (the Lambdas take MEMGATE_MODEL from the stack).",
    { "publish-mode": { type: "string" }, bypass: { type: "string" }, "rebuild-after": { type: "string" } },
    async (values, _positionals, io) => {
      const mode = publishModeFlag(text(values, "publish-mode"));
      const bypass = text(values, "bypass");
      const rebuildAfter = boundedInt(values, "rebuild-after", 1_000_000);
      if (rebuildAfter === 0) throw new UsageError("--rebuild-after must be at least 1");
      if (bypass !== undefined && bypass !== "on" && bypass !== "off")
        throw new UsageError(`--bypass must be on or off, got "${bypass}"`);
      const model = text(values, "model");
      return withRuntime(values, io, async (deps) => {
        const patch = {
          ...(mode === undefined ? {} : { publishMode: mode }),
          ...(bypass === undefined ? {} : { recallBypass: bypass === "on" }),
          ...(rebuildAfter === undefined ? {} : { rebuildAfterEvents: rebuildAfter }),
          ...(model === undefined ? {} : { model }),
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

  policy: storeCommand(
    "memgate policy SUBJECT [--min-trust untrusted|tool|user|verified] [--block SOURCE]... [--unblock SOURCE]...",
    {
      "min-trust": { type: "string" },
      block: { type: "string", multiple: true },
      unblock: { type: "string", multiple: true },
    },
    async (values, positionals, io) => {
      const subject = subjectArg(positionals);
      const minTrust = text(values, "min-trust");
      const block = texts(values, "block");
      const unblock = texts(values, "unblock");
      return withRuntime(values, io, async (deps) => {
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

  migrate: storeCommand(
    "memgate migrate\n\nMoves every subject created before selector v2 onto it: where v2 reads a log differently\n(a supersession chain, a compatible pair v1 called a conflict) the epoch moves once, recall\nfalls back to raw and a rebuild is requested. The embedded store does this by itself when\nopened; run it once on a DynamoDB table (--store aws).",
    {},
    async (values, _positionals, io) =>
      withRuntime(values, io, async (deps) => {
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

  recover: storeCommand(
    "memgate recover SUBJECT [--selector v1|v2] [--prompt VERSION] [--model NAME]",
    { selector: { type: "string" } },
    async (values, positionals, io) => {
      const subject = subjectArg(positionals);
      const selector = text(values, "selector") ?? SELECTOR_VERSION;
      if (!isSelectorVersion(selector))
        throw new UsageError(`--selector must be one of ${SELECTOR_VERSIONS.join(", ")}, got "${selector}"`);
      return withRuntime(
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
        { selectorVersion: selector },
      );
    },
  ),
};

function publishModeFlag(mode: string | undefined): "live" | "shadow" | undefined {
  if (mode === undefined || mode === "live" || mode === "shadow") return mode;
  throw new UsageError(`--publish-mode must be live or shadow, got "${mode}"`);
}

function isSelectorVersion(name: string): name is SelectorVersion {
  return (SELECTOR_VERSIONS as readonly string[]).includes(name);
}
