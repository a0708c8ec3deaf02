import { appendValidEvents, revokeEvents } from "#app/append.ts";
import { knownSubjectSnapshot } from "#app/snapshot.ts";
import { parseEventLines } from "#io/event-file.ts";
import { readUserText } from "#io/read-text.ts";
import {
  type Command,
  need,
  print,
  storeCommand,
  subjectArg,
  text,
  type Values,
  withRuntime,
} from "./command.ts";
import { EXIT, shellWord } from "./output.ts";

/**
 * Who builds a rebuild this command's write requested (as the MCP tools' `rebuild` says of
 * theirs). On the embedded store the request lives in this process's queue, which ends with it: a
 * `memgate serve` or `memgate mcp` on the same home finds the subject at its next sweep, or the
 * user consolidates. On AWS the request is on the tenant's queue, which its worker consumes.
 */
function whoRebuilds(values: Values, subject: string): string {
  return text(values, "store") === "aws"
    ? "queued for the tenant's worker, which builds it and publishes it if the gate passes; until then recall answers the raw valid events"
    : `nothing builds it in this process: a memgate serve or memgate mcp on this home builds it at its next sweep (within a minute), or run memgate consolidate ${subject.startsWith("-") ? "-- " : ""}${shellWord(subject)} (or memgate sweep); until then recall answers the raw valid events`;
}

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
        const rebuild = result.rebuildRequested ? whoRebuilds(values, subject) : undefined;
        print(
          io,
          values,
          { ...result, ...(rebuild === undefined ? {} : { rebuild }) },
          `appended ${result.appended.length} (${result.duplicates.length} already stored); highWater ${result.highWater}, epoch ${result.inputEpoch}${result.epochMoved ? " (moved)" : ""}${result.staled.length > 0 ? `; STALE: ${result.staled.join(", ")}` : ""}${rebuild === undefined ? "" : `; rebuild requested: ${rebuild}`}`,
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
        await knownSubjectSnapshot(deps, subject);
        const result = await revokeEvents(deps, subject, [eventId], text(values, "reason"));
        const rebuild = result.rebuildRequested ? whoRebuilds(values, subject) : undefined;
        print(
          io,
          values,
          { ...result, ...(rebuild === undefined ? {} : { rebuild }) },
          result.alreadyRevoked.length > 0
            ? `${eventId} was already revoked: nothing appended (highWater ${result.highWater}, epoch ${result.inputEpoch})`
            : `revoked ${eventId}: epoch ${result.inputEpoch}; STALE: ${result.staled.join(", ") || "none"}${rebuild === undefined ? "" : `; rebuild requested: ${rebuild}`}`,
        );
        return EXIT.ok;
      });
    },
  ),

  clock: storeCommand(
    'memgate clock SUBJECT\n\nPrints {"highWater","inputEpoch","alias"} (CONTRACT §5), with or without --json; a subject\nwith no events is unknown (exit 2).',
    {},
    async (values, positionals, io) => {
      const subject = subjectArg(positionals);
      return withRuntime(
        values,
        io,
        async (deps) => {
          // As the HTTP API's 404: a subject with no events is unknown, not a zero clock.
          const snapshot = await knownSubjectSnapshot(deps, subject);
          const alias = snapshot.expectedAlias
            ? {
                artifactId: snapshot.expectedAlias.parentArtifactId,
                sourceEpoch: snapshot.expectedAlias.sourceEpoch,
                coversThrough: snapshot.expectedAlias.coversThrough,
              }
            : null;
          // The contract's answer is this JSON; it is what the command prints.
          io.out(JSON.stringify({ highWater: snapshot.highWater, inputEpoch: snapshot.inputEpoch, alias }));
          return EXIT.ok;
        },
        { readOnly: true },
      );
    },
  ),
};
