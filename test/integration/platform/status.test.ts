import { afterAll, beforeAll, expect, it } from "vitest";
import { startApi, type TestServer } from "../../helpers/api";

let server: TestServer;
beforeAll(async () => {
  server = await startApi();
});
afterAll(() => server.close());

it("GET /status answers 200 without a key when PostgreSQL and Redis are up", async () => {
  const res = await fetch(`${server.url}/status`);
  expect(res.status).toBe(200);
  const body = await res.json();
  expect(body).toMatchObject({
    success: true,
    data: {
      status: "ok",
      version: "v1",
      database: { status: "up", driver: "postgres" },
      cache: { status: "up", driver: "redis" },
    },
  });
  expect(body.data.database.latencyMs).toBeGreaterThanOrEqual(0);
  expect(res.headers.get("x-request-id")).toBe(body.requestId);
});
