import { defineConfig } from "vitest/config";

/**
 * Two projects: `domain` (pure: no engines, seconds) and `engines` (everything that needs the
 * embedded store, DynamoDB Local or moto, which the globalSetup starts). `npm test` runs both;
 * `npm run test:domain` runs the pure part alone.
 */
export default defineConfig({
  plugins: [
    {
      // Prompts are imported as text, as esbuild's text loader does in every bundle.
      name: "memgate-markdown-as-text",
      transform(code, id) {
        if (id.endsWith(".md")) return { code: `export default ${JSON.stringify(code)};`, map: null };
      },
    },
  ],
  test: {
    reporters: ["default", "./test/support/summary-reporter.ts"],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    projects: [
      { extends: true, test: { name: "domain", include: ["test/domain/**/*.test.ts"] } },
      {
        extends: true,
        test: {
          name: "engines",
          include: ["test/**/*.test.ts"],
          exclude: ["test/domain/**"],
          globalSetup: ["test/support/engines.ts"],
        },
      },
    ],
  },
});
