// PostgreSQL stopped and restarted under a running API. Uses a dedicated server (never the shared
// one): while it is down every endpoint answers a clean envelope promptly, and the API recovers by itself.
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { closeDb } from "../../../server/db/client";
import { migrateDatabase } from "../../../server/db/migrate";
import { prisma } from "../../../server/db/transaction";
import { resetEnvCache } from "../../../server/env";
import { flushAudit } from "../../../server/platform/request-log/record";
import { client, createTestOrg, forgedKey, startApi, type TestServer, unknownKey } from "../../helpers/api";
import { type DedicatedPostgres, startDedicatedPostgres } from "../../helpers/dedicated-postgres";
import { legacyApiKey } from "../../helpers/legacy-keys";

/** No request may take longer than this while the database is down (ms). */
const BOUND_MS = 6_000;
/** Requests a minute a client address may send without a valid key, while the refused-client case runs. */
const ANONYMOUS_LIMIT = 10;

let postgres: DedicatedPostgres;
let server: TestServer;
let api: ReturnType<typeof client>;
let orgId: string;
let accountId: string;

beforeAll(async () => {
  postgres = await startDedicatedPostgres();
  await migrateDatabase({ url: postgres.url }, { log: () => undefined });
  process.env.DATABASE_URL = postgres.url;
  // The test client stands for a proxy (one hop), so a case can pick its client address.
  process.env.TRUST_PROXY = "1";
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

  it("refuses a key that fails its checksum without the database (401, 429 once the window is full); a key that may be valid is looked up (500)", async () => {
    const address = () => `2001:db8::${randomBytes(2).toString("hex")}`;
    const from = (ip: string, key?: string) =>
      client(server.url, key)("GET", "/accounts", undefined, { "X-Forwarded-For": ip });
    // A small window for this case only: the test run's other files share the key-value store and 127.0.0.1's windows.
    const limit = process.env.RATE_LIMIT_ANONYMOUS_PER_MIN;
    process.env.RATE_LIMIT_ANONYMOUS_PER_MIN = String(ANONYMOUS_LIMIT);
    resetEnvCache();
    try {
      const refused = address();
      // Keys that fail the checksum, and a first-format key with a valid CRC32 that no one was ever given: a lookup
      // would be a 500 while the database is down.
      for (let i = 0; i < ANONYMOUS_LIMIT; i++) {
        const res = await from(refused, i === 0 ? legacyApiKey() : forgedKey());
        expect(res.status).toBe(401);
        outageRequestIds.push(res.body.requestId);
      }
      for (let i = 0; i < 3; i++) {
        const res = await from(refused, forgedKey());
        expect(res.status).toBe(429);
        expect(res.body.error.code).toBe("rate_limited");
        outageRequestIds.push(res.body.requestId);
      }
      // A key with a valid checksum is looked up, and the database is down.
      const looked = await from(address(), await unknownKey());
      expect(looked.status).toBe(500);
      outageRequestIds.push(looked.body.requestId);
    } finally {
      if (limit === undefined) delete process.env.RATE_LIMIT_ANONYMOUS_PER_MIN;
      else process.env.RATE_LIMIT_ANONYMOUS_PER_MIN = limit;
      resetEnvCache();
    }
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
      expect([
        { status: 500, errorCode: "internal_error" },
        { status: 401, errorCode: "unauthorized" },
        { status: 429, errorCode: "rate_limited" },
      ]).toContainEqual({ status: row.status, errorCode: row.errorCode });
      // Stamped when the call was answered (at the latest in the millisecond the restart began), not when the retried
      // batch finally got in.
      expect(row.createdAt.getTime()).toBeLessThanOrEqual(restartedAt);
    }
  }, 60_000);
});
