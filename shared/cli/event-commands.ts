import { appendValidEvents, revokeEvents } from "#app/append.ts";
import { parseEventLines } from "#io/event-file.ts";
import { readUserText } from "#io/read-text.ts";
import { type Command, need, print, storeCommand, subjectArg, text, withRuntime } from "./command.ts";
import { EXIT } from "./output.ts";

/** The raw layer: append events, revoke one, read the clock. */
export const EVENT_COMMANDS: Record<string, Command> = {
  append: storeCommand(
    "memgate append SUBJECT FILE.jsonl|- [--home DIR] [--store aws] [--json]",
    {},
    async (values, positionals, io) => {
      const subject = subjectArg(positionals);
      const file = need(positionals, 1, "FILE.jsonl (or - for standard input)");
      const events = parseEventLines(await readUserText(file, "events file"), file, {
        assignSequence: false,
      }).map(({ sequence: _s, ...event }) => event);
      return withRuntime(values, io, async (deps) => {
        const result = await appendValidEvents(deps, subject, events);
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

  revoke: storeCommand(
    "memgate revoke SUBJECT EVENT_ID [--reason TEXT]",
    { reason: { type: "string" } },
    async (values, positionals, io) => {
      const subject = subjectArg(positionals);
      const eventId = need(positionals, 1, "EVENT_ID");
      return withRuntime(values, io, async (deps) => {
        const result = await revokeEvents(deps, subject, [eventId], text(values, "reason"));
        print(
          io,
          values,
          result,
          result.alreadyRevoked.length > 0
            ? `${eventId} was already revoked: nothing appended (highWater ${result.highWater}, epoch ${result.inputEpoch})`
            : `revoked ${eventId}: epoch ${result.inputEpoch}; STALE: ${result.staled.join(", ") || "none"}${result.rebuildRequested ? "; rebuild requested" : ""}`,
        );
        return EXIT.ok;
      });
    },
  ),

  clock: storeCommand("memgate clock SUBJECT", {}, async (values, positionals, io) => {
    const subject = subjectArg(positionals);
    return withRuntime(
      values,
      io,
      async (deps) => {
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
      },
      { readOnly: true },
    );
  }),
};
