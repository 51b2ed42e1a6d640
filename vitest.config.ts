import { configDefaults, defineConfig } from "vitest/config";

/**
 * The vitest tiers of the suite (README, "Tests"; e2e/README.md has the table), in the order `npm test` runs them:
 * - `unit`: tests beside the code, no database;
 * - `integration`: the API, services and settings against the real PostgreSQL and Redis (test/integration/);
 * - `packaging`: what a user installs and runs, through npm, the build and child processes (the image's runtime stage,
 *   `npm start`, the compiled server, compose.yaml, the SDK's tarball and folder installs, the npm scripts and the
 *   lock file). They test what npm and the build produce, not the Node version: CI runs them on Node 24 only.
 * The fourth tier, `browser`, is Playwright's (e2e/, playwright.config.ts).
 */
export const TIERS = {
  unit: ["server/**/*.test.ts", "scripts/**/*.test.ts"],
  integration: ["test/integration/**/*.test.ts"],
  packaging: [
    "test/packaging/container.test.ts",
    "test/packaging/start.test.ts",
    "test/packaging/production-server.test.ts",
    "test/packaging/compose.test.ts",
    "test/packaging/sdk-packaging.test.ts",
    "test/packaging/mcp-clients.test.ts",
    "scripts/packaging.test.ts",
    "scripts/inngest.test.ts",
  ],
} as const;

/** A vitest tier's name. */
export type Tier = keyof typeof TIERS;

// `TEST_TIER` (set by scripts/test.ts) runs one tier; unset, `npx vitest run` runs every vitest test.
const tier = process.env.TEST_TIER as Tier | undefined;
if (tier !== undefined && !(tier in TIERS))
  throw new Error(`TEST_TIER must be one of ${Object.keys(TIERS).join(", ")}`);

export default defineConfig({
  test: {
    include: tier ? [...TIERS[tier]] : Object.values(TIERS).flat(),
    // A packaging test matches the unit and integration globs too: it belongs to its own tier only.
    exclude: tier && tier !== "packaging" ? [...configDefaults.exclude, ...TIERS.packaging] : configDefaults.exclude,
    globalSetup: ["test/global-setup.ts"],
    pool: "forks",
    isolate: true,
    testTimeout: 30_000,
    hookTimeout: 120_000,
    reporters: ["default", ["json", { outputFile: `.ci/tmp/vitest${tier ? `-${tier}` : ""}.json` }]],
  },
});
