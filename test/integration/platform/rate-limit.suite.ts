// The rate-limit behaviour over real HTTP (docs/api-contract.md §8), shared by the three drivers' test files: the same
// cases must pass on TCP Redis, on @vercel/kv (through the Upstash-REST shim) and in memory.
import { randomBytes } from "node:crypto";
import { request } from "node:http";
import { afterAll, beforeAll, expect, it } from "vitest";
import { resetEnvCache } from "../../../server/env";
import { closeKv, type KvDriver, kv } from "../../../server/kv";
import { FULL_ACCESS_SCOPES } from "../../../server/platform/api-keys/scopes";
import { enforceRateLimit } from "../../../server/platform/limits/rate-limits";
import { client, createKey, createTestOrg, startApi, type TestServer } from "../../helpers/api";

const ANONYMOUS_LIMIT = 5;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const nowSeconds = () => Date.now() / 1000;

/** A client address of its own, so concurrent test runs on the shared Redis never share an anonymous window. */
const uniqueIp = () => `2001:db8::${randomBytes(2).toString("hex")}:${randomBytes(2).toString("hex")}`;

/**
 * Registers the rate-limit cases for the driver the environment selects. `before` runs first (e.g. starts the shim
 * and sets `KV_REST_API_*`); the anonymous limit is set to 5/min here.
 */
export function rateLimitSuite(
  driver: KvDriver,
  hooks: { before?: () => Promise<void>; after?: () => Promise<void> } = {},
) {
  let server: TestServer;

  beforeAll(async () => {
    await hooks.before?.();
    process.env.RATE_LIMIT_ANONYMOUS_PER_MIN = String(ANONYMOUS_LIMIT);
    // The test client stands in for a proxy in front of the server: one hop, whose X-Forwarded-For is believed.
    process.env.TRUST_PROXY = "1";
    // Event-loop lag on a loaded test machine must not tip a burst into the per-process fallback; the bound itself is
    // tested in kv-stores and rate-limit-store-down.
    process.env.KV_TIMEOUT_MS = "2000";
    resetEnvCache();
    await closeKv();
    server = await startApi();
  });

  afterAll(async () => {
    await server?.close();
    await closeKv();
    await hooks.after?.();
  });

  it(`uses the ${driver} driver and GET /status reports the cache up with that driver`, async () => {
    expect(kv().driver).toBe(driver);
    const res = await client(server.url)("GET", "/status", undefined, { "X-Forwarded-For": uniqueIp() });
    expect(res.status).toBe(200);
    expect(res.body.data.cache).toMatchObject({ status: "up", driver });
  });

  it("a 30/min key admits exactly 30 of 40 concurrent requests; each 2xx sees a different Remaining", async () => {
    const { key } = await createTestOrg(FULL_ACCESS_SCOPES, { limits: { perKey: 30, perOrg: 60 } });
    const api = client(server.url, key);
    const responses = await Promise.all(Array.from({ length: 40 }, () => api("GET", "/accounts")));
    const ok = responses.filter((res) => res.status === 200);
    const limited = responses.filter((res) => res.status === 429);
    expect(ok).toHaveLength(30);
    expect(limited).toHaveLength(10);
    // One atomic step per request: the 30 admitted requests saw Remaining 29…0, each exactly once.
    expect(ok.map((res) => Number(res.headers.get("x-ratelimit-remaining"))).sort((a, b) => a - b)).toEqual(
      Array.from({ length: 30 }, (_, i) => i),
    );
    for (const res of ok) {
      expect(res.headers.get("x-ratelimit-limit")).toBe("30");
      expect(res.headers.get("retry-after")).toBeNull();
    }
    for (const res of limited) {
      expect(res.body).toMatchObject({ success: false, error: { code: "rate_limited" } });
      expect(res.headers.get("x-ratelimit-limit")).toBe("30");
      expect(res.headers.get("x-ratelimit-remaining")).toBe("0");
      const retryAfter = Number(res.headers.get("retry-after"));
      expect(retryAfter).toBeGreaterThanOrEqual(1);
      expect(retryAfter).toBeLessThanOrEqual(60);
    }
  });

  it("two keys of one organisation share its 60/min window: exactly 60 of 80 concurrent requests pass", async () => {
    const org = await createTestOrg(FULL_ACCESS_SCOPES, { limits: { perKey: 40, perOrg: 60 } });
    const second = await createKey(org.orgId, FULL_ACCESS_SCOPES);
    const apis = [client(server.url, org.key), client(server.url, second)];
    const responses = await Promise.all(
      Array.from({ length: 80 }, (_, i) => (apis[i % 2] as (typeof apis)[0])("GET", "/accounts")),
    );
    const passed = (of: number) => responses.filter((res, i) => i % 2 === of && res.status === 200).length;
    expect(responses.filter((res) => res.status === 200)).toHaveLength(60);
    expect(responses.filter((res) => res.status === 429)).toHaveLength(20);
    expect(passed(0)).toBeLessThanOrEqual(40);
    expect(passed(1)).toBeLessThanOrEqual(40);
    // A key below its own 40 is now refused by the organisation window, which the headers then report.
    const below = passed(0) < 40 ? apis[0] : apis[1];
    const refused = await (below as (typeof apis)[0])("GET", "/accounts");
    expect(refused.status).toBe(429);
    expect(refused.headers.get("x-ratelimit-limit")).toBe("60");
    expect(refused.headers.get("x-ratelimit-remaining")).toBe("0");
  });

  it("a key's own window refuses it while the organisation's other keys still pass", async () => {
    const org = await createTestOrg(FULL_ACCESS_SCOPES, { limits: { perKey: 5, perOrg: 100 } });
    const a = client(server.url, org.key);
    const b = client(server.url, await createKey(org.orgId, FULL_ACCESS_SCOPES));
    for (let i = 0; i < 5; i++) expect((await a("GET", "/accounts")).status).toBe(200);
    const refused = await a("GET", "/accounts");
    expect(refused.status).toBe(429);
    expect(refused.headers.get("x-ratelimit-limit")).toBe("5");
    const other = await b("GET", "/accounts");
    expect(other.status).toBe(200);
    expect(other.headers.get("x-ratelimit-limit")).toBe("5");
    expect(other.headers.get("x-ratelimit-remaining")).toBe("4");
  });

  it("every response carries Limit, Remaining, Reset and Policy; Retry-After only on 429; refusals are not counted", async () => {
    const { key } = await createTestOrg(FULL_ACCESS_SCOPES, { limits: { perKey: 3, perOrg: 100 } });
    const api = client(server.url, key);
    const first = await api("GET", "/accounts");
    const firstAt = nowSeconds();
    const missing = await api("GET", "/accounts/doesnotexist123");
    const invalid = await api("POST", "/accounts", {});
    const limited = await api("GET", "/accounts");
    const again = await api("GET", "/accounts");
    expect([first, missing, invalid, limited, again].map((res) => res.status)).toEqual([200, 404, 422, 429, 429]);
    expect([first, missing, invalid, limited, again].map((res) => res.headers.get("x-ratelimit-remaining"))).toEqual([
      "2",
      "1",
      "0",
      "0",
      "0",
    ]);
    for (const res of [first, missing, invalid, limited, again]) {
      expect(res.headers.get("x-ratelimit-limit")).toBe("3");
      expect(res.headers.get("x-ratelimit-policy")).toBe("sliding-window");
    }
    for (const res of [first, missing, invalid]) expect(res.headers.get("retry-after")).toBeNull();
    // Reset: when the oldest counted request (the first) ages out, 60 s after it, in Unix seconds.
    const reset = Number(first.headers.get("x-ratelimit-reset"));
    expect(Number.isInteger(reset)).toBe(true);
    expect(reset).toBeGreaterThanOrEqual(Math.floor(firstAt + 59));
    expect(reset).toBeLessThanOrEqual(Math.ceil(firstAt + 61));
    for (const res of [missing, invalid, limited, again])
      expect(res.headers.get("x-ratelimit-reset")).toBe(String(reset));
    // Retry-After points at the same moment; the refused requests did not push it later.
    for (const res of [limited, again]) {
      const retryAfter = Number(res.headers.get("retry-after"));
      expect(Math.abs(nowSeconds() + retryAfter - reset)).toBeLessThanOrEqual(2);
      expect(res.body.error.message).toBe(`Rate limit exceeded; retry in ${retryAfter} seconds`);
    }
  });

  it("requests without a valid key count per client IP at RATE_LIMIT_ANONYMOUS_PER_MIN", async () => {
    const ip = uniqueIp();
    const anonymous = client(server.url);
    const responses = [];
    for (let i = 0; i < ANONYMOUS_LIMIT + 1; i++) {
      responses.push(await anonymous("GET", "/accounts", undefined, { "X-Forwarded-For": ip }));
    }
    expect(responses.map((res) => res.status)).toEqual([401, 401, 401, 401, 401, 429]);
    expect(responses.map((res) => res.headers.get("x-ratelimit-remaining"))).toEqual(["4", "3", "2", "1", "0", "0"]);
    expect(responses.every((res) => res.headers.get("x-ratelimit-limit") === String(ANONYMOUS_LIMIT))).toBe(true);
    expect(responses.at(-1)?.headers.get("retry-after")).toMatch(/^[1-9]\d*$/);
    // Unknown paths and documents count in the same window; another address has its own.
    expect((await anonymous("GET", "/nope", undefined, { "X-Forwarded-For": ip })).status).toBe(429);
    const other = await anonymous("GET", "/nope", undefined, { "X-Forwarded-For": uniqueIp() });
    expect(other.status).toBe(404);
    expect(other.headers.get("x-ratelimit-remaining")).toBe("4");
  });

  it("without a trusted proxy (the default), X-Forwarded-For cannot move a client out of its address's window", async () => {
    process.env.TRUST_PROXY = "false";
    resetEnvCache();
    // A loopback source address of its own (any 127.x.y.z reaches the server), so no other test shares its window.
    const localAddress = `127.${randomBytes(3).join(".")}`;
    const url = new URL(`${server.url}/accounts`);
    const get = (forwardedFor: string) =>
      new Promise<number>((resolve, reject) => {
        const req = request(
          {
            host: url.hostname,
            port: url.port,
            path: url.pathname,
            localAddress,
            headers: { "X-Forwarded-For": forwardedFor },
          },
          (res) => {
            res.resume();
            resolve(res.statusCode ?? 0);
          },
        );
        req.on("error", reject);
        req.end();
      });
    try {
      const statuses = [];
      // Each request claims another address; all come from one socket address, which is what counts.
      for (let i = 0; i < ANONYMOUS_LIMIT + 1; i++) statuses.push(await get(uniqueIp()));
      expect(statuses).toEqual([401, 401, 401, 401, 401, 429]);
    } finally {
      process.env.TRUST_PROXY = "1";
      resetEnvCache();
    }
  });

  it("the window slides on this driver: a request frees its slot one window after it was counted", async () => {
    const subject = {
      kind: "key" as const,
      apiKeyId: `key_${randomBytes(6).toString("hex")}`,
      orgId: `org_${randomBytes(6).toString("hex")}`,
      perKey: 2,
      perOrg: 10,
    };
    const window = 1_500;
    const first = await enforceRateLimit(subject, window);
    const firstAt = Date.now();
    expect(first).toMatchObject({ allowed: true, headers: { "X-RateLimit-Limit": "2", "X-RateLimit-Remaining": "1" } });
    await sleep(600);
    expect((await enforceRateLimit(subject, window)).headers["X-RateLimit-Remaining"]).toBe("0");
    const refused = await enforceRateLimit(subject, window);
    expect(refused).toMatchObject({ allowed: false, retryAfterSeconds: 1 });
    expect(Number(refused.headers["X-RateLimit-Reset"])).toBe(Number(first.headers["X-RateLimit-Reset"]));
    await sleep(firstAt + window - Date.now() + 100);
    // The first request aged out; the second (600 ms later) still counts: one slot, not a fresh window.
    expect(await enforceRateLimit(subject, window)).toMatchObject({
      allowed: true,
      headers: { "X-RateLimit-Remaining": "0" },
    });
    expect((await enforceRateLimit(subject, window)).allowed).toBe(false);
  });
}
