// `npm test`: the whole suite. Builds the production app (the start-up test serves it), runs every vitest test
// (unit beside the code, integration against the real PostgreSQL and Redis), and ends with one line
// `N passed, N failed` summed over every runner. Set SKIP_BUILD=1 to reuse an existing `.next` build.
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

console.log(`${passed} passed, ${failed} failed`);
process.exit(failed > 0 || passed === 0 ? 1 : 0);
