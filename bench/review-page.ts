// The review page's weight and load time, served by `memgate serve` over a seeded store and
// opened in Debian's Chromium: bytes of the page, script and style, and the time from navigation
// to a subject's shadow review on screen (median of 5), beside the time to the bare page.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium } from "playwright-core";
import { memgate } from "#harness/cli.ts";
import { startServe } from "#harness/serve-process.ts";
import { record } from "./results.ts";

const home = mkdtempSync(join(tmpdir(), "memgate-review-bench-"));
const events = Array.from({ length: 200 }, (_, i) => ({
  eventId: `e-${i}`,
  kind: i % 5 === 0 ? "constraint" : "fact",
  text: `Item ${i} costs ${i * 10} USD and ships on 2026-12-${String((i % 28) + 1).padStart(2, "0")}.`,
}));
const input = `${events.map((e) => JSON.stringify(e)).join("\n")}\n`;
await memgate(["settings", "--publish-mode", "shadow", "--home", home]);
await memgate(["append", "bench/ana", "-", "--home", home], { input });
await memgate(["consolidate", "bench/ana", "--home", home]);
const server = await startServe(["--home", home]);
const browser = await chromium.launch({
  executablePath: process.env.MEMGATE_CHROMIUM ?? "/usr/bin/chromium",
  args: ["--no-sandbox"],
});

const sizes = await Promise.all(
  ["/review", "/review/app.js", "/review/app.css"].map(
    async (path) => [path, (await (await fetch(`${server.url}${path}`)).text()).length] as const,
  ),
);
const median = (values: number[]) =>
  [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;
const bare: number[] = [];
const reviewed: number[] = [];
for (let round = 0; round < 5; round++) {
  const page = await browser.newPage();
  const started = performance.now();
  await page.goto(`${server.url}/review`);
  await page.getByRole("button", { name: /bench\/ana/ }).waitFor();
  bare.push(performance.now() - started);
  await page.getByRole("button", { name: /bench\/ana/ }).click();
  await page
    .getByRole("heading", { name: /^Shadow candidate / })
    .first()
    .waitFor();
  reviewed.push(performance.now() - started);
  await page.close();
}
await browser.close();
await server.stop("SIGTERM");
console.log(`review page: ${sizes.map(([path, bytes]) => `${path} ${bytes} B`).join(", ")}`);
console.log(
  `  subjects listed ${median(bare).toFixed(0)} ms, a 200-event subject's shadow review on screen ${median(reviewed).toFixed(0)} ms (median of 5; ${(median(reviewed) / median(bare)).toFixed(1)}x the listing)`,
);
record({
  bench: "review-page",
  measures: "review page weight and time to a 200-event subject's shadow review in Chromium (median of 5)",
  figure: `${sizes.map(([path, bytes]) => `${path} ${bytes} B`).join(", ")}; ${median(reviewed).toFixed(0)} ms`,
  goal: "none (reported)",
  met: null,
});
