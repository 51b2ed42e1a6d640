// Runs in its own process (vitest forks + isolate): the database and cache URLs point at closed ports.
import { afterAll, beforeAll, expect, it } from "vitest";
import { forgedKey, startApi, type TestServer } from "../../helpers/api";

process.env.DATABASE_URL = "postgresql://postgres@127.0.0.1:1/none";
process.env.REDIS_URL = "redis://127.0.0.1:1";

let server: TestServer;
beforeAll(async () => {
  server = await startApi();
});
afterAll(() => server.close());

it("GET /status answers 503 in the error envelope, naming each component that is down, within the probe bound", async () => {
  const started = Date.now();
  const res = await fetch(`${server.url}/status`);
  expect(Date.now() - started).toBeLessThan(5_000);
  expect(res.status).toBe(503);
  const body = await res.json();
  expect(body.success).toBe(false);
  expect(body.error.code).toBe("internal_error");
  expect(body.error.details.map((d: { path: string[] }) => d.path[0]).sort()).toEqual(["cache", "database"]);
  expect(JSON.stringify(body.error)).not.toMatch(/127\.0\.0\.1:1\b|ECONNREFUSED|prisma/i);
});

it("an authenticated endpoint answers a clean 500 envelope when the database is unreachable", async () => {
  const started = Date.now();
  // A process that has never reached the database cannot check a key's checksum (its secret is stored there).
  const res = await fetch(`${server.url}/accounts`, { headers: { Authorization: `Bearer ${forgedKey()}` } });
  expect(Date.now() - started).toBeLessThan(10_000);
  expect(res.status).toBe(500);
  const body = await res.json();
  expect(body).toMatchObject({ success: false, error: { code: "internal_error" } });
  expect(body.error.message).toBe("Internal error; retry with exponential backoff");
  expect(body.error.details).toBeUndefined();
});

it("GET /readyz's answer is 503 naming the database and the cache, without hosts or driver messages", async () => {
  const { readinessReply } = await import("../../../server/http/probes");
  const reply = await readinessReply();
  expect(reply.status).toBe(503);
  const body = JSON.parse(reply.body ?? "{}");
  expect(body.status).toBe("not_ready");
  expect(body.reason).toContain("postgres: connection failed");
  expect(body.reason).toContain("redis: connection failed");
  expect(body.checks.database.status).toBe("down");
  expect(body.checks.cache.status).toBe("down");
  expect(JSON.stringify(body)).not.toMatch(/127\.0\.0\.1:1\b|ECONNREFUSED|prisma/i);
});
