// Finds or obtains the Chromium the Playwright tests drive: `npm test` must work on a machine that has
// none yet. Playwright's own browser download is tried but cannot be fetched everywhere (it cannot on our CI
// machines), so a system Chromium is the usual answer.
import { spawnSync } from "node:child_process";
import { accessSync, constants } from "node:fs";
import { createRequire } from "node:module";

/** Where browsers are usually installed, in order of preference. */
const CANDIDATES = [
  "/usr/bin/chromium",
  "/usr/bin/chromium-browser",
  "/snap/bin/chromium",
  "/usr/bin/google-chrome",
  "/usr/bin/google-chrome-stable",
  "/Applications/Chromium.app/Contents/MacOS/Chromium",
  "/Applications/Google Chrome.app/Contents/MacOS/Google Chrome",
];

function executable(file: string | undefined): file is string {
  if (!file) return false;
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** The Chromium that `npx playwright install chromium` put in Playwright's cache, when there is one. */
function playwrightChromium(): string | undefined {
  try {
    const require = createRequire(import.meta.url);
    const { chromium } = require("playwright-core") as { chromium: { executablePath(): string } };
    return chromium.executablePath();
  } catch {
    return undefined;
  }
}

/**
 * An installed Chromium: `CHROMIUM_PATH` when set (it must be executable), else the first of the usual system
 * locations, else Playwright's own download.
 * @returns its path, or null when none is installed.
 */
export function findChromium(): string | null {
  const configured = process.env.CHROMIUM_PATH?.trim();
  if (configured) return executable(configured) ? configured : null;
  return CANDIDATES.find(executable) ?? [playwrightChromium()].find(executable) ?? null;
}

function attempt(command: string, args: string[], timeoutMs: number): boolean {
  const env = { ...process.env, DEBIAN_FRONTEND: "noninteractive" };
  return spawnSync(command, args, { stdio: "inherit", timeout: timeoutMs, env }).status === 0;
}

/**
 * Finds a Chromium ({@link findChromium}) or obtains one: `npx playwright install chromium`, then, on Debian or Ubuntu
 * as root, `apt-get install chromium`.
 * @returns `{ path }`, or `{ error }`: one line saying what to run when none could be had.
 */
export function obtainChromium(): { path: string } | { error: string } {
  if (process.env.CHROMIUM_PATH?.trim() && !findChromium()) {
    return { error: `CHROMIUM_PATH=${process.env.CHROMIUM_PATH} is not an executable file.` };
  }
  let found = findChromium();
  if (found) return { path: found };
  console.log("No Chromium found; trying `npx playwright install chromium`.");
  attempt("npx", ["playwright", "install", "chromium"], 300_000);
  found = findChromium();
  if (found) return { path: found };
  const root = typeof process.getuid === "function" && process.getuid() === 0;
  if (process.platform === "linux" && root && executable("/usr/bin/apt-get")) {
    console.log("Trying `apt-get install chromium` (Debian/Ubuntu).");
    attempt("apt-get", ["update", "-qq"], 300_000);
    attempt("apt-get", ["install", "-y", "-qq", "chromium"], 600_000);
    found = findChromium();
    if (found) return { path: found };
  }
  return {
    error:
      "No Chromium for the browser tests: run `npx playwright install chromium`, or `sudo apt-get install chromium` (Debian/Ubuntu), or set CHROMIUM_PATH to a Chromium or Chrome binary.",
  };
}
