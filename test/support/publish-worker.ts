// A separate OS process that publishes on an embedded store when told to: the SQLite race test
// runs eight of these against one store file, as eight Lambdas would race on DynamoDB.
import { createInterface } from "node:readline";
import { SqliteStore } from "#adapters/embedded/sqlite-store.ts";
import type { PublishRequest } from "#ports/alias.ts";
import { PublishRefusedError } from "#ports/errors.ts";

const store = new SqliteStore(process.argv[2] as string);
process.stdout.write("ready\n");
for await (const line of createInterface({ input: process.stdin })) {
  const request = JSON.parse(line) as PublishRequest & { round: number };
  try {
    await store.publishIfUnchanged(request);
    process.stdout.write(`${JSON.stringify({ round: request.round, won: true })}\n`);
  } catch (error) {
    const reason = error instanceof PublishRefusedError ? error.reason : String(error);
    process.stdout.write(`${JSON.stringify({ round: request.round, won: false, reason })}\n`);
  }
}
store.close();
