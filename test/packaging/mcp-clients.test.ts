// The official MCP clients against the compiled server (`npm start`, on the test database and Redis), through
// scripts/mcp-clients.ts: the MCP Inspector's CLI lists the tools and calls a read and a write tool on the 2025-11-25
// handshake and on the 2026-07-28 stateless revision, and the MCP conformance suite runs its server scenarios for
// both revisions against the baseline (test/packaging/mcp-conformance-expected-failures.yaml). Our integration tests
// speak MCP through the SDK the server is built on; these clients are others' reading of the spec. The Inspector
// comes through npx (the npm registry), the suite from node_modules. Needs a production build (`npm run build`).
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { McpClientsReport } from "../../scripts/mcp-clients";
import { FULL_ACCESS_SCOPES } from "../../server/platform/api-keys/scopes";
import { client } from "../helpers/api";
import { freePort } from "../helpers/ports";

const run = promisify(execFile);
const root = path.resolve(import.meta.dirname, "../..");
const work = mkdtempSync(path.join(tmpdir(), "crm-mcp-clients-"));
// npm start, the admin command and the clients run on this Node (CI's Node 24; the Inspector needs >= 22.19).
const env: NodeJS.ProcessEnv = {
  ...process.env,
  PATH: `${path.dirname(process.execPath)}${path.delimiter}${process.env.PATH ?? ""}`,
  NODE_ENV: "production",
  NEXT_TELEMETRY_DISABLED: "1",
  // Rate-limit windows apart from the other servers of the run. The suite's ~200 requests, mostly protocol messages,
  // count in the key's `mcp` window, whose limit is RATE_LIMIT_ANONYMOUS_PER_MIN (a million here, test/global-setup).
  KV_PREFIX: `${process.env.KV_PREFIX}mcp-clients:`,
};

let server: ChildProcess | undefined;
let output = "";
let base = "";
let key = "";

/** `npm start` in a process group of its own, ready once /readyz answers; another port if the first was taken. */
async function start(attempts = 3): Promise<void> {
  const port = await freePort();
  output = "";
  server = spawn("npm", ["start"], { cwd: root, env: { ...env, PORT: String(port) }, detached: true });
  server.stdout?.on("data", (chunk) => {
    output += chunk;
  });
  server.stderr?.on("data", (chunk) => {
    output += chunk;
  });
  base = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 90_000;
  while (Date.now() < deadline && server.exitCode === null) {
    const ready = await fetch(`${base}/readyz`).then(
      (res) => res.ok,
      () => false,
    );
    if (ready) return;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  if (attempts > 1 && /Port \d+ is in use/.test(output)) return start(attempts - 1);
  throw new Error(`npm start did not become ready:\n${output.slice(-2_000)}`);
}

beforeAll(async () => {
  expect(existsSync(path.join(root, "dist", "serve.js")), "run `npm run build` first").toBe(true);
  await start();
  // A key as an operator makes one (the compiled admin command), in an organisation of its own, with every scope (the
  // write tool needs accounts:write) and limits no client run reaches.
  const { stdout } = await run(
    process.execPath,
    [
      "dist/admin.js",
      "create-key",
      "--org",
      `mcp-clients-${randomBytes(4).toString("hex")}`,
      "--scopes",
      FULL_ACCESS_SCOPES.join(","),
      "--limits",
      "100000,100000",
      "--json",
    ],
    { cwd: root, env },
  );
  key = JSON.parse(stdout.trim()).key;
}, 120_000);

afterAll(() => {
  if (server?.pid && server.exitCode === null) {
    try {
      process.kill(-server.pid, "SIGKILL");
    } catch {
      // Already gone.
    }
  }
  rmSync(work, { recursive: true, force: true });
});

/** The statuses a check had in a conformance run (a check id may repeat within a scenario). */
function statuses(report: McpClientsReport, revision: string, name: string): string[] {
  const conformance = report.conformance.runs.find((one) => one.revision === revision);
  return (conformance?.checks ?? []).filter((check) => `${check.scenario}:${check.id}` === name).map((c) => c.status);
}

describe("the MCP Inspector and the MCP conformance suite against npm start", () => {
  it("pass: every Inspector command as expected on both revisions, and no conformance check fails outside the baseline", {
    timeout: 180_000,
  }, async () => {
    const reportFile = path.join(work, "report.json");
    const args = ["--import", "tsx", "scripts/mcp-clients.ts", "--url", `${base}/mcp`, "--key", key];
    const ran = await run(process.execPath, [...args, "--out", path.join(work, "out"), "--report", reportFile], {
      cwd: root,
      env,
      maxBuffer: 16 * 1024 * 1024,
    }).then(
      (result) => ({ code: 0, ...result }),
      (error: { code: number; stdout: string; stderr: string }) => error,
    );
    expect(ran.code, `${ran.stdout}\n${ran.stderr}`).toBe(0);
    expect(ran.stdout.trim().split("\n").at(-1)).toBe("mcp-clients: PASSED");
    const report = JSON.parse(readFileSync(reportFile, "utf8")) as McpClientsReport;
    expect(report.passed).toBe(true);

    // The Inspector: five commands a revision, each as expected, on the wire of its revision.
    expect(report.inspector.package).toBe("@modelcontextprotocol/inspector@2.12.0");
    for (const revision of ["2025-11-25", "2026-07-28"]) {
      const runs = report.inspector.runs.filter((one) => one.revision === revision);
      expect(runs.map((one) => one.name)).toEqual([
        "tools/list",
        "whoami",
        "list_records",
        "create_record",
        "wrong key refused",
      ]);
      expect(runs.flatMap((one) => one.problems)).toEqual([]);
      const methods = runs.flatMap((one) => one.exchanges.map((exchange) => exchange.rpcMethod));
      expect(methods).toContain(revision === "2025-11-25" ? "initialize" : "server/discover");
      expect(methods).toContain("tools/call");
    }
    // Each revision's create_record made its account: two, both written through the tool.
    const accounts = await client(`${base}/api/v1`, key)("GET", "/accounts?limit=100");
    expect(accounts.status).toBe(200);
    expect(accounts.body.data.filter((account: { name: string }) => account.name === "Inspector")).toHaveLength(2);

    // The conformance suite: its own verdict with the baseline, and the checks that apply to our server ran and passed.
    expect(report.conformance.package).toBe("@modelcontextprotocol/conformance@0.2.0-alpha.12");
    for (const conformance of report.conformance.runs) {
      expect(conformance.exitCode, conformance.revision).toBe(0);
      expect(conformance.unexpectedFailures, conformance.revision).toEqual([]);
      expect(conformance.staleEntries, conformance.revision).toEqual([]);
      // Every message our server sent validated against the revision's JSON schema.
      const wire = conformance.checks.filter((check) => check.id === "wire-schema-valid");
      expect(wire.length, conformance.revision).toBeGreaterThan(25);
      expect(wire.filter((check) => check.status !== "SUCCESS")).toEqual([]);
    }
    const passing = {
      "2025-11-25": [
        "server-initialize:server-initialize",
        "ping:ping",
        "tools-list:tools-list",
        "tools-list:tools-name-format",
        "dns-rebinding-protection:localhost-host-rebinding-rejected",
        "dns-rebinding-protection:localhost-host-valid-accepted",
      ],
      "2026-07-28": [
        "server-stateless:sep-2575-server-implements-discover",
        "server-stateless:sep-2575-request-meta-invalid-missing-meta",
        "server-stateless:sep-2575-http-server-meta-invalid-400",
        "server-stateless:sep-2575-server-unsupported-version-error",
        "server-stateless:sep-2575-http-server-unsupported-version-400",
        "server-stateless:sep-2575-http-server-header-mismatch-400",
        "server-stateless:sep-2575-http-server-method-not-found-404-initialize",
        "server-stateless:sep-2575-server-sends-subscription-ack",
        "server-stateless:sep-2575-http-server-error-jsonrpc-id",
        "tools-list:tools-list",
        "tools-list:tools-list-deterministic-order",
        "caching:sep-2549-tools-list-caching-hints",
        "http-header-validation:sep-2243-server-reject-invalid-headers",
        "http-header-validation:sep-2243-server-reject-error-code",
        "http-header-validation:sep-2243-header-name-case-insensitive",
        "http-header-validation:sep-2243-server-accepts-whitespace-header-value",
        "server-sse-multiple-streams:server-accepts-multiple-post-streams",
        "dns-rebinding-protection:localhost-host-rebinding-rejected",
        "dns-rebinding-protection:localhost-host-valid-accepted",
      ],
    };
    for (const [revision, names] of Object.entries(passing)) {
      for (const name of names) {
        const seen = statuses(report, revision, name);
        expect(seen.length, `${revision} ${name} ran`).toBeGreaterThan(0);
        expect(new Set(seen), `${revision} ${name}`).toEqual(new Set(["SUCCESS"]));
      }
    }
  });
});
