// `npm test`: the whole suite. Runs on a supported Node (obtaining one when the machine's is older), builds the
// production app and the compiled server (the start-up tests and the end-to-end tests serve them), runs every vitest
// test (unit beside the code, integration against the real PostgreSQL and Redis), then the Playwright specs in a
// Chromium it finds or obtains (scripts/browser.ts), and ends with one line `N passed, N failed` summed over every
// runner. SKIP_BUILD=1 reuses an existing build (`.next` and `dist`), SKIP_E2E=1 leaves the browser tests out;
// arguments are passed to vitest.
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, rmSync } from "node:fs";
import path from "node:path";
import { obtainChromium } from "./browser";
import { ensureSupportedNode } from "./node-runtime";

const root = path.resolve(import.meta.dirname, "..");

function run(command: string, args: string[], env: NodeJS.ProcessEnv = process.env): number {
  const result = spawnSync(command, args, { stdio: "inherit", env, cwd: root });
  return result.status ?? 1;
}

async function main(): Promise<void> {
  await ensureSupportedNode(root);
  console.log(`Node ${process.versions.node}`);
  let passed = 0;
  let failed = 0;

  const built = existsSync(path.join(root, ".next/BUILD_ID")) && existsSync(path.join(root, "dist/serve.js"));
  if (!process.env.SKIP_BUILD || !built) {
    if (run("npm", ["run", "build"]) !== 0) {
      console.error("build failed");
      failed += 1;
    }
  }

  mkdirSync(path.join(root, ".ci/tmp"), { recursive: true });
  const vitestReport = path.join(root, ".ci/tmp/vitest.json");
  rmSync(vitestReport, { force: true });
  const vitestStatus = run("npx", ["vitest", "run", ...process.argv.slice(2)]);
  if (existsSync(vitestReport)) {
    const report = JSON.parse(readFileSync(vitestReport, "utf8")) as { numPassedTests: number; numFailedTests: number };
    passed += report.numPassedTests;
    failed += report.numFailedTests;
    if (vitestStatus !== 0 && report.numFailedTests === 0) failed += 1;
  } else {
    failed += 1;
  }

  if (!process.env.SKIP_E2E) {
    const browser = obtainChromium();
    if ("error" in browser) {
      console.error(browser.error);
      failed += 1;
    } else {
      const playwrightReport = path.join(root, ".ci/tmp/playwright.json");
      rmSync(playwrightReport, { force: true });
      // playwright.config.ts writes its JSON report to .ci/tmp/playwright.json.
      const status = run("npx", ["playwright", "test"], { ...process.env, CHROMIUM_PATH: browser.path });
      if (existsSync(playwrightReport)) {
        const report = JSON.parse(readFileSync(playwrightReport, "utf8")) as {
          stats: { expected: number; unexpected: number; flaky: number };
        };
        passed += report.stats.expected + report.stats.flaky;
        failed += report.stats.unexpected;
        // A failed global setup or a crash leaves no failed test but must not pass silently.
        if (status !== 0 && report.stats.unexpected === 0) failed += 1;
      } else {
        failed += 1;
      }
    }
  }

  console.log(`${passed} passed, ${failed} failed`);
  process.exit(failed > 0 || passed === 0 ? 1 : 0);
}

void main();
