// `npm run inngest` where the Inngest dev server cannot be fetched: one line on stderr saying why and what to do, exit
// 1, instead of npx's silent exit 1.
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { expect, it } from "vitest";
import { INNGEST_CLI, installFailure } from "./inngest";

const root = path.resolve(import.meta.dirname, "..");

// What inngest-cli's install script printed on a machine that reaches the npm registry only.
const DOWNLOAD_FAILED = `FetchError: request to https://github.com/inngest/inngest/releases/download/v1.45.1/inngest_1.45.1_linux_amd64.tar.gz failed, reason: getaddrinfo ENOTFOUND github.com
    at ClientRequest.<anonymous> (/root/.npm/_npx/1ebc0e3f1b1ce46f/node_modules/node-fetch/lib/index.js:1501:11)
  type: 'system',
  errno: 'ENOTFOUND',
  code: 'ENOTFOUND'
}`;

it("names the failed binary download and says what to run instead, in one line", () => {
  const line = installFailure(DOWNLOAD_FAILED);
  expect(line.split("\n")).toHaveLength(1);
  expect(line).toContain(`${INNGEST_CLI}) did not start`);
  expect(line).toContain("could not download the binary from cli.inngest.com or github.com");
  expect(line).toContain("(getaddrinfo ENOTFOUND github.com)");
  expect(line).toContain("docker run --rm --add-host=host.docker.internal:host-gateway -p 8288:8288");
  expect(line).toContain("inngest dev -u http://localhost:3000/api/inngest");
});

it("run where npm cannot fetch the package (empty cache, offline): exits 1 with one line on stderr", {
  timeout: 60_000,
}, () => {
  const cache = mkdtempSync(path.join(os.tmpdir(), "npm-cache-"));
  try {
    const result = spawnSync(process.execPath, ["--import", "tsx", "scripts/inngest.ts"], {
      cwd: root,
      encoding: "utf8",
      env: { ...process.env, npm_config_cache: cache, npm_config_offline: "true", PORT: "3999" },
    });
    expect(result.status).toBe(1);
    expect(result.stdout).toBe("");
    const lines = result.stderr.trim().split("\n");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      /^npm run inngest: the Inngest dev server \(inngest-cli@[\d.]+\) did not start: npm could not install it \(ENOTCACHED/,
    );
    expect(lines[0]).toContain("http://localhost:3999/api/inngest");
  } finally {
    rmSync(cache, { recursive: true, force: true });
  }
});
