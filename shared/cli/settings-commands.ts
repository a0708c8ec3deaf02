import { changeStoreLatest, changeTrustPolicy } from "#app/append.ts";
import { recover } from "#app/recover.ts";
import { migrateSelectors } from "#app/selector-migration.ts";
import { effectivePolicy, policyAsSet, sameRules } from "#domain/readings.ts";
import {
  type LatestRule,
  LatestRule as LatestRuleSchema,
  LatestRules,
  TrustPolicy,
} from "#domain/schemas.ts";
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

/** The most a budget setting may ask for (as `--budget` anywhere). */
const MAX_SETTING_BUDGET = 100_000_000;

/** How the store behaves: tenant settings, a subject's trust policy, selector migration and recovery. */
export const SETTINGS_COMMANDS: Record<string, Command> = {
  settings: storeCommand(
    "memgate settings [--publish-mode live|shadow] [--bypass on|off] [--rebuild-after EVENTS] [--model NAME]\n  [--budget TOKENS|none] [--latest RULE]... [--drop-latest RULE]...\n\n--model sets the model commands and memgate serve use when none is named (the Lambdas take MEMGATE_MODEL from the stack).\n--budget sets the summary's token budget every consolidation uses when none is given (the Lambdas too,\nover the stack's budgetTokens); none clears it.\n--latest and --drop-latest edit the store's default latest rules, which every subject without\nrules of its own follows; the change is applied to every subject (an epoch moves where readings change).",
    {
      "publish-mode": { type: "string" },
      bypass: { type: "string" },
      "rebuild-after": { type: "string" },
      latest: { type: "string", multiple: true },
      "drop-latest": { type: "string", multiple: true },
    },
    async (values, _positionals, io) => {
      const add = latestRules(texts(values, "latest"), "--latest");
      const drop = latestRules(texts(values, "drop-latest"), "--drop-latest");
      const mode = publishModeFlag(text(values, "publish-mode"));
      const bypass = text(values, "bypass");
      const rebuildAfter = boundedInt(values, "rebuild-after", 1_000_000);
      if (rebuildAfter === 0) throw new UsageError("--rebuild-after must be at least 1");
      if (bypass !== undefined && bypass !== "on" && bypass !== "off")
        throw new UsageError(`--bypass must be on or off, got "${bypass}"`);
      const model = text(values, "model");
      const budget = budgetSetting(text(values, "budget"));
      // --budget here is the setting, not a budget for this process.
      return withRuntime({ ...values, budget: undefined }, io, async (deps) => {
        const patch = {
          ...(mode === undefined ? {} : { publishMode: mode }),
          ...(bypass === undefined ? {} : { recallBypass: bypass === "on" }),
          ...(rebuildAfter === undefined ? {} : { rebuildAfterEvents: rebuildAfter }),
          ...(model === undefined ? {} : { model }),
          ...(budget === undefined ? {} : { budget }),
        };
        if (Object.keys(patch).length > 0) await deps.settings.updateSettings(patch);
        if (add.length + drop.length > 0) {
          const edited = editedRules((await deps.settings.settings()).latest ?? [], add, drop);
          const parsed = LatestRules.safeParse(edited);
          if (!parsed.success) throw new UsageError(`latest: ${describeIssues(parsed.error)}`);
          await changeStoreLatest(deps, parsed.data);
        }
        const settings = await deps.settings.settings();
        print(
          io,
          values,
          settings,
          `publish mode ${settings.publishMode}, recall bypass ${settings.recallBypass ? "on" : "off"}, rebuild after ${settings.rebuildAfterEvents} uncovered events, model ${settings.model ?? "deterministic-v1"}, budget ${settings.budget === null ? "none" : `${settings.budget} tokens`}, latest ${describeRules(settings.latest ?? [])}`,
        );
        return EXIT.ok;
      });
    },
  ),

  policy: storeCommand(
    'memgate policy SUBJECT [--min-trust untrusted|tool|user|verified] [--block SOURCE]... [--unblock SOURCE]...\n  [--latest RULE]... [--drop-latest RULE]... [--latest-default]\n\nA RULE is a key glob ("stock.*": every scope) or {"key": glob, "scope": glob} as JSON. --latest and\n--drop-latest edit the rules that apply to the subject (its own, else the store default) into\nits own; --latest-default drops its own rules, so the store default (memgate settings) applies.',
    {
      "min-trust": { type: "string" },
      block: { type: "string", multiple: true },
      unblock: { type: "string", multiple: true },
      latest: { type: "string", multiple: true },
      "drop-latest": { type: "string", multiple: true },
      "latest-default": { type: "boolean" },
    },
    async (values, positionals, io) => {
      const subject = subjectArg(positionals);
      const minTrust = text(values, "min-trust");
      const block = texts(values, "block");
      const unblock = texts(values, "unblock");
      const add = latestRules(texts(values, "latest"), "--latest");
      const drop = latestRules(texts(values, "drop-latest"), "--drop-latest");
      const followDefault = values["latest-default"] === true;
      if (followDefault && add.length + drop.length > 0)
        throw new UsageError(
          "--latest-default drops the subject's own rules; it takes no --latest or --drop-latest",
        );
      return withRuntime(values, io, async (deps) => {
        const stored = await deps.events.storedPolicy(subject);
        const current = policyAsSet(stored);
        const applied = effectivePolicy(stored).latest ?? [];
        if (
          minTrust === undefined &&
          block.length + unblock.length + add.length + drop.length === 0 &&
          !followDefault
        ) {
          print(
            io,
            values,
            { ...current, effectiveLatest: applied },
            `minTrust ${current.minTrust}; blocked: ${current.blockedSources.join(", ") || "none"}; latest: ${describeRules(applied)}${current.latest === undefined ? " (the store default)" : ""}`,
          );
          return EXIT.ok;
        }
        const parsed = TrustPolicy.safeParse({
          minTrust: minTrust ?? current.minTrust,
          blockedSources: [...new Set([...current.blockedSources, ...block])].filter(
            (source) => !unblock.includes(source),
          ),
          ...(followDefault
            ? {}
            : add.length + drop.length > 0
              ? { latest: editedRules(applied, add, drop) }
              : current.latest === undefined
                ? {}
                : { latest: current.latest }),
        });
        if (!parsed.success) throw new UsageError(describeIssues(parsed.error));
        const result = await changeTrustPolicy(deps, subject, parsed.data);
        print(
          io,
          values,
          result,
          `policy set: minTrust ${result.policy.minTrust}, blocked ${result.policy.blockedSources.join(", ") || "none"}, latest ${describeRules(result.effectivePolicy.latest ?? [])}${result.policy.latest === undefined ? " (the store default)" : ""}; epoch ${result.inputEpoch}; STALE: ${result.staled.join(", ") || "none"}`,
        );
        return EXIT.ok;
      });
    },
  ),

  migrate: storeCommand(
    "memgate migrate\n\nMoves every subject created before selector v3 onto it: where v3 reads a log differently\n(v1: a supersession chain, a compatible pair v1 called a conflict; v2: a latest rule already\nset) the epoch moves once, recall falls back to raw and a rebuild is requested; a v2 subject\nwithout rules moves with nothing else changed. The embedded store does this by itself when\nopened; run it once on a DynamoDB table (--store aws). On DynamoDB it also lists the subjects\ncreated before the subject index in it (the sweep does that too, a part each run).",
    {},
    async (values, _positionals, io) =>
      withRuntime(values, io, async (deps) => {
        const migrated = await migrateSelectors(deps);
        const moved = migrated.filter((m) => m.epochMoved);
        // DynamoDB: the subject index lists every subject from here on (the sweep does it too).
        const indexed = await deps.events.indexSubjects();
        print(
          io,
          values,
          { migrated },
          `${migrated.length} subjects moved to selector ${SELECTOR_VERSION}; epoch moved for ${moved.length}${moved.length > 0 ? `: ${moved.map((m) => m.subject).join(", ")}` : ""}; ${indexed.added} older subjects listed in the subject index`,
        );
        return EXIT.ok;
      }),
  ),

  recover: storeCommand(
    "memgate recover SUBJECT [--selector v1|v2|v3] [--prompt VERSION] [--model NAME]",
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

/** `--budget TOKENS` (1 to 100000000) or `none` (clears the setting); undefined when not given. */
function budgetSetting(value: string | undefined): number | null | undefined {
  if (value === undefined) return undefined;
  if (value === "none") return null;
  if (!/^\d{1,9}$/.test(value) || Number(value) < 1 || Number(value) > MAX_SETTING_BUDGET)
    throw new UsageError(
      `--budget must be a whole number of tokens from 1 to ${MAX_SETTING_BUDGET}, or none to clear it; got "${value}"`,
    );
  return Number(value);
}

function publishModeFlag(mode: string | undefined): "live" | "shadow" | undefined {
  if (mode === undefined || mode === "live" || mode === "shadow") return mode;
  throw new UsageError(`--publish-mode must be live or shadow, got "${mode}"`);
}

function isSelectorVersion(name: string): name is SelectorVersion {
  return (SELECTOR_VERSIONS as readonly string[]).includes(name);
}

/** `--latest` rules: a key glob, or `{"key": glob, "scope": glob}` as JSON; each checked before a store opens. */
function latestRules(values: readonly string[], flag: string): LatestRule[] {
  return values.map((text) => {
    let raw: unknown = text;
    if (text.trimStart().startsWith("{"))
      try {
        raw = JSON.parse(text);
      } catch {
        throw new UsageError(
          `${flag} "${text}" is not JSON; a rule is a key glob or {"key": glob, "scope": glob}`,
        );
      }
    const parsed = LatestRuleSchema.safeParse(raw);
    if (!parsed.success) throw new UsageError(`${flag} "${text}": ${describeIssues(parsed.error)}`);
    return parsed.data;
  });
}

/** `rules` with `add` appended and `drop` removed, each rule once, in the order first given. */
function editedRules(
  rules: readonly LatestRule[],
  add: readonly LatestRule[],
  drop: readonly LatestRule[],
): LatestRule[] {
  return [...rules, ...add].filter(
    (rule, index, all) =>
      !drop.some((dropped) => sameRules([dropped], [rule])) &&
      all.findIndex((other) => sameRules([other], [rule])) === index,
  );
}

function describeRules(rules: readonly LatestRule[]): string {
  if (rules.length === 0) return "none";
  return rules.map((rule) => (typeof rule === "string" ? rule : `${rule.key} in ${rule.scope}`)).join(", ");
}
