// The floor the serve-load bench compares memgate with: a bare node:http server that reads and
// parses the same JSON bodies and answers small JSON, nothing else. Prints its URL, like serve.
import { createServer } from "node:http";

const server = createServer((request, response) => {
  const chunks = [];
  request.on("data", (chunk) => chunks.push(chunk));
  request.on("end", () => {
    let answer = { ok: true };
    if (request.method === "POST") {
      const body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
      answer = { appended: body.events.map((event) => event.eventId), duplicates: [] };
    }
    const text = JSON.stringify(answer);
    response.writeHead(200, {
      "content-type": "application/json",
      "content-length": Buffer.byteLength(text),
    });
    response.end(text);
  });
});
server.listen(0, "127.0.0.1", () => {
  console.log(`listening on http://127.0.0.1:${server.address().port}`);
});
process.once("SIGTERM", () => {
  server.closeAllConnections();
  server.close(() => process.exit(0));
});
