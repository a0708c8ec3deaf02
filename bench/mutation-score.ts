// The gate's mutation score over a large synthetic sample: caught/total per kind of meaning change
// and false rejections of the untouched honest outputs. Goal: 100 % caught, 0 false rejections.
import { mutationScore } from "#eval/mutations.ts";
import { record } from "./results.ts";

const SUBJECTS = Number(process.env.MUTATION_SUBJECTS ?? 1000);
const started = performance.now();
const score = mutationScore(SUBJECTS, 42);
const elapsed = performance.now() - started;
let applied = 0;
let caught = 0;
console.log(`mutation score: ${SUBJECTS} synthetic subjects (seed 42), ${(elapsed / 1000).toFixed(1)} s`);
for (const [kind, tally] of Object.entries(score.byKind)) {
  applied += tally.applied;
  caught += tally.caught;
  console.log(`  ${kind.padEnd(22)} ${String(tally.caught).padStart(5)}/${tally.applied}`);
}
console.log(
  `  total ${caught}/${applied} (${((100 * caught) / Math.max(1, applied)).toFixed(2)} %), false rejections ${score.falseRejections}/${SUBJECTS} (goal: 100 %, 0)`,
);
process.exitCode = caught === applied && score.falseRejections === 0 ? 0 : 1;
record({
  bench: "mutation-score",
  measures: `22 kinds of meaning change on ${SUBJECTS} synthetic subjects; false rejections of the honest answers`,
  figure: `${caught}/${applied} caught, ${score.falseRejections} false rejections`,
  goal: "100 %, 0",
  met: caught === applied && score.falseRejections === 0,
});
