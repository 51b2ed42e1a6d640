// `npm test`: the whole suite. Runs on a supported Node (obtaining one when the machine's is older), builds the
// production app and the compiled server (the integration, packaging and browser tests serve them), then runs the
// tiers one after the other (vitest.config.ts `TIERS`, e2e/README.md): `unit` (vitest, beside the code), `integration`
// (vitest, against the real PostgreSQL and Redis), `packaging` (vitest: the image's runtime stage, `npm start`, the
// compiled server, compose.yaml, the SDK as a user installs it, the npm scripts) and `browser` (the Playwright specs
// in a Chromium it finds or obtains, scripts/browser.ts). Each tier prints `<tier>: N passed, N failed in N s`; the
// last line is `N passed, N failed` summed over every tier. TEST_TIERS=unit,integration (comma-separated) runs those
// tiers only; SKIP_BUILD=1 reuses an existing build (`.next` and `dist`). Arguments are passed to vitest (e.g. a file
// name: tiers without a matching file then count nothing).
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, rmSync } from "node:fs";
import path from "node:path";
import { obtainChromium } from "./browser";
import { ensureSupportedNode } from "./node-runtime";

const root = path.resolve(import.meta.dirname, "..");

/** The tiers in the order they run: vitest.config.ts's, then Playwright's. */
const ALL_TIERS = ["unit", "integration", "packaging", "browser"] as const;
type TierName = (typeof ALL_TIERS)[number];

/** What one tier counted. */
interface Counts {
  passed: number;
  failed: number;
}

function run(command: string, args: string[], env: NodeJS.ProcessEnv = process.env): number {
  const result = spawnSync(command, args, { stdio: "inherit", env, cwd: root });
  return result.status ?? 1;
}

/** The tiers `TEST_TIERS` names (all when unset), in run order; exits 2 naming an unknown one. */
function selectedTiers(): TierName[] {
  const asked = (process.env.TEST_TIERS ?? "")
    .split(",")
    .map((name) => name.trim())
    .filter(Boolean);
  const unknown = asked.filter((name) => !(ALL_TIERS as readonly string[]).includes(name));
  if (unknown.length > 0) {
    console.error(`TEST_TIERS: unknown tier ${unknown.join(", ")}; the tiers are ${ALL_TIERS.join(", ")}`);
    process.exit(2);
  }
  return asked.length === 0 ? [...ALL_TIERS] : ALL_TIERS.filter((name) => asked.includes(name));
}

/** Runs one vitest tier (vitest.config.ts reads `TEST_TIER`) and reads its counts from its JSON report. */
function vitestTier(tier: Exclude<TierName, "browser">, args: string[]): Counts {
  const report = path.join(root, `.ci/tmp/vitest-${tier}.json`);
  rmSync(report, { force: true });
  // With a file filter, a tier holding none of the files is not a failure.
  const status = run("npx", ["vitest", "run", ...(args.length > 0 ? ["--passWithNoTests"] : []), ...args], {
    ...process.env,
    TEST_TIER: tier,
  });
  if (!existsSync(report)) return { passed: 0, failed: 1 };
  const counts = JSON.parse(readFileSync(report, "utf8")) as { numPassedTests: number; numFailedTests: number };
  const failed = counts.numFailedTests + (status !== 0 && counts.numFailedTests === 0 ? 1 : 0);
  return { passed: counts.numPassedTests, failed };
}

/** Runs the Playwright specs in the Chromium scripts/browser.ts finds, and reads its counts from its JSON report. */
function browserTier(): Counts {
  const browser = obtainChromium();
  if ("error" in browser) {
    console.error(browser.error);
    return { passed: 0, failed: 1 };
  }
  // playwright.config.ts writes its JSON report to .ci/tmp/playwright.json.
  const report = path.join(root, ".ci/tmp/playwright.json");
  rmSync(report, { force: true });
  const status = run("npx", ["playwright", "test"], { ...process.env, CHROMIUM_PATH: browser.path });
  if (!existsSync(report)) return { passed: 0, failed: 1 };
  const { stats } = JSON.parse(readFileSync(report, "utf8")) as {
    stats: { expected: number; unexpected: number; flaky: number };
  };
  // A failed global setup or a crash leaves no failed test but must not pass silently.
  return {
    passed: stats.expected + stats.flaky,
    failed: stats.unexpected + (status !== 0 && stats.unexpected === 0 ? 1 : 0),
  };
}

async function main(): Promise<void> {
  await ensureSupportedNode(root);
  console.log(`Node ${process.versions.node}`);
  const tiers = selectedTiers();
  const args = process.argv.slice(2);
  let passed = 0;
  let failed = 0;

  // Every tier but unit serves the build (the observability test runs `npm start`, the packaging and browser tests
  // the compiled server and Next.js's output).
  const built = existsSync(path.join(root, ".next/BUILD_ID")) && existsSync(path.join(root, "dist/serve.js"));
  if (tiers.some((tier) => tier !== "unit") && (!process.env.SKIP_BUILD || !built)) {
    if (run("npm", ["run", "build"]) !== 0) {
      console.error("build failed");
      failed += 1;
    }
  }

  mkdirSync(path.join(root, ".ci/tmp"), { recursive: true });
  const lines: string[] = [];
  for (const tier of tiers) {
    const started = performance.now();
    const counts = tier === "browser" ? browserTier() : vitestTier(tier, args);
    const seconds = Math.round((performance.now() - started) / 1000);
    lines.push(`${tier}: ${counts.passed} passed, ${counts.failed} failed in ${seconds} s`);
    console.log(`\n${lines.at(-1)}`);
    passed += counts.passed;
    failed += counts.failed;
  }

  console.log(`\n${lines.join("\n")}`);
  console.log(`${passed} passed, ${failed} failed`);
  process.exit(failed > 0 || passed === 0 ? 1 : 0);
}

void main();
