// End-to-end tests of the settings UI and the docs in a system Chromium (scripts/browser.ts finds it).
// `e2e/global-setup.ts` creates a fresh PostgreSQL database, migrates it and serves the BUILT app (`next start`); run
// `npm run build` first (`npm test` does). Set E2E_BASE_URL + E2E_DATABASE_URL to run against a server you started
// yourself (e.g. `next dev`).
import { defineConfig } from "@playwright/test";
import { findChromium } from "./scripts/browser";

const port = Number(process.env.E2E_PORT ?? 3210);

export default defineConfig({
  testDir: "e2e",
  testMatch: "**/*.spec.ts",
  outputDir: "test-results",
  workers: 1,
  fullyParallel: false,
  retries: 0,
  timeout: 90_000,
  expect: { timeout: 15_000 },
  forbidOnly: Boolean(process.env.CI),
  globalSetup: "./e2e/global-setup.ts",
  reporter: [["list"], ["json", { outputFile: ".ci/tmp/playwright.json" }]],
  use: {
    baseURL: process.env.E2E_BASE_URL ?? `http://127.0.0.1:${port}`,
    browserName: "chromium",
    launchOptions: {
      // `npm test` finds or installs one and passes it as CHROMIUM_PATH (scripts/browser.ts).
      executablePath: findChromium() ?? undefined,
      args: [
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
      ],
    },
    viewport: { width: 1280, height: 900 },
    screenshot: "only-on-failure",
    trace: "off",
  },
});
