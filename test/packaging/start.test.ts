// The README's first command on a fresh data directory: `npm start` (the compiled server, dist/serve.js) with no
// DATABASE_URL/REDIS_URL must migrate the embedded database, seed the demo organisation, print a working demo key, and
// serve the API and the pages; the embedded database has exactly one owner, which serves it to the compiled admin
// command; the TypeScript client's webhook and retry cases (sdk.suite.ts) pass on its one pooled connection; a second
// server on the same directory is refused; `kill -9` loses no acknowledged write; SIGINT shuts down cleanly; a copy of
// the directory taken while stopped (the deploy guide's backup) starts with the same data. Needs a production build
// (`npm run build`; `npm test` makes one first).
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { request } from "node:http";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { makeSignature } from "better-auth/crypto";
import newman from "newman";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FULL_ACCESS_SCOPES } from "../../server/platform/api-keys/scopes";
import { client } from "../helpers/api";
import { freePort } from "../helpers/ports";
import { type Receiver, startReceiver } from "../helpers/receiver";
import { retryCases, type SdkTarget, webhookCases } from "../integration/contract/sdk.suite";

const run = promisify(execFile);

/** What newman reports of one request it ran. */
interface NewmanExecution {
  request: { method: string; url: { getPath(): string } };
  response?: { code: number };
}
const root = path.resolve(import.meta.dirname, "../..");
const dataDir = mkdtempSync(path.join(tmpdir(), "crm-start-"));
const lockFile = path.join(dataDir, "pglite.lock");
const { DATABASE_URL: _db, REDIS_URL: _redis, ...inherited } = process.env;

interface Started {
  child: ChildProcess;
  output: () => string;
  base: string;
  exited: Promise<number | null>;
}

/**
 * Runs `npm start` in its own process group on a data directory (the test's) and waits until /status answers. A port
 * that another process took between `freePort()` and the server's listen (the packaging tests run side by side, and
 * any outgoing connection may be given it) is replaced by another, up to three times.
 */
async function start(port: number, directory = dataDir, attempts = 3): Promise<Started> {
  const env: NodeJS.ProcessEnv = {
    ...inherited,
    DATA_DIR: directory,
    PORT: String(port),
    NODE_ENV: "production",
    // The client's webhook cases deliver to a receiver on this machine.
    WEBHOOKS_ALLOW_LOOPBACK: "true",
    // The demo key's plan (Growth, 60 a window) counts this file's requests: a refusal waits seconds, not a minute.
    RATE_LIMIT_WINDOW_MS: "5000",
  };
  const child = spawn("npm", ["start"], { cwd: root, env, detached: true });
  let output = "";
  child.stdout?.on("data", (chunk) => {
    output += chunk;
  });
  child.stderr?.on("data", (chunk) => {
    output += chunk;
  });
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  const closed = new Promise<void>((resolve) => child.once("close", () => resolve()));
  const base = `http://localhost:${port}`;
  const deadline = Date.now() + 90_000;
  while (Date.now() < deadline && child.exitCode === null) {
    const ready = await fetch(`${base}/api/v1/status`).then(
      (res) => res.status === 200,
      () => false,
    );
    if (ready) return { child, output: () => output, base, exited };
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  // Its last words arrive with the pipes' close, which may follow the exit.
  if (child.exitCode !== null) await closed;
  if (attempts > 1 && /Port \d+ is in use/.test(output)) return start(await freePort(), directory, attempts - 1);
  throw new Error(`npm start did not become ready:\n${output.slice(-2_000)}`);
}

function stopGroup(started: Started | undefined, signal: NodeJS.Signals): void {
  if (started?.child.pid && started.child.exitCode === null) {
    try {
      process.kill(-started.child.pid, signal);
    } catch {
      // Already gone.
    }
  }
}

function owner(): { pid: number; url: string } {
  return JSON.parse(readFileSync(lockFile, "utf8"));
}

/**
 * The `curl` commands of the README's `sh` blocks as a reader pastes them: continuation lines joined, comments kept
 * (the shell drops them).
 */
function readmeCurlCommands(): string[] {
  const readme = readFileSync(path.join(root, "README.md"), "utf8");
  return [...readme.matchAll(/^```sh\n([\s\S]*?)^```$/gm)]
    .flatMap((block) => (block[1] as string).replace(/\\\n\s*/g, " ").split("\n"))
    .filter((line) => line.startsWith("curl "));
}

let server: Started | undefined;
let demoKey = "";
/** A key the admin command makes while the server runs (organisation "ops", high limits). */
let opsKey = "";

beforeAll(async () => {
  expect(existsSync(path.join(root, ".next", "BUILD_ID")), "run `npm run build` first").toBe(true);
  expect(existsSync(path.join(root, "dist", "serve.js")), "run `npm run build` first").toBe(true);
  server = await start(await freePort());
  demoKey = /Demo key:\s+(msp_test_\w+)/.exec(server.output())?.[1] ?? "";
}, 120_000);

afterAll(() => {
  stopGroup(server, "SIGKILL");
  rmSync(dataDir, { recursive: true, force: true });
});

describe("npm start (embedded defaults)", () => {
  it("prints the base URL, the docs URL, where the embedded database is served, and a working demo test key", async () => {
    const { base } = server as Started;
    expect(server?.output()).toContain(`${base}/api/v1`);
    expect(server?.output()).toContain(`${base}/docs`);
    expect(server?.output()).toContain(`served at ${owner().url}`);
    // No worker is configured by default: the banner says so, with what waits (nothing from the seed) and what to run.
    expect(server?.output()).toMatch(/Webhooks: {3}No webhook worker: nothing is delivered and 0 events waiting\./);
    expect(server?.output()).toContain("`npm run inngest`");
    expect(demoKey).toMatch(/^msp_test_[0-9A-Za-z]{40}$/);
    const res = await client(`${base}/api/v1`, demoKey)("GET", "/accounts?limit=2");
    expect(res.status).toBe(200);
    expect(res.body.data).toHaveLength(2);
    expect(res.body.hasMore).toBe(true);
  });

  it("prints the MCP endpoint and the command that connects Claude Code, and the endpoint answers with the demo key", async () => {
    const { base } = server as Started;
    expect(server?.output()).toContain(`MCP:        ${base}/mcp`);
    expect(server?.output()).toContain(
      `claude mcp add --transport http crm ${base}/mcp --header "Authorization: Bearer ${demoKey}"`,
    );
    const res = await fetch(`${base}/mcp`, {
      method: "POST",
      headers: {
        Authorization: `Bearer ${demoKey}`,
        "Content-Type": "application/json",
        Accept: "application/json, text/event-stream",
      },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "whoami", arguments: {} } }),
    });
    expect(res.status).toBe(200);
    const data = (await res.text()).split("\n").find((line) => line.startsWith("data: ")) ?? "";
    expect(JSON.parse(data.slice(6)).result.structuredContent).toMatchObject({
      mode: "test",
      tools: expect.any(Array),
    });
  });

  it("serves the API before loading Next.js: the banner comes before Next.js's first line, and pages still answer", async () => {
    const { base } = server as Started;
    // A page waits for Next.js to be prepared, so once it answers Next.js has printed its start-up line.
    expect((await fetch(`${base}/signin`)).status).toBe(200);
    const output = server?.output() ?? "";
    const banner = output.indexOf("MSP CRM public API");
    expect(banner).toBeGreaterThanOrEqual(0);
    expect(output.indexOf("next.config")).toBeGreaterThan(banner);
  });

  it("prints the demo login and serves the sign-in page, the settings redirect and the API reference", async () => {
    const { base } = server as Started;
    expect(server?.output()).toMatch(/Demo login: demo@example\.com \/ \S{10,}/);
    expect(server?.output()).toContain(`${base}/settings`);
    const signin = await fetch(`${base}/signin`);
    expect(signin.status).toBe(200);
    expect(await signin.text()).toContain('type="password"');
    const settings = await fetch(`${base}/settings`, { redirect: "manual" });
    expect([303, 307, 308]).toContain(settings.status);
    expect(settings.headers.get("location")).toContain("/signin");
    expect(settings.headers.get("x-frame-options")).toBe("DENY");
    // Reached by another host name (a LAN name, a proxy), the redirect stays on that origin: a path, not 127.0.0.1.
    const { request } = await import("node:http");
    const location = await new Promise<string | undefined>((resolve, reject) => {
      const url = new URL(`${base}/settings`);
      request({ host: url.hostname, port: url.port, path: "/settings", headers: { Host: "crm.lan:8080" } }, (res) => {
        res.resume();
        resolve(res.headers.location);
      })
        .on("error", reject)
        .end();
    });
    expect(location).toBe("/signin?next=%2Fsettings");
    const docs = await fetch(`${base}/docs`);
    expect(docs.status).toBe(200);
    expect(await docs.text()).toContain("/docs/scalar.js");
  });

  it("answers every curl command of the README as written: each exits 0 and prints a JSON body that says success", {
    timeout: 60_000,
  }, async () => {
    const { base } = server as Started;
    const walkthrough = readmeCurlCommands();
    expect(walkthrough.length).toBeGreaterThan(15);
    // The README's own variables: its API with this server's origin, and the demo key it says KEY is.
    const readme = readFileSync(path.join(root, "README.md"), "utf8");
    expect(readme).toMatch(/^KEY=msp_test_…\s+# the demo key printed at start-up$/m);
    const documented = new URL(/^API=(\S+)$/m.exec(readme)?.[1] ?? "");
    const env = { ...inherited, API: `${base}${documented.pathname}`, KEY: demoKey };
    // The demo key's plan allows 60 requests a window (5 s here): a refusal is sent again in the next one, as a
    // reader would, and nothing of it was done.
    const nextWindow = () => new Promise((resolve) => setTimeout(resolve, 2_500));
    const demo = client(env.API, demoKey);
    const api: typeof demo = async (...args) => {
      for (let attempt = 0; ; attempt++) {
        const res = await demo(...args);
        if (res.status !== 429 || attempt === 4) return res;
        await nextWindow();
      }
    };
    const folder = mkdtempSync(path.join(tmpdir(), "crm-readme-curl-"));
    /** Runs one command in sh, as a reader pastes it, with the real curl. */
    const sh = async (command: string) => {
      for (let attempt = 0; ; attempt++) {
        const result = await run("sh", ["-c", command], { cwd: folder, env });
        if (!result.stdout.includes('"code":"rate_limited"') || attempt === 4) return result;
        await nextWindow();
      }
    };
    /** What a reader puts in for each `<placeholder>`: records of the demo organisation, or made for the command. */
    const fill = async (command: string): Promise<string> => {
      let filled = command;
      if (filled.includes("/accounts/<id>")) {
        const made = await api("POST", "/accounts", { name: `README ${randomBytes(3).toString("hex")}` });
        filled = filled.replaceAll("/accounts/<id>", `/accounts/${made.body.data.id}`);
      }
      if (filled.includes("/contacts/<id>")) {
        const contact = (await api("GET", "/contacts?limit=1")).body.data[0];
        filled = filled.replaceAll("/contacts/<id>", `/contacts/${contact.id}`);
      }
      if (filled.includes("<accountId>")) {
        filled = filled.replaceAll("<accountId>", (await api("GET", "/accounts?limit=1")).body.data[0].id);
      }
      if (filled.includes("cursor=<nextCursor>")) {
        // The previous page: the same command without the cursor.
        const previous = JSON.parse((await sh(filled.replace(/&cursor=<nextCursor>/, ""))).stdout);
        filled = filled.replace("<nextCursor>", previous.nextCursor);
      }
      expect(filled, "every placeholder filled").not.toMatch(/<\w+>/);
      return filled;
    };
    try {
      for (const command of walkthrough) {
        const filled = await fill(command);
        const { stdout } = await sh(filled).catch((error: { code: number; stderr: string }) => {
          throw new Error(`${command}\nexited ${error.code}: ${error.stderr}`);
        });
        // A command that saves the answer (`> openapi.json`) prints nothing: the files hold the JSON.
        const saved = [...filled.matchAll(/>\s*(\S+)/g)].map((match) => match[1] as string);
        const bodies = saved.length ? saved.map((file) => readFileSync(path.join(folder, file), "utf8")) : [stdout];
        for (const body of bodies) {
          expect(body.trim(), command).not.toBe("");
          const parsed = JSON.parse(body);
          if (saved.length === 0) expect(parsed, command).toMatchObject({ success: true });
        }
      }
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });

  it("keeps the envelope on unknown paths, odd methods, malformed targets and requests Node.js refuses itself", async () => {
    // node:http sends targets and methods as given; fetch would normalise %2e%2e and refuse TRACE.
    const url = new URL(`${server?.base}/api/v1`);
    const raw = (method: string, target: string) =>
      new Promise<{ status: number; headers: Record<string, unknown>; body: string }>((resolve, reject) => {
        const req = request({ host: url.hostname, port: url.port, path: `/api/v1${target}`, method }, (res) => {
          let body = "";
          res.on("data", (chunk) => {
            body += chunk;
          });
          res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
        });
        req.on("error", reject);
        req.end();
      });
    for (const [method, target, status, code] of [
      ["GET", "/nope/deeper", 404, "not_found"],
      ["GET", "", 404, "not_found"],
      ["PUT", "/accounts", 405, "method_not_allowed"],
      ["TRACE", "/accounts", 405, "method_not_allowed"],
      ["PROPFIND", "/accounts", 405, "method_not_allowed"],
      ["GET", "/accounts/%ZZ", 400, "bad_request"],
      ["GET", "/%2e%2e/settings", 400, "bad_request"],
      ["GET", `/accounts?industry=${"x".repeat(20_000)}`, 431, "headers_too_large"],
    ] as const) {
      const res = await raw(method, target);
      expect(res.status, `${method} ${target.slice(0, 40)}`).toBe(status);
      const body = JSON.parse(res.body);
      expect(body.error.code).toBe(code);
      expect(res.headers["x-request-id"]).toBe(body.requestId);
    }
  });

  it("links every error to a docs page that describes its code", async () => {
    const res = await client(`${server?.base}/api/v1`)("GET", "/accounts");
    expect(res.status).toBe(401);
    const docs = await fetch(res.body.error.docsUrl);
    expect(docs.status).toBe(200);
    const html = await docs.text();
    for (const code of ["unauthorized", "bad_request", "invalid_json", "not_found", "validation_error"]) {
      expect(html).toContain(`id="${code}"`);
    }
  });

  it("serves an OpenAPI document whose server is the origin it was asked at", async () => {
    const { base } = server as Started;
    const document = await fetch(`${base}/api/v1/openapi.json`).then((res) => res.json());
    expect(document.openapi).toBe("3.1.0");
    expect(document.servers[0].url).toBe(`${base}/api/v1`);
    const port = new URL(base).port;
    const byAddress = await fetch(`http://127.0.0.1:${port}/api/v1/openapi.json`).then((res) => res.json());
    expect(byAddress.servers[0].url).toBe(`http://127.0.0.1:${port}/api/v1`);
  });

  it("invites and changes a role at once on the embedded database's one connection (better-auth joins the transaction)", async () => {
    const { base } = server as Started;
    // The demo owner signed in (a session row and its signed cookie, as a sign-in leaves them) and a colleague.
    const database = new pg.Client({ connectionString: owner().url });
    await database.connect();
    const id = () => randomBytes(12).toString("hex");
    const token = id();
    const colleague = { userId: id(), memberId: id() };
    let orgId = "";
    try {
      const demo = await database.query<{ userId: string; orgId: string }>(
        `SELECT u.id AS "userId", m."orgId" FROM "User" u JOIN "Member" m ON m."userId" = u.id WHERE u.email = 'demo@example.com'`,
      );
      const { userId } = demo.rows[0] as { userId: string; orgId: string };
      orgId = (demo.rows[0] as { orgId: string }).orgId;
      await database.query(
        `INSERT INTO "Session" (id, token, "expiresAt", "userId", "activeOrgId", "reauthenticatedAt", "createdAt", "updatedAt")
         VALUES ($1, $2, now() + interval '1 day', $3, $4, now(), now(), now())`,
        [id(), token, userId, orgId],
      );
      await database.query(
        `INSERT INTO "User" (id, name, email, "emailVerified", "createdAt", "updatedAt") VALUES ($1, 'Colleague', $2, true, now(), now())`,
        [colleague.userId, `colleague-${token.slice(0, 8)}@example.com`],
      );
      await database.query(
        `INSERT INTO "Member" (id, "orgId", "userId", role, "createdAt") VALUES ($1, $2, $3, 'viewer', now())`,
        [colleague.memberId, orgId, colleague.userId],
      );
    } finally {
      await database.end();
    }
    // The run's BETTER_AUTH_SECRET (global setup), else the one the first start generated.
    const secret = inherited.BETTER_AUTH_SECRET ?? readFileSync(path.join(dataDir, "auth-secret"), "utf8").trim();
    const cookie = `msp.session_token=${encodeURIComponent(`${token}.${await makeSignature(token, secret)}`)}`;
    const call = (procedure: string, input: unknown) =>
      fetch(`${base}/api/trpc/${procedure}`, {
        method: "POST",
        headers: { "content-type": "application/json", origin: base, cookie },
        body: JSON.stringify(input),
      });
    const invited = await call("team.invite", { email: `invitee-${token.slice(0, 8)}@example.com`, role: "developer" });
    expect(invited.status, await invited.clone().text()).toBe(200);
    const changed = await call("team.changeRole", { memberId: colleague.memberId, role: "developer" });
    expect(changed.status, await changed.clone().text()).toBe(200);
    expect((await changed.json()).result.data).toMatchObject({ role: "developer" });
    expect(server?.output()).not.toMatch(/timeout exceeded when trying to connect|second database connection/);
    expect(orgId).not.toBe("");
  }, 60_000);
});

describe("the Postman collection as a user downloads and runs it", () => {
  it("leaves the served OpenAPI document byte for byte as it was", async () => {
    const { base } = server as Started;
    const before = await fetch(`${base}/api/v1/openapi.json`).then((res) => res.text());
    expect((await fetch(`${base}/api/v1/postman.json`)).status).toBe(200);
    expect(await fetch(`${base}/api/v1/openapi.json`).then((res) => res.text())).toBe(before);
  });

  it("runs in newman with only apiKey set: every list request answers 2xx, nothing 5xx", async () => {
    const { base } = server as Started;
    const collection = await fetch(`${base}/api/v1/postman.json`).then((res) => res.json());
    expect(collection.variable.find((variable: { key: string }) => variable.key === "baseUrl").value).toBe(
      `${base}/api/v1`,
    );
    const executions = await new Promise<NewmanExecution[]>((resolve, reject) => {
      newman.run(
        { collection, envVar: [{ key: "apiKey", value: demoKey }], reporters: [], timeoutRequest: 15_000 },
        (error: Error | null, summary: { run: { executions: NewmanExecution[] } }) =>
          error ? reject(error) : resolve(summary.run.executions),
      );
    });
    // A 429 (the demo key's window is the plan's) is waited out and sent again by the collection: count the answers.
    const outcomes = executions
      .map((execution) => ({
        request: `${execution.request.method} ${execution.request.url.getPath()}`,
        code: execution.response?.code ?? 0,
      }))
      .filter((outcome) => outcome.code !== 429);
    expect(outcomes.length).toBe(collection.item.flatMap((folder: { item: unknown[] }) => folder.item).length);
    expect(outcomes.filter((outcome) => outcome.code >= 500 || outcome.code === 0)).toEqual([]);
    // A list (or the status, the MRR summary) is a GET of /api/v1/<resource>, with no id after it.
    const lists = outcomes.filter((outcome) => /^GET \/api\/v1\/[a-z-]+$/.test(outcome.request));
    expect(lists.length).toBeGreaterThan(8);
    expect(lists.filter((outcome) => outcome.code < 200 || outcome.code >= 300)).toEqual([]);
  }, 120_000);
});

describe("the TypeScript client against npm start, whose pool holds one connection", () => {
  /** A live key in an organisation of its own, made by the compiled admin command through the server's socket. */
  const liveKey = async () => {
    const { stdout } = await run(
      process.execPath,
      [
        "dist/admin.js",
        "create-key",
        "--org",
        `sdk-${randomBytes(4).toString("hex")}`,
        "--scopes",
        FULL_ACCESS_SCOPES.join(","),
        "--limits",
        "100000,100000",
        "--json",
      ],
      { cwd: root, env: { ...inherited, DATA_DIR: dataDir } },
    );
    return JSON.parse(stdout.trim()).key as string;
  };
  let receiver: Receiver;
  let keys: string[] = [];
  beforeAll(async () => {
    receiver = await startReceiver();
    // One key per case below, made at once: each command is a process of its own.
    keys = await Promise.all([liveKey(), liveKey(), liveKey()]);
  }, 60_000);
  afterAll(() => receiver.close());
  const target: SdkTarget = {
    baseUrl: () => `${server?.base}/api/v1`,
    newKey: async () => keys.pop() ?? liveKey(),
    receiver: () => receiver,
  };
  // Each POST carries an Idempotency-Key: test() and redeliver() ran inside the key's transaction and waited 5 s for a
  // second connection before they ran outside it.
  webhookCases(target);
  retryCases(target);
});

describe("the embedded database has one owner", () => {
  it("a second npm start on the same data directory exits 1 with one line naming the owner", async () => {
    const { pid } = owner();
    const port = await freePort();
    const second = await run(process.execPath, ["dist/serve.js"], {
      cwd: root,
      env: { ...inherited, DATA_DIR: dataDir, PORT: String(port), NODE_ENV: "production" },
    }).then(
      () => ({ code: 0, stderr: "" }),
      (error: { code: number; stderr: string }) => error,
    );
    expect(second.code).toBe(1);
    expect(second.stderr.trim().split("\n")).toHaveLength(1);
    expect(second.stderr).toContain(`already open in process ${pid}`);
    expect(owner().pid).toBe(pid);
  }, 60_000);

  it("the compiled admin command goes through the running server's socket: its key works at once", async () => {
    const { stdout } = await run(
      process.execPath,
      // High operator limits: the next tests write in bursts that the default Starter plan would refuse.
      [
        "dist/admin.js",
        "create-key",
        "--org",
        "ops",
        "--scopes",
        "accounts:write,events:read",
        "--limits",
        "100000,100000",
        "--json",
      ],
      { cwd: root, env: { ...inherited, DATA_DIR: dataDir } },
    );
    opsKey = JSON.parse(stdout.trim()).key;
    const res = await client(`${server?.base}/api/v1`, opsKey)("POST", "/accounts", {
      name: "Made with the admin key",
    });
    expect(res.status).toBe(201);
  }, 60_000);

  it("answers concurrent writers and a feed follower without a 5xx: one session, so requests never share a statement", async () => {
    const api = client(`${server?.base}/api/v1`, opsKey);
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) ids.push((await api("POST", "/accounts", { name: `Concurrent ${i}` })).body.data.id);
    const statuses: number[] = [];
    await Promise.all(
      Array.from({ length: 8 }, async (_, worker) => {
        for (let n = 0; n < 15; n++) {
          const patch = await api("PATCH", `/accounts/${ids[(worker + n) % ids.length]}`, { employeeCount: n });
          const feed = await api("GET", "/events?limit=100");
          statuses.push(patch.status, feed.status);
        }
      }),
    );
    expect(statuses).toHaveLength(240);
    expect(statuses.filter((status) => status !== 200)).toEqual([]);
  }, 120_000);

  it("after kill -9 the directory opens again with every acknowledged write and the same demo key and login; a doubled SIGINT then stops cleanly", async () => {
    const api = client(`${server?.base}/api/v1`, opsKey);
    const names = Array.from({ length: 20 }, (_, i) => `Acknowledged ${i}`);
    for (const name of names)
      expect((await api("POST", "/accounts", { name, industry: "Durability" })).status).toBe(201);

    const login = /Demo login: .+/.exec(server?.output() ?? "")?.[0];
    expect(login).toMatch(/^Demo login: demo@example\.com \/ \S{10,}/);
    process.kill(owner().pid, "SIGKILL");
    await server?.exited;
    server = await start(await freePort());
    // The saved key still works and the saved password still signs in, so a restart prints both unchanged.
    expect(server.output()).toMatch(new RegExp(`Demo key:\\s+${demoKey}\\s`));
    expect(server.output()).toContain(login);
    expect((await client(`${server.base}/api/v1`, demoKey)("GET", "/accounts?limit=1")).status).toBe(200);

    const restarted = client(`${server.base}/api/v1`, opsKey);
    const found = await restarted("GET", "/accounts?industry=Durability&limit=100");
    expect(found.body.data.map((account: { name: string }) => account.name).sort()).toEqual([...names].sort());

    // Ctrl-C on a Node the project re-runs on Node 24 reaches the server twice at once: from the terminal to the
    // process group, and forwarded by the wrapper. Still one clean stop.
    stopGroup(server, "SIGINT");
    stopGroup(server, "SIGINT");
    await server.exited;
    expect(server.output()).toContain("Stopped.");
    expect(server.output()).not.toContain("without a clean shutdown");
    expect(existsSync(lockFile)).toBe(false);
  }, 150_000);

  it("a copy of the data directory taken while the server is stopped starts with the same data, key and login", async () => {
    expect(existsSync(lockFile), "the server above has stopped").toBe(false);
    const copy = mkdtempSync(path.join(tmpdir(), "crm-start-copy-"));
    try {
      cpSync(dataDir, copy, { recursive: true });
      const restored = await start(await freePort(), copy);
      try {
        expect(restored.output()).toMatch(new RegExp(`Demo key:\\s+${demoKey}\\s`));
        const found = await client(`${restored.base}/api/v1`, opsKey)("GET", "/accounts?industry=Durability&limit=100");
        expect(found.status).toBe(200);
        expect(found.body.data).toHaveLength(20);
      } finally {
        stopGroup(restored, "SIGINT");
        await restored.exited;
      }
      expect(restored.output()).toContain("Stopped.");
    } finally {
      rmSync(copy, { recursive: true, force: true });
    }
  }, 120_000);
});
