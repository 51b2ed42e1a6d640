// The compiled server as production runs it (`node <npm start's flags> dist/serve.js`, no tsx) on the test database
// and the real Redis: the liveness and readiness probes outside the rate limits and the audit log, the status
// endpoint and /readyz still answering after an address has been refused 400 times, the settings' refusals over
// /api/trpc with their documented statuses (better-auth's included, from the bundles of a production build), a server
// action posted from another origin refused with 403 and no error line, Prometheus metrics served without an error
// line in the log, a SIGTERM that turns /readyz to 503 while a slow request is still being served, finishes that
// request and keeps every audit row; and the start-ups production refuses (a secret left at .env.example's
// placeholder, no PUBLIC_URL where the service is not local). Needs a production build (`npm test` makes one first).
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { request } from "node:http";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { prisma } from "../../server/db/transaction";
import { ENV_EXAMPLE_PLACEHOLDER } from "../../server/env";
import { client, createTestOrg } from "../helpers/api";
import { memberIdOf, orgWithRoles, type TestMember } from "../helpers/members";
import { freePort } from "../helpers/ports";

const root = path.resolve(import.meta.dirname, "../..");
/** The anonymous window of this server: small, so 400 refusals are mostly 429s. */
const ANONYMOUS_PER_MIN = 50;
/** How long the server keeps serving after SIGTERM with /readyz at 503 (ms). */
const SHUTDOWN_DELAY_MS = 4_000;
let child: ChildProcess;
let origin = "";
let metricsOrigin = "";
let output = "";

/** npm start's Node flags (package.json `start`: `node <flags> dist/serve.js`). */
function startFlags(): string[] {
  const manifest = JSON.parse(readFileSync(path.join(root, "package.json"), "utf8")) as { scripts: { start: string } };
  return manifest.scripts.start.split(/\s+/).filter((word) => word.startsWith("--"));
}

beforeAll(async () => {
  expect(existsSync(path.join(root, "dist", "serve.js")), "run `npm run build` first").toBe(true);
  const port = await freePort();
  const metricsPort = await freePort();
  metricsOrigin = `http://127.0.0.1:${metricsPort}`;
  child = spawn(process.execPath, [...startFlags(), path.join(root, "dist", "serve.js")], {
    cwd: root,
    env: {
      ...process.env,
      PORT: String(port),
      METRICS_PORT: String(metricsPort),
      NODE_ENV: "production",
      NEXT_TELEMETRY_DISABLED: "1",
      RATE_LIMIT_ANONYMOUS_PER_MIN: String(ANONYMOUS_PER_MIN),
      // Windows of its own: the other servers of this run count 127.0.0.1 too, with a limit of a million.
      KV_PREFIX: `${process.env.KV_PREFIX}production-server:`,
      SHUTDOWN_DELAY_MS: String(SHUTDOWN_DELAY_MS),
      // One proxy hop: the refused-client test counts under an address of its own (X-Forwarded-For), so the window
      // it fills does not refuse the later tests' new keys from 127.0.0.1.
      TRUST_PROXY: "1",
      // A production server that trusts a proxy must be told its public origin (server/env.ts productionRefusal).
      PUBLIC_URL: `http://127.0.0.1:${port}`,
    },
  });
  child.stdout?.on("data", (chunk) => {
    output += chunk;
  });
  child.stderr?.on("data", (chunk) => {
    output += chunk;
  });
  origin = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline && child.exitCode === null) {
    if (
      await fetch(`${origin}/readyz`).then(
        (res) => res.ok,
        () => false,
      )
    )
      return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`the server did not become ready:\n${output.slice(-2_000)}`);
}, 90_000);

afterAll(() => {
  if (child.exitCode === null) child.kill("SIGKILL");
});

describe("probes", () => {
  it("runs no TypeScript loader: the serving process is node on dist/serve.js", () => {
    const commandLine = readFileSync(`/proc/${child.pid}/cmdline`, "utf8").split("\0");
    expect(commandLine.at(-2)).toBe(path.join(root, "dist", "serve.js"));
    expect(commandLine.join(" ")).not.toMatch(/tsx|ts-node|--loader|--import/);
  });

  it("GET /livez is 200 and GET /readyz 200 with every check up, as plain JSON without rate-limit headers", async () => {
    const live = await fetch(`${origin}/livez`);
    expect(live.status).toBe(200);
    expect(await live.json()).toEqual({ status: "live" });
    expect(live.headers.get("cache-control")).toBe("no-store");
    const ready = await fetch(`${origin}/readyz?verbose`);
    expect(ready.status).toBe(200);
    expect(ready.headers.get("x-ratelimit-limit")).toBeNull();
    const body = await ready.json();
    expect(body).toMatchObject({
      status: "ready",
      checks: {
        database: { status: "up", driver: "postgres" },
        cache: { status: "up", driver: "redis" },
        migrations: { status: "up", pending: [] },
      },
    });
    expect(body.reason).toBeUndefined();
    expect((await fetch(`${origin}/readyz`, { method: "HEAD" })).status).toBe(200);
    const post = await fetch(`${origin}/livez`, { method: "POST" });
    expect(post.status).toBe(405);
    expect(post.headers.get("allow")).toBe("GET, HEAD");
  });

  it("probes are never rate-limited nor audited: 3 × the anonymous window of probes all answer 200", async () => {
    const before = await prisma().auditLog.count({ where: { path: { in: ["/livez", "/readyz"] } } });
    const statuses = await Promise.all(
      Array.from({ length: ANONYMOUS_PER_MIN * 3 }, (_, i) =>
        fetch(`${origin}/${i % 2 ? "livez" : "readyz"}`).then((res) => res.status),
      ),
    );
    expect(statuses.filter((status) => status !== 200)).toEqual([]);
    const after = await prisma().auditLog.count({ where: { path: { in: ["/livez", "/readyz"] } } });
    expect(after).toBe(before);
  });

  it("after 400 refused anonymous requests (bad keys) from one address, /api/v1/status and /readyz answer 200", async () => {
    // Ten at a time: a burst of 400 on this shared machine could push a Redis call past KV_TIMEOUT_MS, and the
    // limiter would then count in memory for a second (documented), which blurs the exact split below.
    const from = { "X-Forwarded-For": "198.51.100.7" };
    const refused: number[] = [];
    for (let i = 0; i < 400; i += 10) {
      const batch = Array.from({ length: 10 }, (_, j) =>
        fetch(`${origin}/api/v1/accounts`, { headers: { ...from, Authorization: `Bearer msp_live_bad${i + j}` } }).then(
          (res) => res.status,
        ),
      );
      refused.push(...(await Promise.all(batch)));
    }
    expect(refused.filter((status) => status !== 401 && status !== 429)).toEqual([]);
    expect(refused.filter((status) => status === 401).length).toBeGreaterThanOrEqual(ANONYMOUS_PER_MIN);
    expect(refused.filter((status) => status === 429).length).toBeGreaterThanOrEqual(400 - 2 * ANONYMOUS_PER_MIN);
    // The anonymous window of this address is full: another anonymous request is refused …
    expect((await fetch(`${origin}/api/v1/openapi.json`, { headers: from })).status).toBe(429);
    // … but the status endpoint counts in a window of its own, and the probes in none.
    const status = await fetch(`${origin}/api/v1/status`, { headers: from });
    expect(status.status).toBe(200);
    expect(status.headers.get("ratelimit-policy")).toBe(`"status";q=${ANONYMOUS_PER_MIN};w=60`);
    expect(Number(status.headers.get("x-ratelimit-remaining"))).toBe(ANONYMOUS_PER_MIN - 1);
    expect((await fetch(`${origin}/readyz`, { headers: from })).status).toBe(200);
  });
});

/** Calls a settings procedure through the HTTP door as `member` (their session cookie), from the server's own origin. */
async function door(
  member: TestMember | null,
  procedure: string,
  input: unknown,
  headers: Record<string, string> = {},
) {
  const res = await fetch(`${origin}/api/trpc/${procedure}`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      origin,
      ...(member ? { cookie: member.request.headers.get("cookie") ?? "" } : {}),
      ...headers,
    },
    body: JSON.stringify(input),
  });
  const body = (await res.json()) as {
    result?: { data: Record<string, unknown> };
    error?: { message: string; data?: { httpStatus: number; apiCode: string | null } };
  };
  return { status: res.status, body };
}

describe("settings refusals over /api/trpc", () => {
  it("answer with their status and words: wrong password and code 422, existing member 422, last owner 422, 429 after too many", async () => {
    const { orgId, members } = await orgWithRoles();
    const wrongPassword = await door(members.viewer, "security.startTotp", { password: "not the password" });
    expect(wrongPassword.status).toBe(422);
    expect(wrongPassword.body.error).toMatchObject({
      message: "The password is not right",
      data: { httpStatus: 422, apiCode: "validation_error" },
    });
    const enrolment = await door(members.admin, "security.startTotp", { password: members.admin.password });
    expect(enrolment.status).toBe(200);
    const wrongCode = await door(members.admin, "security.confirmTotp", { code: "12345" });
    expect(wrongCode.status).toBe(422);
    expect(wrongCode.body.error?.message).toBe("The code is not right: enter the current one from your app");
    const existing = await door(members.owner, "team.invite", { email: members.viewer.email, role: "viewer" });
    expect(existing.status).toBe(422);
    expect(existing.body.error?.message).toBe("This person is already a member");
    const lastOwner = await door(members.owner, "team.removeMember", {
      memberId: await memberIdOf(orgId, members.owner.userId),
    });
    expect(lastOwner.status).toBe(422);
    expect(lastOwner.body.error?.message).toBe("An organisation always keeps at least one owner");
    const demoteOwner = await door(members.admin, "team.changeRole", {
      memberId: await memberIdOf(orgId, members.owner.userId),
      role: "viewer",
    });
    expect(demoteOwner.status).toBe(403);

    const statuses: number[] = [];
    for (let i = 0; i < 11; i++) {
      statuses.push((await door(members.developer, "security.startTotp", { password: `guess ${i}` })).status);
    }
    expect(statuses.slice(0, 10)).toEqual(Array(10).fill(422));
    const limited = await door(members.developer, "security.disableTotp", { password: "one more" });
    expect(limited.status).toBe(429);
    expect(limited.body.error?.message).toMatch(/^Too many attempts: wait 1[45] minutes and try again$/);
    expect(statuses[10]).toBe(429);
    expect(
      await prisma().settingsAuditEntry.count({
        where: { orgId, actorUserId: members.developer.userId, action: "verification.failed" },
      }),
    ).toBe(12);
  });

  it("team changes answer at once with better-auth's queries in their transaction; the door keeps the pages' rules", async () => {
    const { orgId, members } = await orgWithRoles();
    const invited = await door(members.admin, "team.invite", {
      email: `prod-${Date.now()}@example.com`,
      role: "viewer",
    });
    expect(invited.status).toBe(200);
    expect(invited.body.result?.data).toMatchObject({ role: "viewer", link: expect.stringContaining("/invite/") });
    const changed = await door(members.owner, "team.changeRole", {
      memberId: await memberIdOf(orgId, members.viewer.userId),
      role: "developer",
    });
    expect(changed.status).toBe(200);
    expect(
      await prisma().settingsAuditEntry.count({
        where: { orgId, action: { in: ["invitation.created", "member.roleChanged"] } },
      }),
    ).toBe(2);
    expect(output).not.toContain("second database connection");
    expect(output).not.toContain("settings procedure failed");

    expect((await door(null, "team.invite", { email: "z@example.com", role: "viewer" })).status).toBe(401);
    expect(
      (
        await door(
          members.owner,
          "team.invite",
          { email: "x@example.com", role: "viewer" },
          { origin: "https://evil.example" },
        )
      ).status,
    ).toBe(403);
    const noOrigin = await fetch(`${origin}/api/trpc/team.invite`, {
      method: "POST",
      headers: { "content-type": "application/json", cookie: members.owner.request.headers.get("cookie") ?? "" },
      body: JSON.stringify({ email: "y@example.com", role: "viewer" }),
    });
    expect(noOrigin.status).toBe(403);
  });

  it("a server action posted to a page from another origin is 403, with no error line in the log", async () => {
    const { members } = await orgWithRoles();
    const from = output.length;
    const refused = await fetch(`${origin}/settings/keys`, {
      method: "POST",
      headers: {
        origin: "https://evil.example",
        cookie: members.owner.request.headers.get("cookie") ?? "",
        "next-action": "7f".repeat(21),
        "content-type": "text/plain;charset=UTF-8",
      },
      body: "[]",
    });
    expect(refused.status).toBe(403);
    await new Promise((resolve) => setTimeout(resolve, 200));
    const written = output.slice(from).split("\n");
    expect(written.filter((line) => /"level":"(?:error|fatal)"|does not match `origin`/.test(line))).toEqual([]);
    expect(written.some((line) => line.includes('"topic":"pages.cross-origin-action"'))).toBe(true);
  });
});

describe("metrics", () => {
  it("with METRICS_PORT, start-up and scrapes log no error line; /metrics has the settled resource (host.id)", async () => {
    const scraped: string[] = [];
    for (let scrape = 0; scrape < 2; scrape++) {
      const metrics = await fetch(`${metricsOrigin}/metrics`);
      expect(metrics.status).toBe(200);
      scraped.push(await metrics.text());
    }
    const errors = output.split("\n").filter((line) => /"level":"(?:error|fatal)"/.test(line));
    expect(errors).toEqual([]);
    for (const text of scraped) expect(text).toMatch(/^target_info\{[^}]*host_id="[^"]+"/m);
  });
});

/** Runs the compiled server with `variables` over the test's environment until it exits (at most 30 s; a start
 * that is not refused would fail on port 1 after its database checks). */
function refusedStart(variables: Record<string, string>): { status: number | null; stdout: string; stderr: string } {
  return spawnSync(process.execPath, [...startFlags(), path.join(root, "dist", "serve.js")], {
    cwd: root,
    encoding: "utf8",
    timeout: 30_000,
    env: { ...process.env, NODE_ENV: "production", NEXT_TELEMETRY_DISABLED: "1", PORT: "1", ...variables },
  });
}

describe("production start-up refusals", () => {
  it("refuses a secret left at .env.example's placeholder in one line naming each variable, exit 1", () => {
    const started = refusedStart({
      BETTER_AUTH_SECRET: ENV_EXAMPLE_PLACEHOLDER,
      INNGEST_SIGNING_KEY: ENV_EXAMPLE_PLACEHOLDER,
    });
    expect(started.status).toBe(1);
    expect(started.stdout).toBe("");
    expect(started.stderr.trim().split("\n")).toEqual([
      expect.stringMatching(
        /^BETTER_AUTH_SECRET, INNGEST_SIGNING_KEY still hold \.env\.example's placeholder .*openssl rand -hex 32/,
      ),
    ]);
  });

  it("refuses to start without PUBLIC_URL when the database is on another host or a proxy is trusted", () => {
    const cases: Array<Record<string, string>> = [
      { DATABASE_URL: "postgresql://crm:secret@postgres.internal:5432/crm" },
      { TRUST_PROXY: "1" },
    ];
    for (const variables of cases) {
      const started = refusedStart({ ...variables, PUBLIC_URL: "" });
      expect(started.status, JSON.stringify(variables)).toBe(1);
      expect(started.stderr.trim().split("\n")).toEqual([
        expect.stringMatching(/^PUBLIC_URL is required in production .* e\.g\. https:\/\/crm\.example\.com/),
      ]);
    }
  });
});

/** Starts a POST whose body is only half sent; `finish()` sends the rest and resolves with the answer. */
function slowCreate(key: string): { finish: () => Promise<{ status: number; body: string }> } {
  const body = JSON.stringify({ name: "Created during the drain" });
  const url = new URL(`${origin}/api/v1/accounts`);
  let answer!: Promise<{ status: number; body: string }>;
  const req = request({
    host: url.hostname,
    port: url.port,
    path: url.pathname,
    method: "POST",
    headers: { Authorization: `Bearer ${key}`, "Content-Type": "application/json", "Content-Length": body.length },
  });
  answer = new Promise((resolve, reject) => {
    req.on("response", (res) => {
      let text = "";
      res.on("data", (chunk) => {
        text += chunk;
      });
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body: text }));
    });
    req.on("error", reject);
  });
  req.write(body.slice(0, 10));
  return {
    finish: () => {
      req.end(body.slice(10));
      return answer;
    },
  };
}

describe("shutdown", () => {
  it("SIGTERM turns /readyz to 503 while a slow request is served, which completes; every audit row is kept", async () => {
    const org = await createTestOrg();
    const api = client(`${origin}/api/v1`, org.key);
    const responses = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        i % 3 === 0 ? api("POST", "/accounts", { name: `Shutdown ${i}` }) : api("GET", "/accounts?limit=1"),
      ),
    );
    for (const res of responses) expect([200, 201]).toContain(res.status);

    const slow = slowCreate(org.key);
    // Let the request reach the server and wait there for the rest of its body.
    await new Promise((resolve) => setTimeout(resolve, 300));
    const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
    child.kill("SIGTERM");
    let readiness: Response | undefined;
    for (let attempt = 0; attempt < 40 && readiness?.status !== 503; attempt++) {
      readiness = await fetch(`${origin}/readyz`);
      if (readiness.status !== 503) await new Promise((resolve) => setTimeout(resolve, 25));
    }
    expect(readiness?.status).toBe(503);
    expect(await readiness?.json()).toMatchObject({
      status: "shutting_down",
      reason: expect.stringContaining("shutting down"),
    });
    // Alive while draining: only readiness changed.
    expect((await fetch(`${origin}/livez`)).status).toBe(200);

    const created = await slow.finish();
    expect(created.status).toBe(201);
    const code = await exited;
    expect(code, output.slice(-1_000)).toBe(0);
    expect(output).toContain("SIGTERM: /readyz answers 503");
    expect(output).toContain("Stopped.");

    const requestIds = [...responses.map((res) => res.body.requestId), JSON.parse(created.body).requestId];
    const stored = await prisma().auditLog.count({ where: { requestId: { in: requestIds }, orgId: org.orgId } });
    expect(stored).toBe(31);
  }, 60_000);
});
