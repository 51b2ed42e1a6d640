// The sync guide's complete example (app/docs/sync/example.ts), saved to a file and run as written
// with tsx against a live server, ends with a copy that has exactly the organisation's records, deletions included.
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, expect, it } from "vitest";
import { SYNC_EXAMPLE } from "../../../app/docs/sync/example";
import { client, createTestOrg, startApi, type TestServer } from "../../helpers/api";

const run = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, "../../..");
let server: TestServer;
let dir: string;
beforeAll(async () => {
  server = await startApi();
  dir = mkdtempSync(path.join(os.tmpdir(), "sync-guide-"));
});
afterAll(async () => {
  await server.close();
  rmSync(dir, { recursive: true, force: true });
});

it("runs as written and ends in sync, deletions included", { timeout: 60_000 }, async () => {
  const org = await createTestOrg(["admin:read", "accounts:write", "tasks:write", "devices:write"]);
  const api = client(server.url, org.key);
  const kept = (await api("POST", "/accounts", { name: "Kept" })).body.data;
  const gone = (await api("POST", "/accounts", { name: "Gone" })).body.data;
  await api("POST", "/devices", { rmmAgentId: "a-1", hostname: "pc-1", accountId: gone.id });
  const task = (await api("POST", "/tasks", { title: "Call", accountId: kept.id })).body.data;
  await api("POST", "/tasks", { title: "Stays" });
  await api("DELETE", `/tasks/${task.id}`);
  await api("DELETE", `/accounts/${gone.id}?force=true`);
  await api("PATCH", `/accounts/${kept.id}`, { industry: "Legal" });

  const file = path.join(dir, "sync.ts");
  writeFileSync(file, SYNC_EXAMPLE);
  const { stdout } = await run(process.execPath, ["--import", "tsx", file], {
    cwd: ROOT,
    env: { ...process.env, CRM_URL: server.url, CRM_KEY: org.key, ONCE: "1" },
  });
  expect(stdout.trim()).toBe("in sync: account=1 contact=0 deal=0 device=0 task=1 note=0 touchpoint=0");
});
