// Issue #4 item 4: audit rows are batched off the response path but never lost on a normal shutdown. Serves the
// production build with `npm start`'s server (scripts/serve.ts) on the test database, sends SIGTERM right after the
// last response, and expects every call's row. Needs a production build (`npm test` makes one first).
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { prisma } from "../../server/db/transaction";
import { client, createTestOrg } from "../helpers/api";
import { freePort } from "../helpers/ports";

const root = path.resolve(import.meta.dirname, "../..");
let child: ChildProcess;
let base = "";
let output = "";

beforeAll(async () => {
  expect(existsSync(path.join(root, ".next", "BUILD_ID")), "run `npm run build` first").toBe(true);
  const port = await freePort();
  child = spawn(
    process.execPath,
    [path.join(root, "node_modules", "tsx", "dist", "cli.mjs"), path.join(root, "scripts", "serve.ts")],
    { cwd: root, env: { ...process.env, PORT: String(port), NODE_ENV: "production", NEXT_TELEMETRY_DISABLED: "1" } },
  );
  child.stdout?.on("data", (chunk) => {
    output += chunk;
  });
  child.stderr?.on("data", (chunk) => {
    output += chunk;
  });
  base = `http://127.0.0.1:${port}/api/v1`;
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (
      await fetch(`${base}/status`).then(
        (res) => res.ok,
        () => false,
      )
    )
      return;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error(`the server did not become ready:\n${output.slice(-2_000)}`);
}, 90_000);

afterAll(() => {
  if (child.exitCode === null) child.kill("SIGKILL");
});

it("writes the audit rows of every call answered before SIGTERM", async () => {
  const org = await createTestOrg();
  const api = client(base, org.key);
  const responses = await Promise.all(
    Array.from({ length: 30 }, (_, i) =>
      i % 3 === 0 ? api("POST", "/accounts", { name: `Shutdown ${i}` }) : api("GET", "/accounts?limit=1"),
    ),
  );
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  child.kill("SIGTERM");
  const code = await exited;
  expect(code === 0 || code === 143, `exit code ${code}:\n${output.slice(-1_000)}`).toBe(true);
  for (const res of responses) expect([200, 201]).toContain(res.status);
  const stored = await prisma().auditLog.count({
    where: { requestId: { in: responses.map((res) => res.body.requestId) }, orgId: org.orgId },
  });
  expect(stored).toBe(30);
}, 60_000);
