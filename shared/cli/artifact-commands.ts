import { subjectOfArtifact } from "#app/artifact-id.ts";
import { lineageDot, lineageProv } from "#app/lineage.ts";
import { approve, review } from "#app/review.ts";
import { shownStatus } from "#ports/artifact-records.ts";
import { type Command, need, print, storeCommand, subjectArg, text, withRuntime } from "./command.ts";
import { EXIT, UsageError } from "./output.ts";

/** What was made of the events: artifacts, their lineage, and the review of SHADOW ones. */
export const ARTIFACT_COMMANDS: Record<string, Command> = {
  artifacts: storeCommand("memgate artifacts SUBJECT", {}, async (values, positionals, io) => {
    const subject = subjectArg(positionals);
    return withRuntime(
      values,
      io,
      async (deps) => {
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
      },
      { readOnly: true },
    );
  }),

  lineage: storeCommand(
    "memgate lineage ARTIFACT_ID [--format prov-json|dot]",
    { format: { type: "string" } },
    async (values, positionals, io) => {
      const artifactId = need(positionals, 0, "ARTIFACT_ID");
      const format = text(values, "format") ?? "prov-json";
      if (format !== "prov-json" && format !== "dot")
        throw new UsageError(`--format must be prov-json or dot, got "${format}"`);
      return withRuntime(
        values,
        io,
        async (deps) => {
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
        },
        { readOnly: true },
      );
    },
  ),

  review: storeCommand("memgate review SUBJECT", {}, async (values, positionals, io) => {
    const subject = subjectArg(positionals);
    return withRuntime(
      values,
      io,
      async (deps) => {
        const result = await review(deps, subject);
        print(io, values, result, result.text);
        return EXIT.ok;
      },
      { readOnly: true },
    );
  }),

  approve: storeCommand("memgate approve ARTIFACT_ID", {}, async (values, positionals, io) => {
    const artifactId = need(positionals, 0, "ARTIFACT_ID");
    return withRuntime(values, io, async (deps) => {
      const result = await approve(deps, artifactId);
      print(io, values, result, `PUBLISHED ${artifactId} after review`);
      return EXIT.ok;
    });
  }),
};
