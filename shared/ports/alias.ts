import type { ExpectedAlias } from "#domain/schemas.ts";

/** What recall serves: the published artifact, the epoch it was built at and how far it covers. */
export interface AliasState {
  artifactId: string;
  sourceEpoch: number;
  coversThrough: number;
}

export interface PublishRequest {
  subject: string;
  artifactId: string;
  /** The alias the snapshot saw; null when the subject had no summary yet. */
  expectedAlias: ExpectedAlias | null;
  /** The clock epoch the artifact was built at: the publish is fenced on it. */
  inputEpoch: number;
  newCoversThrough: number;
  /**
   * The publish read the tenant's publishMode as live: the switch also checks it still is, in the
   * same transaction (a switch to shadow mode meanwhile refuses it, `publish-mode-changed`). An
   * approval publishes in either mode and leaves this out.
   */
  whileLive?: boolean;
}

/** The read alias: it moves only by a three-part compare-and-set fenced by the source clock. */
export interface AliasPort {
  readAlias(subject: string): Promise<AliasState | null>;
  /**
   * One transaction: the clock's inputEpoch still equals the artifact's, the alias still names the
   * expected parent with the expected epoch and coverage (or is absent for the first publish), and
   * coverage does not decrease; then the alias names the artifact, the artifact becomes PUBLISHED
   * and the parent SUPERSEDED. Otherwise PublishRefusedError, and nothing changed.
   */
  publishIfUnchanged(request: PublishRequest): Promise<AliasState>;
}
