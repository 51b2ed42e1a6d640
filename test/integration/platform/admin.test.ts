// The operator command (scripts/admin.ts): its commands run in this process as `npm run admin -- …` would
// (test/helpers/admin.ts), and in one test as the separate process an operator starts, for what only a process shows:
// its exit status, its output (through npm, as a pipe reads it) and that it ends by itself.
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, expect, it } from "vitest";
import { prisma } from "../../../server/db/transaction";
import { admin } from "../../helpers/admin";
import { client, startApi, type TestServer } from "../../helpers/api";

const run = promisify(execFile);
const root = path.resolve(import.meta.dirname, "../../..");

let server: TestServer;
beforeAll(async () => {
  server = await startApi();
});
afterAll(() => server.close());

it("run as a process, prints the usage without a database, and `npm run -s admin -- … --json` prints only JSON", {
  timeout: 90_000,
}, async () => {
  const usage = await run(process.execPath, ["--import", "tsx", "scripts/admin.ts", "--help"], {
    cwd: root,
    // Nothing answers on port 1: a database connection would fail the command.
    env: { ...process.env, DATABASE_URL: "postgresql://postgres@127.0.0.1:1/none" },
  });
  expect(usage.stdout).toMatch(/^Usage:/);
  expect(usage.stdout).toContain("npm run admin -- create-key");

  // As the README shows it, through npm, for a pipe: stdout is the one JSON line, whatever is logged meanwhile.
  const slug = `pipe-${randomBytes(4).toString("hex")}`;
  const { stdout } = await run(
    "npm",
    ["run", "-s", "admin", "--", "create-key", "--org", slug, "--scopes", "accounts:read", "--json"],
    { cwd: root, env: { ...process.env, LOG_LEVEL: "trace" } },
  );
  expect(stdout.endsWith("\n")).toBe(true);
  expect(stdout.trim().split("\n")).toHaveLength(1);
  const printed = JSON.parse(stdout);
  expect(printed).toEqual({
    orgId: expect.any(String),
    key: expect.stringMatching(/^msp_live_/),
    scopes: ["accounts:read"],
  });
  expect((await client(server.url, printed.key)("GET", "/accounts")).status).toBe(200);
});

it("-h, help and a command's --help print the usage too", async () => {
  for (const args of [["-h"], ["help"], ["create-key", "--help"]]) {
    const { stdout } = await admin(...args);
    expect(stdout).toMatch(/^Usage:/);
    expect(stdout).toContain("npm run admin -- create-key");
  }
});

it("create-key creates the organisation with its plan and prints a working key as JSON", async () => {
  const slug = `ops-${randomBytes(4).toString("hex")}`;
  const { stdout } = await admin(
    "create-key",
    "--org",
    slug,
    "--scopes",
    "accounts:write,contracts:read",
    "--plan",
    "scale",
    "--json",
  );
  const printed = JSON.parse(stdout.trim());
  expect(printed).toEqual({
    orgId: expect.any(String),
    key: expect.stringMatching(/^msp_live_/),
    scopes: ["accounts:write", "contracts:read"],
  });
  expect(await prisma().organisation.findUnique({ where: { slug } })).toMatchObject({
    id: printed.orgId,
    plan: "SCALE",
    rateLimitPerKey: null,
  });

  const api = client(server.url, printed.key);
  expect((await api("POST", "/accounts", { name: "Ops" })).status).toBe(201);

  const second = JSON.parse(
    (
      await admin(
        "create-key",
        "--org",
        slug,
        "--scopes",
        "admin:read",
        "--test",
        "--plan",
        "pro",
        "--limits",
        "250,500",
        "--json",
      )
    ).stdout,
  );
  expect(second.orgId).toBe(printed.orgId);
  expect(second.key).toMatch(/^msp_test_/);
  expect(await prisma().organisation.findUnique({ where: { slug } })).toMatchObject({
    plan: "PRO",
    rateLimitPerKey: 250,
    rateLimitPerOrg: 500,
  });
  expect((await client(server.url, second.key)("GET", "/accounts")).body.data).toHaveLength(1);
});

it("create-key refuses deprecated scopes and bad options with a message and a non-zero exit", async () => {
  await expect(
    admin("create-key", "--org", "ops-refused", "--scopes", "reconciliation:read", "--json"),
  ).rejects.toMatchObject({
    code: 1,
    stderr: expect.stringContaining("reconciliation"),
  });
  await expect(
    admin("create-key", "--org", "ops-refused", "--scopes", "accounts:read", "--plan", "gold"),
  ).rejects.toMatchObject({
    code: 2,
    stderr: expect.stringContaining("--plan"),
  });
});
