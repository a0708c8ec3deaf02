// An artifact's record as generation leaves it before publishing, for the store tests and the
// benchmarks that write records without running the pipeline.
import type { GateReport } from "#domain/gate/index.ts";
import type { ArtifactRecord } from "#ports/artifact-records.ts";

const PASSING_GATE: GateReport = {
  verdict: "pass",
  reasons: [],
  stats: {
    events: 0,
    validInputs: 0,
    mustPreserve: 0,
    conflicts: 0,
    openTasks: 0,
    claims: 0,
    pending: 0,
    coldRefs: 0,
    tokens: null,
    budget: null,
  },
};

/** A `CANDIDATE` record that passed the gate, covering `coversThrough` at `inputEpoch`, above `parent`. */
export function candidateRecord(
  subject: string,
  artifactId: string,
  coversThrough: number,
  inputEpoch: number,
  parent: string | null,
): ArtifactRecord {
  return {
    subject,
    artifactId,
    status: "CANDIDATE",
    stale: false,
    coversThrough,
    inputEpoch,
    parentArtifactId: parent,
    inputRoot: `sha256:${"0".repeat(64)}`,
    gate: PASSING_GATE,
    createdAt: "2026-11-29T00:00:00.000Z",
  };
}
