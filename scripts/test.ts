// `npm test`: the whole suite. Builds the production app (the start-up test and the end-to-end tests serve it), runs
// every vitest test (unit beside the code, integration against the real PostgreSQL and Redis), then the Playwright
// specs in Debian's Chromium (e2e/, against `next start` on a fresh database), and ends with one line
// `N passed, N failed` summed over every runner. Set SKIP_BUILD=1 to reuse an existing `.next` build, SKIP_E2E=1 to
// leave the browser tests out.
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, rmSync } from "node:fs";

function run(command: string, args: string[]): number {
  const result = spawnSync(command, args, { stdio: "inherit", env: process.env });
  return result.status ?? 1;
}

let passed = 0;
let failed = 0;

if (!process.env.SKIP_BUILD || !existsSync(".next/BUILD_ID")) {
  if (run("npm", ["run", "build"]) !== 0) {
    console.error("build failed");
    failed += 1;
  }
}

mkdirSync(".ci/tmp", { recursive: true });
rmSync(".ci/tmp/vitest.json", { force: true });
const vitestStatus = run("npx", ["vitest", "run", ...process.argv.slice(2)]);
if (existsSync(".ci/tmp/vitest.json")) {
  const report = JSON.parse(readFileSync(".ci/tmp/vitest.json", "utf8")) as {
    numPassedTests: number;
    numFailedTests: number;
    numTotalTestSuites: number;
  };
  passed += report.numPassedTests;
  failed += report.numFailedTests;
  if (vitestStatus !== 0 && report.numFailedTests === 0) failed += 1;
} else {
  failed += 1;
}

if (!process.env.SKIP_E2E) {
  rmSync(".ci/tmp/playwright.json", { force: true });
  // playwright.config.ts writes its JSON report to .ci/tmp/playwright.json.
  const playwrightStatus = run("npx", ["playwright", "test"]);
  if (existsSync(".ci/tmp/playwright.json")) {
    const report = JSON.parse(readFileSync(".ci/tmp/playwright.json", "utf8")) as {
      stats: { expected: number; unexpected: number; flaky: number };
      errors?: unknown[];
    };
    passed += report.stats.expected + report.stats.flaky;
    failed += report.stats.unexpected;
    // A failed global setup or a crash leaves no failed test but must not pass silently.
    if (playwrightStatus !== 0 && report.stats.unexpected === 0) failed += 1;
  } else {
    failed += 1;
  }
}

console.log(`${passed} passed, ${failed} failed`);
process.exit(failed > 0 || passed === 0 ? 1 : 0);
