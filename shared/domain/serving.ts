/**
 * When recall serves the summary and when it must answer raw, and why. A summary is served only
 * when all of these hold: recall bypass is off, an alias exists, the alias's epoch equals the
 * clock's (both from one consistent read), and the alias's artifact is PUBLISHED and not marked
 * STALE. Anything else answers raw with the reason. Recall, the review page's subject status and
 * the audit all judge by this one rule, so what is reported as served is what recall serves.
 *
 * The rule comes in two steps because the second needs a read the first can spare: the settings
 * and the clock-with-alias decide most answers; only then is the alias's artifact record read.
 */

/** The tenant setting the rule reads: the operator's bypass during an incident. */
export interface ServingSettings {
  recallBypass: boolean;
}

/** The clock and the alias as one consistent read gives them (a `Snapshot` is one). */
export interface ServingState {
  inputEpoch: number;
  expectedAlias: { sourceEpoch: number } | null;
}

/** The alias's artifact as its record shows it: the lifecycle status and the STALE mark beside it. */
export interface ServedRecord {
  status: string;
  stale: boolean;
}

/**
 * Why recall must answer raw, judged from the settings and the clock with its alias; null when
 * the alias's summary may be served if its record allows it (`rawForRecord`).
 */
export function rawBeforeRecord(settings: ServingSettings, state: ServingState): string | null {
  const alias = state.expectedAlias;
  if (settings.recallBypass) return "recall bypass is on: raw events only";
  if (alias === null) return "no summary published yet";
  if (alias.sourceEpoch !== state.inputEpoch)
    return `${sourcesChanged(alias.sourceEpoch, state.inputEpoch)}; raw until it is rebuilt`;
  return null;
}

/**
 * Why the alias's artifact cannot be served (null: it is PUBLISHED and not marked STALE). A STALE
 * mark wins over any status: an artifact whose inputs lost validity is never served.
 */
export function rawForRecord(artifactId: string, record: ServedRecord | null): string | null {
  if (record?.status === "PUBLISHED" && !record.stale) return null;
  const shown = record === null ? "missing" : record.stale ? "STALE" : record.status;
  return `artifact ${artifactId} is ${shown}, not PUBLISHED`;
}

/**
 * Why a summary of another epoch than the clock's is not current, each epoch by its field's name:
 * a bare "clock N" beside the text's `clock H` (the high water) was read as the high water.
 */
export function sourcesChanged(summaryEpoch: number, clockEpoch: number): string {
  return `the sources changed since the summary (built at inputEpoch ${summaryEpoch}; the clock's inputEpoch is ${clockEpoch})`;
}
