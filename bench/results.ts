/** One row of the benchmark table: printed as a RESULT line that bench/run-all.ts collects. */
export interface BenchRow {
  bench: string;
  /** What the figure measures, in words. */
  measures: string;
  figure: string;
  goal: string;
  /** Whether the goal is met; null when the row has no goal (informational). */
  met: boolean | null;
}

export function record(row: BenchRow): void {
  console.log(`RESULT ${JSON.stringify(row)}`);
}
