// The shared store goes away and comes back (docs/architecture.md, "Key-value store and rate limits"), on a dedicated redis-server this
// file starts, kills and restarts itself — never the shared one. TCP Redis first, then @vercel/kv through the shim.

import { Redis } from "ioredis";
import { afterAll, beforeAll, expect, it } from "vitest";
import { env, resetEnvCache } from "../../../server/env";
import { closeKv, kv } from "../../../server/kv";
import { FULL_ACCESS_SCOPES } from "../../../server/platform/api-keys/scopes";
import { client, createTestOrg, startApi, type TestServer } from "../../helpers/api";
import { captureLog, type LogCapture } from "../../helpers/log-capture";
import { type DedicatedRedis, startDedicatedRedis } from "../../helpers/redis-server";
import { startUpstashShim, type UpstashShim } from "../../helpers/upstash-shim";

let dedicated: DedicatedRedis;
let admin: Redis;
let server: TestServer;

beforeAll(async () => {
  dedicated = await startDedicatedRedis();
  admin = new Redis(dedicated.url, { retryStrategy: () => 100 });
  admin.on("error", () => undefined);
  process.env.REDIS_URL = dedicated.url;
  delete process.env.KV_TIMEOUT_MS;
  resetEnvCache();
  await closeKv();
  server = await startApi();
});

afterAll(async () => {
  await server.close();
  await closeKv();
  admin.disconnect();
  await dedicated.stop();
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function until<T>(probe: () => Promise<T>, ok: (value: T) => boolean, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (ok(value) || Date.now() > deadline) return value;
    await sleep(100);
  }
}

const logged = (capture: LogCapture, topic: string) => capture.lines().filter((line) => line.topic === topic).length;

/** Six requests on a 5/min key while the store is down: answered at once, with headers, still limited. */
async function expectLimitedInProcess(api: ReturnType<typeof client>) {
  const responses = [];
  for (let i = 0; i < 6; i++) {
    const started = performance.now();
    const res = await api("GET", "/accounts");
    expect(performance.now() - started).toBeLessThan(1_500);
    responses.push(res);
  }
  expect(responses.map((res) => res.status)).toEqual([200, 200, 200, 200, 200, 429]);
  expect(responses.map((res) => res.headers.get("x-ratelimit-remaining"))).toEqual(["4", "3", "2", "1", "0", "0"]);
  for (const res of responses) {
    expect(res.headers.get("x-ratelimit-limit")).toBe("5");
    expect(res.headers.get("x-ratelimit-policy")).toBe("sliding-window");
    expect(res.headers.get("x-ratelimit-reset")).toMatch(/^\d+$/);
  }
  expect(Number(responses[5]?.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
}

async function expectStatusDown(driver: string) {
  const started = Date.now();
  const res = await client(server.url)("GET", "/status");
  expect(Date.now() - started).toBeLessThan(3_000);
  expect(res.status).toBe(503);
  expect(res.body.error.details).toEqual([{ path: ["cache"], message: `down: ${driver}: connection failed` }]);
  expect(JSON.stringify(res.body)).not.toContain(String(dedicated.port));
}

it("TCP Redis down: requests still answered promptly with headers, limits counted per process, /status 503, then back to Redis by itself", async () => {
  const errors = captureLog();
  const org = await createTestOrg(FULL_ACCESS_SCOPES, { limits: { perKey: 5, perOrg: 100 } });
  const api = client(server.url, org.key);
  const keyWindow = `${env().KV_PREFIX}rl:{o:${org.orgId}}:k:${org.apiKeyId}`;

  const before = await api("GET", "/accounts");
  expect(before.status).toBe(200);
  expect(before.headers.get("x-ratelimit-remaining")).toBe("4");
  expect(await admin.zcard(keyWindow)).toBe(1);

  await dedicated.stop();
  await expectLimitedInProcess(api);
  await expectStatusDown("redis");
  // One warning for the whole outage, however many requests fell back.
  expect(logged(errors, "rate-limit.store-down")).toBe(1);

  await dedicated.start();
  const status = await until(
    () => client(server.url)("GET", "/status"),
    (res) => res.status === 200,
  );
  expect(status.body.data.cache).toMatchObject({ status: "up", driver: "redis" });
  // In memory this key is exhausted; the restarted (empty) Redis admits it again: the limiter is back on Redis.
  const after = await until(
    () => api("GET", "/accounts"),
    (res) => res.status === 200,
  );
  expect(after.headers.get("x-ratelimit-remaining")).toBe("4");
  expect(await admin.zcard(keyWindow)).toBe(1);
  expect(logged(errors, "rate-limit.store-up")).toBe(1);
  errors.restore();
});

it("Vercel KV down: the same behaviour, /status names the vercel-kv driver", async () => {
  let shim: UpstashShim = await startUpstashShim(dedicated.url);
  const port = Number(new URL(shim.url).port);
  process.env.KV_REST_API_URL = shim.url;
  process.env.KV_REST_API_TOKEN = shim.token;
  resetEnvCache();
  await closeKv();
  try {
    expect(kv().driver).toBe("vercel-kv");
    const org = await createTestOrg(FULL_ACCESS_SCOPES, { limits: { perKey: 5, perOrg: 100 } });
    const api = client(server.url, org.key);
    const before = shim.requests.length;
    expect((await api("GET", "/accounts")).headers.get("x-ratelimit-remaining")).toBe("4");
    // The request's first script is the rate limit's, by its hash (the key cache's poll and the organisation's budget
    // read may come and go around it).
    const scripts = shim.requests.slice(before).filter((request) => request.commands.some((c) => c.startsWith("eval")));
    expect(scripts[0]?.commands).toEqual(["evalsha"]);

    await shim.close();
    await expectLimitedInProcess(api);
    await expectStatusDown("vercel-kv");

    shim = await startUpstashShim(dedicated.url, { port });
    await admin.flushall();
    const after = await until(
      () => api("GET", "/accounts"),
      (res) => res.status === 200,
    );
    expect(after.headers.get("x-ratelimit-remaining")).toBe("4");
    expect(shim.requests.some((request) => request.commands.includes("evalsha"))).toBe(true);
    const status = await client(server.url)("GET", "/status");
    expect(status.body.data.cache).toMatchObject({ status: "up", driver: "vercel-kv" });
  } finally {
    await shim.close();
    delete process.env.KV_REST_API_URL;
    delete process.env.KV_REST_API_TOKEN;
    resetEnvCache();
    await closeKv();
  }
});
