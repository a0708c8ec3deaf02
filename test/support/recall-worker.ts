// A separate OS process that loops on recall for a while, printing when each recall started and
// what it served: the revocation-visibility test reads these against when the revoke returned.
import { SqliteStore } from "../../shared/adapters/embedded/sqlite-store.ts";
import { recall } from "../../shared/app/pipeline.ts";

const [home, subject, duration] = process.argv.slice(2) as [string, string, string];
const store = new SqliteStore(home);
const until = Date.now() + Number(duration);
process.stdout.write("ready\n");
while (Date.now() < until) {
  const startedAt = Date.now();
  const answer = await recall({ events: store, artifacts: store, settings: store }, subject);
  const sources =
    answer.mode === "summary"
      ? [...new Set(answer.claims.flatMap((c) => c.derivedFrom))]
      : answer.events.map((e) => e.eventId);
  process.stdout.write(
    `${JSON.stringify({ startedAt, mode: answer.mode, artifactId: answer.artifactId, sources })}\n`,
  );
}
store.close();
