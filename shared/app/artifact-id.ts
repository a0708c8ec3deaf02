import { NotFoundError } from "#ports/errors.ts";

/**
 * The artifact id grammar, `summary:<subject>:<coverage>:<suffix>`: every generation writes under a
 * new id (a retried snapshot never overwrites), and the subject is read back from the id alone.
 */

/** A fresh artifact id: the subject and coverage are readable in it, the suffix makes it new. */
export function newArtifactId(subject: string, highWater: number, suffix: string): string {
  return `summary:${subject}:${String(highWater).padStart(6, "0")}:${suffix}`;
}

/** The subject an artifact id names (`summary:<subject>:<coverage>:<suffix>`). */
export function subjectOfArtifact(artifactId: string): string {
  const match = /^summary:(.+):\d{6,}:[^:]+$/.exec(artifactId);
  if (!match?.[1])
    throw new NotFoundError(
      `"${artifactId}" is not a memgate artifact id (summary:<subject>:<coverage>:<id>)`,
    );
  return match[1];
}
