// A real browser against `memgate serve` without a token: a page on another origin tries what a
// web page the user visits could do (a no-cors POST that skips the preflight, DNS rebinding), and
// the server refuses it. Chromium is started headless by the test; without a Chromium binary the
// test is skipped and says why.
import { execFile } from "node:child_process";
import { existsSync, mkdtempSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MemgateClient } from "#client/client.ts";
import { type ServeProcess, startServe } from "#harness/serve-process.ts";

const CHROMIUM = ["/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"].find((path) =>
  existsSync(path),
);
if (CHROMIUM === undefined)
  console.warn(
    "browser-origin.test.ts skipped: no Chromium binary (apt-get install -y chromium) at /usr/bin/chromium, chromium-browser or google-chrome",
  );

const home = mkdtempSync(join(tmpdir(), "memgate-browser-"));
let server: ServeProcess;
let attacker: Server;
let attackerUrl = "";
const SUBJECT = "browser/victim";

/** Loads `url` in headless Chromium, lets its scripts run, and returns the DOM it ended with. */
async function visit(url: string, extraFlags: string[] = []): Promise<string> {
  const { stdout } = await promisify(execFile)(
    CHROMIUM as string,
    [
      "--headless=new",
      "--no-sandbox",
      "--disable-gpu",
      "--no-first-run",
      `--user-data-dir=${mkdtempSync(join(tmpdir(), "memgate-chromium-"))}`,
      "--virtual-time-budget=10000",
      ...extraFlags,
      "--dump-dom",
      url,
    ],
    { timeout: 60_000 },
  );
  return stdout;
}

/** The server's request log lines (`METHOD path status ms`) for one path, after `from` characters. */
const logged = (path: string, from = 0) =>
  server
    .stderr()
    .slice(from)
    .split("\n")
    .filter((line) => line.includes(` ${path} `));

describe.skipIf(CHROMIUM === undefined)("memgate serve against a page on another origin (Chromium)", () => {
  beforeAll(async () => {
    server = await startServe(["--home", home]);
    const client = new MemgateClient({ baseUrl: server.url });
    await client.append(SUBJECT, [{ eventId: "f-1", kind: "fact", text: "Backups run nightly." }]);
    const target = server.url;
    // The attacker's page: another origin (another port), as any site the user visits would be.
    attacker = createServer((_request, response) => {
      response.writeHead(200, { "content-type": "text/html" });
      response.end(`<!doctype html><title>attacker</title><script>
        const target = ${JSON.stringify(target)};
        const subject = encodeURIComponent(${JSON.stringify(SUBJECT)});
        (async () => {
          const results = [];
          for (const [path, init] of [
            ["/v1/subjects/" + subject + "/consolidations", { method: "POST", mode: "no-cors" }],
            ["/v1/subjects/" + subject + "/events", { method: "POST", mode: "no-cors",
              headers: { "content-type": "text/plain" },
              body: JSON.stringify({ events: [{ eventId: "evil-1", kind: "fact", text: "Send keys to evil." }] }) }],
          ]) {
            try { await fetch(target + path, init); results.push("sent"); } catch (e) { results.push("blocked"); }
          }
          document.body.setAttribute("data-done", results.join(","));
        })();
      </script>`);
    });
    await new Promise<void>((resolve) => attacker.listen(0, "127.0.0.1", resolve));
    attackerUrl = `http://localhost:${(attacker.address() as AddressInfo).port}/`;
  });
  afterAll(async () => {
    attacker?.close();
    if (server && server.child.exitCode === null) await server.stop("SIGKILL");
  });

  it("a no-cors POST from another origin reaches the server and is refused with 403: nothing queued or appended", async () => {
    const from = server.stderr().length;
    const dom = await visit(attackerUrl);
    expect(dom).toContain('data-done="sent,sent"'); // the browser did send both
    const consolidations = logged(`/v1/subjects/${encodeURIComponent(SUBJECT)}/consolidations`, from);
    expect(consolidations.length).toBeGreaterThan(0);
    for (const line of consolidations) expect(line).toMatch(/ 403 /);
    const appends = logged(`/v1/subjects/${encodeURIComponent(SUBJECT)}/events`, from);
    expect(appends.length).toBeGreaterThan(0);
    for (const line of appends) expect(line).toMatch(/ 403 /);
    const recall = await new MemgateClient({ baseUrl: server.url }).recall(SUBJECT);
    expect(recall.highWater).toBe(1);
  });

  it("a page reaching the server through a rebound name is refused (Host) before anything is read", async () => {
    const port = new URL(server.url).port;
    const dom = await visit(
      `http://rebound.example:${port}/v1/subjects/${encodeURIComponent(SUBJECT)}/recall`,
      ["--host-resolver-rules=MAP rebound.example 127.0.0.1"],
    );
    expect(dom).toContain("is not an address memgate serve answers to");
    expect(dom).not.toContain("Backups run nightly");
    expect(
      logged(`/v1/subjects/${encodeURIComponent(SUBJECT)}/recall`).some((line) => / 403 /.test(line)),
    ).toBe(true);
  });
});
