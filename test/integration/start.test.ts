// The README's first command on a fresh data directory: `npm start` with no DATABASE_URL/REDIS_URL must migrate the
// embedded database, seed the demo organisation, print a working demo key, and serve the API through Next.js.
// Needs a production build (`npm run build`; `npm test` makes one first).
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { client } from "../helpers/api";
import { freePort } from "../helpers/ports";

const root = path.resolve(import.meta.dirname, "../..");
const dataDir = mkdtempSync(path.join(tmpdir(), "crm-start-"));
let child: ChildProcess;
let output = "";
let base = "";
let demoKey = "";

beforeAll(async () => {
  expect(existsSync(path.join(root, ".next", "BUILD_ID")), "run `npm run build` first").toBe(true);
  const port = await freePort();
  const { DATABASE_URL: _db, REDIS_URL: _redis, ...inherited } = process.env;
  const env: NodeJS.ProcessEnv = { ...inherited, DATA_DIR: dataDir, PORT: String(port), NODE_ENV: "production" };
  child = spawn("npm", ["start"], { cwd: root, env, detached: true });
  child.stdout?.on("data", (chunk) => {
    output += chunk;
  });
  child.stderr?.on("data", (chunk) => {
    output += chunk;
  });
  base = `http://localhost:${port}`;
  const deadline = Date.now() + 90_000;
  while (Date.now() < deadline) {
    const ready = await fetch(`${base}/api/v1/status`).then(
      (res) => res.status === 200,
      () => false,
    );
    if (ready) break;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  demoKey = /Demo key:\s+(msp_test_\w+)/.exec(output)?.[1] ?? "";
}, 120_000);

afterAll(() => {
  // npm starts next as a grandchild: end the whole process group.
  if (child?.pid) process.kill(-child.pid, "SIGTERM");
  rmSync(dataDir, { recursive: true, force: true });
});

describe("npm start (embedded defaults)", () => {
  it("prints the base URL, the docs URL and a working demo test key", async () => {
    expect(output).toContain(`${base}/api/v1`);
    expect(output).toContain(`${base}/docs`);
    expect(demoKey).toMatch(/^msp_test_[0-9A-Za-z]{36}$/);
    const res = await client(`${base}/api/v1`, demoKey)("GET", "/accounts?limit=2");
    expect(res.status).toBe(200);
    expect(res.body.data).toHaveLength(2);
    expect(res.body.hasMore).toBe(true);
  });

  it("prints the demo login and serves the sign-in page, the settings redirect and the API reference", async () => {
    expect(output).toMatch(/Demo login: demo@example\.com \/ \S{10,}/);
    expect(output).toContain(`${base}/settings`);
    const signin = await fetch(`${base}/signin`);
    expect(signin.status).toBe(200);
    expect(await signin.text()).toContain('type="password"');
    const settings = await fetch(`${base}/settings`, { redirect: "manual" });
    expect([303, 307, 308]).toContain(settings.status);
    expect(settings.headers.get("location")).toContain("/signin");
    expect(settings.headers.get("x-frame-options")).toBe("DENY");
    const docs = await fetch(`${base}/docs`);
    expect(docs.status).toBe(200);
    expect(await docs.text()).toContain("/docs/scalar.js");
  });

  it("answers the curl walkthrough through Next.js: create, list, page, bulk", async () => {
    const api = client(`${base}/api/v1`, demoKey);
    expect((await api("POST", "/accounts", { name: "Walkthrough Co", industry: "Legal" })).status).toBe(201);
    const bulk = await api("POST", "/accounts/bulk", {
      accounts: [
        { name: "Bulk A", externalId: "w-1" },
        { name: "Bulk B", externalId: "w-2" },
      ],
    });
    expect(bulk.body.data).toMatchObject({ created: 2, updated: 0, total: 2 });
    const first = await api("GET", "/accounts?limit=3&sort=name:asc");
    const second = await api("GET", `/accounts?limit=3&sort=name:asc&cursor=${first.body.nextCursor}`);
    expect(second.status).toBe(200);
    expect(second.body.data[0].id).not.toBe(first.body.data[2].id);
  });

  it("keeps the envelope on unknown paths and wrong methods served by Next.js", async () => {
    const api = client(`${base}/api/v1`, demoKey);
    for (const [method, path, status, code] of [
      ["GET", "/nope/deeper", 404, "not_found"],
      ["GET", "", 404, "not_found"],
      ["PUT", "/accounts", 405, "method_not_allowed"],
    ] as const) {
      const res = await api(method, path);
      expect(res.status).toBe(status);
      expect(res.body.error.code).toBe(code);
      expect(res.headers.get("x-request-id")).toBe(res.body.requestId);
    }
  });

  it("links every error to a docs page that describes its code", async () => {
    const res = await client(`${base}/api/v1`)("GET", "/accounts");
    expect(res.status).toBe(401);
    const docs = await fetch(res.body.error.docsUrl);
    expect(docs.status).toBe(200);
    const html = await docs.text();
    expect(html).toContain('id="unauthorized"');
    for (const code of [
      "bad_request",
      "invalid_json",
      "insufficient_scope",
      "not_found",
      "method_not_allowed",
      "validation_error",
      "internal_error",
    ]) {
      expect(html).toContain(`id="${code}"`);
    }
  });

  it("serves a valid-looking OpenAPI document whose server is this base URL", async () => {
    const document = await fetch(`${base}/api/v1/openapi.json`).then((res) => res.json());
    expect(document.openapi).toBe("3.1.0");
    expect(document.servers[0].url).toBe(`${base}/api/v1`);
  });
});
