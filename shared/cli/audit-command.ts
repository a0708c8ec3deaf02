import { audit } from "#app/audit.ts";
import { boundedInt, type Command, print, storeCommand, subjectArg, withRuntime } from "./command.ts";
import { EXIT } from "./output.ts";

/** The independent check of what recall serves (exit 1 when it finds anything). */
export const AUDIT_COMMAND: Command = storeCommand(
  "memgate audit [SUBJECT...] [--sample N] [--seed S] [--json]\n\nThe independent check of what recall serves: for each subject serving a summary, its inputs are\nselected again from the raw layer and hashed again, the input root compared with the manifest's,\nand the current gate run again on the stored answer. A stale-visible or false-fact finding is\ncontained at once (the summary is marked STALE, recall answers raw, a rebuild is requested).\nExit 1 when anything was found.",
  { sample: { type: "string" }, seed: { type: "string" } },
  async (values, positionals, io) => {
    const subjects =
      positionals.length > 0
        ? positionals.map((_subject, index) => subjectArg(positionals, index))
        : undefined;
    const sample = boundedInt(values, "sample", 1_000_000);
    const seed = boundedInt(values, "seed", 4_294_967_295);
    return withRuntime(
      values,
      io,
      async (deps) => {
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
      },
      { readOnly: true },
    );
  },
);
