// The review page in a real browser (Debian's chromium, driven by playwright-core) against
// `memgate serve` over a seeded store: subjects, a shadow beside the published summary, evidence,
// approve and a refused approve, memory text rendered as text, accessibility, narrow screens.
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Browser, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MemgateClient } from "#client/client.ts";
import { memgate } from "#harness/cli.ts";
import { type ServeProcess, startServe } from "#harness/serve-process.ts";
import { bucketReading } from "../support/builders.ts";

const CHROMIUM = process.env.MEMGATE_CHROMIUM ?? "/usr/bin/chromium";
const TOKEN = "review-page-token";
const SUBJECT = "review/ana";
const XSS = `<img src=x onerror="window.__memgatePwned=1"><script>window.__memgatePwned=2</script>`;
const home = mkdtempSync(join(tmpdir(), "memgate-review-"));
let server: ServeProcess;
let browser: Browser;
let client: MemgateClient;

async function cli(args: string[], input?: string) {
  const result = await memgate([...args, "--home", home], input === undefined ? {} : { input });
  if (result.code !== 0) throw new Error(`memgate ${args.join(" ")}: ${result.stderr}`);
  return result;
}
const lines = (...events: unknown[]) => `${events.map((e) => JSON.stringify(e)).join("\n")}\n`;

beforeAll(async () => {
  if (!existsSync(CHROMIUM))
    throw new Error(`no Chromium at ${CHROMIUM}: apt-get install -y chromium (or set MEMGATE_CHROMIUM)`);
  // A published summary first, then shadow mode and newer events: a candidate beside it.
  await cli(
    ["append", SUBJECT, "-"],
    lines(
      { eventId: "c-1", kind: "constraint", text: "Backups must be encrypted." },
      {
        eventId: "b-1",
        kind: "fact",
        text: "The budget is 12,500 USD.",
        assertions: [{ key: "budget", value: { quantity: "12500", unit: "USD" }, polarity: "affirmed" }],
        source: "finance-sheet",
      },
    ),
  );
  await cli(["consolidate", SUBJECT]);
  await cli(["settings", "--publish-mode", "shadow"]);
  await cli(["policy", SUBJECT, "--latest", "backup.bucket_size"]);
  await cli(
    ["append", SUBJECT, "-"],
    lines(
      bucketReading("r-1", "4.6", "2026-10-26T12:15:00Z"),
      bucketReading("r-2", "4.1", "2026-12-03T09:20:00Z"),
      { eventId: "x-1", kind: "fact", text: XSS },
      {
        eventId: "d-1",
        kind: "fact",
        text: "Launch is on 2026-12-15.",
        assertions: [{ key: "launch", value: { date: "2026-12-15" }, polarity: "affirmed" }],
      },
    ),
  );
  await cli(["consolidate", SUBJECT]);
  server = await startServe(["--home", home, "--token", TOKEN]);
  client = new MemgateClient({ baseUrl: server.url, token: TOKEN });
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox"] });
}, 120_000);

afterAll(async () => {
  await browser?.close();
  if (server && server.child.exitCode === null) await server.stop("SIGTERM");
});

/** The page, signed in, the subject open. `bypassCSP` proves the escaping itself, not the CSP. */
async function openSubject(width = 1280, colorScheme: "light" | "dark" = "light"): Promise<Page> {
  const context = await browser.newContext({
    bypassCSP: true,
    viewport: { width, height: 900 },
    colorScheme,
  });
  const page = await context.newPage();
  page.on("pageerror", (error) => {
    throw error;
  });
  await page.goto(`${server.url}/review`);
  await page.fill("#token", TOKEN);
  await page.press("#token", "Enter");
  await page.getByRole("button", { name: new RegExp(SUBJECT) }).focus();
  await page.keyboard.press("Enter");
  await page
    .getByRole("heading", { name: /^Shadow candidate / })
    .first()
    .waitFor();
  return page;
}

describe("the review page", () => {
  it("lists the subject with its shadow waiting and shows the candidate beside the published summary", async () => {
    const page = await openSubject();
    await expect(page.locator("nav").textContent()).resolves.toContain("1 shadow waiting");
    const cards = page.locator(".card h3");
    await expect(cards.allTextContents()).resolves.toEqual(expect.arrayContaining(["Published", "Shadow"]));
    const changes = await page.locator("ul.plain").allTextContents();
    expect(changes.join("\n")).toMatch(/added: launch = 2026-12-15/);
    await page.close();
  });

  it("shows every must-preserve item with its evidence: the event's id, text, trust and source", async () => {
    const page = await openSubject();
    const table = await page.locator("table").textContent();
    expect(table).toContain("budget = 12500 USD");
    expect(table).toContain("The budget is 12,500 USD.");
    expect(table).toContain("source finance-sheet");
    expect(table).toContain("trust user");
    expect(table).toContain("Backups must be encrypted.");
    expect(await page.locator("td.lost").count()).toBe(0);
    // A claim's lineage on click.
    await page
      .getByRole("button", { name: /^budget = 12500 USD/ })
      .last()
      .click();
    await page
      .getByText(/^Derived by deterministic-v1/)
      .first()
      .waitFor();
    await page.close();
  });

  it("shows the inputs' earlier readings beside the candidate, and its earlier claim as one", async () => {
    const page = await openSubject();
    await page.getByRole("heading", { name: /^Earlier readings/ }).waitFor();
    const shown = (await page.locator("ul.plain").allTextContents()).join("\n");
    expect(shown).toContain("r-1 backup.bucket_size = 4.6 TB, read 2026-10-26T12:15:00Z; now r-2: 4.1 TB");
    expect(shown).toMatch(/added: backup\.bucket_size = 4\.6 TB \[earlier reading, 2026-10-26\]/);
    await page.close();
  });

  it("renders memory holding HTML and script as text: nothing runs", async () => {
    const page = await openSubject();
    await page
      .getByRole("button", { name: /memory:x-1/ })
      .last()
      .click();
    await page.getByText(XSS, { exact: false }).first().waitFor();
    expect(
      await page.evaluate(() => (window as unknown as { __memgatePwned?: number }).__memgatePwned),
    ).toBeUndefined();
    expect(await page.locator("img").count()).toBe(0);
    await page.close();
  });

  it.each(["light", "dark"] as const)(
    "has no serious or critical accessibility violation (axe-core) in %s mode, and fits 320 px",
    async (scheme) => {
      const page = await openSubject(320, scheme);
      const axe = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");
      await page.evaluate(axe);
      const violations = await page.evaluate(async () => {
        const results = await (
          window as unknown as {
            axe: { run(): Promise<{ violations: Array<{ id: string; impact: string }> }> };
          }
        ).axe.run();
        return results.violations
          .filter((v) => v.impact === "serious" || v.impact === "critical")
          .map((v) => v.id);
      });
      expect(violations).toEqual([]);
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(320);
      await page.close();
    },
  );

  it("approving publishes through the CAS (recall serves it); a refused approve says so", async () => {
    const page = await openSubject();
    const shadowId = (await page.locator(".card").nth(1).locator("code").first().textContent()) as string;
    if (process.env.MEMGATE_SCREENSHOT)
      writeFileSync(process.env.MEMGATE_SCREENSHOT, await page.screenshot({ fullPage: true }));
    await page.getByRole("button", { name: "Approve" }).click();
    await page.getByText(`${shadowId}: published`).waitFor();
    const recalled = await client.recall(SUBJECT);
    expect(recalled).toMatchObject({ mode: "summary", artifactId: shadowId });

    // A new candidate, then a revocation moves the epoch: approving it must be refused.
    await client.append(SUBJECT, [{ eventId: "n-2", kind: "note", text: "Prefers tea." }]);
    await client.consolidate(SUBJECT);
    await page.waitForTimeout(100);
    for (let i = 0; i < 50 && (await client.review(SUBJECT)).shadows.length === 0; i++)
      await page.waitForTimeout(200);
    await page.reload();
    await page.fill("#token", TOKEN);
    await page.press("#token", "Enter");
    await page.getByRole("button", { name: new RegExp(SUBJECT) }).click();
    await page
      .getByRole("heading", { name: /^Shadow candidate / })
      .first()
      .waitFor();
    await client.revoke(SUBJECT, ["n-2"], "not true");
    await page.getByRole("button", { name: "Approve" }).click();
    await page.getByText(/^approve refused: 409/).waitFor();
    await page.close();
  });
});
