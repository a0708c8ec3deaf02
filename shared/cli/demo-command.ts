import { mkdtempSync, rmSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { appendEvents, revokeEvents } from "#app/append.ts";
import { recall } from "#app/recall.ts";
import { run } from "#app/run.ts";
import { readInputs, takeSnapshot } from "#app/snapshot.ts";
import { budgetTokens } from "#domain/gate/index.ts";
import { canonicalJson } from "#domain/hashing.ts";
import { countTokens } from "#domain/tokens.ts";
import { parseEventLines } from "#io/event-file.ts";
import { shownStatus } from "#ports/artifact-records.ts";
import { openEmbeddedRuntime } from "#runtime/embedded.ts";
import { type Command, text } from "./command.ts";
import type { Io } from "./output.ts";
import { EXIT } from "./output.ts";
import { packageRoot } from "./package-root.ts";

const SUBJECT = "alex";
const REVOKED = "alpha-1";

/**
 * The embedded walk-through `npm start` runs: ingest the bundled multi-project log, consolidate,
 * recall, revoke one source (recall falls back to raw, the summary goes STALE), rebuild, and print
 * the token reduction and the must-preserve count. Exit 0 only when every step behaved as it must.
 * Without `--home` the store lives in a temporary folder, removed at the end whatever happened
 * (unless `--keep`); a folder the user named is theirs and stays.
 */
export async function demoCommand(
  args: { json: boolean; home?: string | undefined; keep?: boolean },
  io: Io,
): Promise<number> {
  const home = args.home ?? mkdtempSync(join(tmpdir(), "memgate-demo-"));
  const removed = args.home === undefined && args.keep !== true;
  try {
    return await walkThrough(home, removed, args.json, io);
  } finally {
    if (removed) rmSync(home, { recursive: true, force: true });
  }
}

async function walkThrough(home: string, removed: boolean, json: boolean, io: Io): Promise<number> {
  const runtime = await openEmbeddedRuntime({ store: "embedded", home, progress: () => {} });
  const say = (line: string) => {
    if (!json) io.out(line);
  };
  try {
    const { deps } = runtime;
    const facts: Record<string, unknown> = { home, homeKept: !removed };
    const checks: string[] = [];
    const expect = (ok: boolean, what: string) => {
      if (!ok) checks.push(what);
    };

    const file = join(packageRoot(), "examples", "demo", "events.jsonl");
    const events = parseEventLines(await readFile(file, "utf8"), file, { assignSequence: false }).map(
      ({ sequence: _s, ...e }) => e,
    );
    say(`memgate demo (embedded store in ${home}${removed ? ", removed at the end: --keep keeps it" : ""})`);
    say(`1. append: ${events.length} events of ${SUBJECT} (two projects, ops, health, everyday chat)`);
    const appended = await appendEvents(deps, SUBJECT, events);
    say(`   highWater ${appended.highWater}, epoch ${appended.inputEpoch} (a supersession moved it)`);

    say("2. consolidate: snapshot -> deterministic model -> loss gate -> alias compare-and-set");
    const first = await run(deps, await takeSnapshot(deps, SUBJECT));
    expect(first.status === "PUBLISHED", "the first summary was not published");
    const { context } = await readInputs(deps, SUBJECT, appended.highWater);
    const firstId = "artifactId" in first ? first.artifactId : "";
    const body = await deps.artifacts.readArtifact(SUBJECT, firstId);
    const rawTokens = countTokens(
      canonicalJson(context.selection.validInputs.map(({ sequence: _s, ...e }) => e)),
    );
    const summaryTokens = budgetTokens(body);
    facts.mustPreserve = context.mustPreserve.length;
    facts.validInputs = context.selection.validInputs.length;
    facts.tokens = { raw: rawTokens, summary: summaryTokens, reduction: 1 - summaryTokens / rawTokens };
    const cold = (body as { coldRefs?: unknown[] }).coldRefs?.length ?? 0;
    say(
      `   ${first.status} ${firstId}: ${context.mustPreserve.length} must-preserve items kept, gate ${"gate" in first ? first.gate.verdict : "-"}`,
    );
    say(
      `   ${cold} low-value inputs (chat notes, a done task) stay in the cold layer: retrievable, not summarized`,
    );

    const served = await recall(deps, SUBJECT);
    expect(served.mode === "summary", "recall did not serve the summary");
    say(
      `3. recall: ${served.mode}, ${served.claims.length} claims, ${served.pending.length} pending, ${served.unresolvedConflicts.length} unresolved conflict(s) left undecided`,
    );

    say(`4. revoke ${REVOKED} (alpha's budget): the epoch moves in the same transaction`);
    const revoked = await revokeEvents(deps, SUBJECT, [REVOKED], "the budget figure was wrong");
    const fallback = await recall(deps, SUBJECT);
    expect(fallback.mode === "raw", "recall still served the summary after the revocation");
    expect(!fallback.events.some((e) => e.eventId === REVOKED), "recall served the revoked event");
    expect(revoked.staled.includes(firstId), "the summary was not marked STALE");
    say(`   recall: ${fallback.mode} (${fallback.reason})`);
    const records = await deps.artifacts.listRecords(SUBJECT);
    for (const record of records) say(`   ${shownStatus(record).padEnd(9)} ${record.artifactId}`);

    say("5. rebuild from the still-valid inputs");
    const rebuilt = await run(deps, await takeSnapshot(deps, SUBJECT));
    expect(rebuilt.status === "PUBLISHED", "the rebuild was not published");
    const again = await recall(deps, SUBJECT);
    expect(
      again.mode === "summary" && !again.claims.some((c) => c.derivedFrom.includes(REVOKED)),
      "the rebuilt summary is not served or cites the revoked event",
    );
    say(`   ${rebuilt.status} ${"artifactId" in rebuilt ? rebuilt.artifactId : ""}; recall: ${again.mode}`);

    const tokens = facts.tokens as { raw: number; summary: number; reduction: number };
    say(
      `\ntokens: ${tokens.raw} for the raw valid events, ${tokens.summary} for the summary (${(tokens.reduction * 100).toFixed(1)}% fewer); ${facts.mustPreserve} must-preserve items, all kept`,
    );
    say(checks.length === 0 ? "demo: every step behaved as it must" : `demo: FAILED: ${checks.join("; ")}`);
    if (json) io.out(JSON.stringify({ ...facts, ok: checks.length === 0, problems: checks }));
    return checks.length === 0 ? EXIT.ok : EXIT.rejected;
  } finally {
    runtime.close();
  }
}

export const DEMO_COMMAND: Command = {
  usage:
    "memgate demo [--home DIR] [--keep] [--json]\n\nThe embedded walk-through: ingest the bundled log, consolidate, recall, revoke, fall back, rebuild.\nWithout --home the store is a temporary folder, removed at the end (also on failure) unless --keep.",
  options: { home: { type: "string" }, keep: { type: "boolean" } },
  run: (values, _positionals, io) =>
    demoCommand({ json: values.json === true, home: text(values, "home"), keep: values.keep === true }, io),
};
