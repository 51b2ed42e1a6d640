// PostgreSQL stopped and restarted under a running API. Uses a dedicated server (never the shared
// one): while it is down every endpoint answers a clean envelope promptly, and the API recovers by itself.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { closeDb } from "../../server/db/client";
import { migrateDatabase } from "../../server/db/migrate";
import { prisma } from "../../server/db/transaction";
import { resetEnvCache } from "../../server/env";
import { flushAudit } from "../../server/services/audit";
import { client, createTestOrg, startApi, type TestServer } from "../helpers/api";
import { type DedicatedPostgres, startDedicatedPostgres } from "../helpers/dedicated-postgres";

/** No request may take longer than this while the database is down (ms). */
const BOUND_MS = 6_000;

let postgres: DedicatedPostgres;
let server: TestServer;
let api: ReturnType<typeof client>;
let orgId: string;
let accountId: string;

beforeAll(async () => {
  postgres = await startDedicatedPostgres();
  await migrateDatabase({ url: postgres.url }, { log: () => undefined });
  process.env.DATABASE_URL = postgres.url;
  resetEnvCache();
  await closeDb();
  server = await startApi();
  const org = await createTestOrg();
  orgId = org.orgId;
  api = client(server.url, org.key);
  accountId = (await api("POST", "/accounts", { name: "Before the outage" })).body.data.id;
}, 120_000);

afterAll(async () => {
  await server?.close();
  await closeDb();
  postgres?.destroy();
});

async function timed<T>(call: () => Promise<T>): Promise<{ result: T; ms: number }> {
  const started = performance.now();
  const result = await call();
  return { result, ms: performance.now() - started };
}

describe("PostgreSQL stopped and restarted", () => {
  const outageRequestIds: string[] = [];

  it("answers every endpoint with a clean 500 (and /status 503) within the bound while it is down", async () => {
    postgres.stop();
    const calls = await Promise.all([
      timed(() => api("GET", "/accounts")),
      timed(() => api("GET", `/accounts/${accountId}`)),
      timed(() => api("POST", "/accounts", { name: "During the outage" })),
      timed(() => api("PATCH", `/accounts/${accountId}`, { name: "Renamed" })),
      timed(() => api("POST", "/accounts", { name: "Idempotent" }, { "Idempotency-Key": "outage-1" })),
      timed(() => api("POST", "/devices/bulk", { devices: [{ rmmAgentId: "a-1", hostname: "pc-1", accountId }] })),
      timed(() => api("GET", "/contacts?limit=5")),
    ]);
    for (const { result, ms } of calls) {
      expect(ms).toBeLessThan(BOUND_MS);
      expect(result.status).toBe(500);
      expect(result.body).toMatchObject({
        success: false,
        error: { code: "internal_error", message: "Internal error; retry with exponential backoff" },
      });
      const body = JSON.stringify(result.body);
      expect(body).not.toMatch(/ECONNREFUSED|prisma|reach database|stack/i);
      expect(body).not.toContain(new URL(postgres.url).port);
      outageRequestIds.push(result.body.requestId);
    }
    const status = await timed(() => api("GET", "/status"));
    expect(status.ms).toBeLessThan(BOUND_MS);
    expect(status.result.status).toBe(503);
    expect(JSON.stringify(status.result.body)).toContain("database");
  });

  it("recovers by itself once the server is back, and keeps the outage's audit rows", async () => {
    const restartedAt = Date.now();
    postgres.start();
    const deadline = Date.now() + 30_000;
    let res = await api("GET", `/accounts/${accountId}`);
    while (res.status !== 200 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 250));
      res = await api("GET", `/accounts/${accountId}`);
    }
    expect(res.status).toBe(200);
    expect(res.body.data.name).toBe("Before the outage");
    expect((await api("GET", "/status")).status).toBe(200);
    const created = await api("POST", "/accounts", { name: "After the outage" });
    expect(created.status).toBe(201);
    // Nothing was half-written during the outage.
    expect(await prisma().account.count({ where: { orgId, name: { in: ["During the outage", "Idempotent"] } } })).toBe(
      0,
    );

    // Audit rows of the refused calls were kept in memory and written once the database answered again.
    const auditDeadline = Date.now() + 10_000;
    let stored = 0;
    while (Date.now() < auditDeadline) {
      await flushAudit();
      stored = await prisma().auditLog.count({ where: { requestId: { in: outageRequestIds } } });
      if (stored === outageRequestIds.length) break;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    expect(stored).toBe(outageRequestIds.length);
    const rows = await prisma().auditLog.findMany({ where: { requestId: { in: outageRequestIds } } });
    for (const row of rows) {
      expect(row).toMatchObject({ status: 500, errorCode: "internal_error" });
      // Stamped when the call was answered, not when the retried batch finally got in.
      expect(row.createdAt.getTime()).toBeLessThan(restartedAt);
    }
  }, 60_000);
});
