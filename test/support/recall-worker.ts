// A separate OS process that loops on recall until its standard input closes, printing when each
// recall started and what it served: the revocation-visibility test reads these against when the
// revoke returned, and decides from them (not from a clock) when it has seen enough.
import { SqliteStore } from "#adapters/embedded/sqlite-store.ts";
import { recall } from "#app/recall.ts";

const [home, subject] = process.argv.slice(2) as [string, string];
const store = new SqliteStore(home);
let stopped = false;
process.stdin.on("data", () => {});
process.stdin.on("end", () => {
  stopped = true;
});
process.stdout.write("ready\n");
while (!stopped) {
  const startedAt = Date.now();
  const answer = await recall({ events: store, artifacts: store, settings: store }, subject);
  const sources =
    answer.mode === "summary"
      ? [...new Set(answer.claims.flatMap((c) => c.derivedFrom))]
      : answer.events.map((e) => e.eventId);
  process.stdout.write(
    `${JSON.stringify({ startedAt, mode: answer.mode, artifactId: answer.artifactId, sources })}\n`,
  );
  await new Promise((resolve) => setImmediate(resolve));
}
store.close();
