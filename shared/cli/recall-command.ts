import type { Recall } from "#app/recall.ts";
import { recall, textVersionOf } from "#app/recall.ts";
import { parseRecallOptions } from "#app/recall-options.ts";
import { renderServedRecallText } from "#app/recall-text.ts";
import { unknownSubjectError } from "#app/snapshot.ts";
import { describeIssues } from "#runtime/issues.ts";
import { type Command, print, storeCommand, subjectArg, withRuntime } from "./command.ts";
import { EXIT, shellWord, UsageError } from "./output.ts";

/**
 * How the command line's reader searches the cold layer (CONTRACT §5a's HINT): the command for the
 * subject asked for, which a reader can paste into a POSIX shell (the subject quoted when it needs
 * it; one starting with `-` after `--`, where it cannot be read as a flag).
 */
export function cliSearchHint(subject: string): string {
  const word = shellWord(subject);
  return subject.startsWith("-")
    ? `memgate recall --query WORDS -- ${word}`
    : `memgate recall ${word} --query WORDS`;
}

/** What an agent should remember (CONTRACT §5, the same options as §6's GET …/recall). */
export const RECALL_COMMAND: Command = storeCommand(
  "memgate recall SUBJECT [--scope S] [--budget TOKENS] [--query TEXT] [--cursor C] [--format json|text|text-v1]\n\n--format text prints the recall as an agent reads it in a prompt (CONTRACT §5a, version 2; text-v1\nits first version), --budget then counting the text's tokens; json (the default) prints the JSON\nanswer (as --json does).",
  {
    cursor: { type: "string" },
    scope: { type: "string" },
    query: { type: "string" },
    format: { type: "string" },
  },
  async (values, positionals, io) => {
    const subject = subjectArg(positionals);
    const options = parseRecallOptions({
      budget: values.budget,
      cursor: values.cursor,
      scope: values.scope,
      query: values.query,
      format: values.format,
    });
    if (!options.success) throw new UsageError(`--${describeIssues(options.error)}`);
    const format = options.data.format;
    const version = textVersionOf(format);
    if (version !== null && values.json === true)
      throw new UsageError(`--json and --format ${format} ask for different outputs: give one of them`);
    return withRuntime(
      values,
      io,
      async (deps) => {
        const searchHint = cliSearchHint(subject);
        const result = await recall(deps, subject, { ...options.data, searchHint });
        // As the HTTP API's 404 and the MCP tool's error: a subject with no events is unknown.
        if (result.highWater === 0) throw unknownSubjectError(subject);
        if (version !== null) io.out(renderServedRecallText(result, { searchHint, version }).text);
        else
          print(io, format === "json" ? { ...values, json: true } : values, result, describeRecall(result));
        return EXIT.ok;
      },
      { readOnly: true },
    );
  },
);

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
