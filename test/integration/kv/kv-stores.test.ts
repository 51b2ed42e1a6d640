// The sliding-window script on the two Redis drivers against the real Redis: TCP (ioredis) and @vercel/kv through the
// Upstash-REST shim. Same cases for both; a dedicated redis-server covers SCRIPT FLUSH (NOSCRIPT fallback).
import { randomBytes } from "node:crypto";
import { createServer as createHttpServer, type Server } from "node:http";
import { createServer as createTcpServer, type Socket, type Server as TcpServer } from "node:net";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { env } from "../../../server/env";
import { createKv, type KeyValueStore } from "../../../server/kv";
import { type DedicatedRedis, startDedicatedRedis } from "../../helpers/redis-server";
import { startUpstashShim, type UpstashShim } from "../../helpers/upstash-shim";

const REDIS_URL = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
const TIMEOUT_MS = 250;
/** Every key the stores write starts with KV_PREFIX: the raw client reads them under it. */
const raw = (key: string | undefined) => `${env().KV_PREFIX}${key}`;

function config(overrides: Partial<ReturnType<typeof env>>) {
  return { ...env(), REDIS_URL: undefined, KV_REST_API_URL: undefined, KV_TIMEOUT_MS: TIMEOUT_MS, ...overrides };
}

const unique = (label: string) => `test:{kv-${randomBytes(6).toString("hex")}}:${label}`;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

let redis: Redis;
let shim: UpstashShim;
const stores: Record<string, KeyValueStore> = {};

beforeAll(async () => {
  redis = new Redis(REDIS_URL);
  shim = await startUpstashShim(REDIS_URL);
  stores.redis = createKv(config({ REDIS_URL }));
  stores["vercel-kv"] = createKv(config({ KV_REST_API_URL: shim.url, KV_REST_API_TOKEN: shim.token }));
});

afterAll(async () => {
  for (const store of Object.values(stores)) await store.close();
  await shim.close();
  redis.disconnect();
});

describe.each(["redis", "vercel-kv"])("%s driver", (driver) => {
  const store = () => stores[driver] as KeyValueStore;

  it("reports its driver and answers ping", async () => {
    expect(store().driver).toBe(driver);
    await expect(store().ping()).resolves.toBeUndefined();
  });

  it("admits exactly the limit of 40 concurrent requests and counts the refused ones nowhere", async () => {
    const windows = [
      { key: unique("key"), limit: 30 },
      { key: unique("org"), limit: 60 },
    ];
    const results = await Promise.all(Array.from({ length: 40 }, () => store().slidingWindow(windows, 60_000)));
    expect(results.filter((result) => result.allowed)).toHaveLength(30);
    const admittedCounts = results.filter((r) => r.allowed).map((r) => r.windows[0]?.count);
    expect(new Set(admittedCounts).size).toBe(30);
    expect(await redis.zcard(raw(windows[0]?.key))).toBe(30);
    expect(await redis.zcard(raw(windows[1]?.key))).toBe(30);
    const pttl = await redis.pttl(raw(windows[0]?.key));
    expect(pttl).toBeGreaterThan(55_000);
    expect(pttl).toBeLessThanOrEqual(60_000);
  });

  it("checks both windows in one step: the tighter organisation window caps a key with room", async () => {
    const org = unique("org");
    const a = [
      { key: unique("a"), limit: 10 },
      { key: org, limit: 6 },
    ];
    const b = [
      { key: unique("b"), limit: 10 },
      { key: org, limit: 6 },
    ];
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) => store().slidingWindow(i % 2 ? a : b, 60_000)),
    );
    expect(results.filter((result) => result.allowed)).toHaveLength(6);
    expect((await redis.zcard(raw(a[0]?.key))) + (await redis.zcard(raw(b[0]?.key)))).toBe(6);
    expect(await redis.zcard(raw(org))).toBe(6);
  });

  it("counts on the Redis server's clock", async () => {
    const [beforeS, beforeUs] = await redis.time();
    const result = await store().slidingWindow([{ key: unique("clock"), limit: 5 }], 60_000);
    const [afterS, afterUs] = await redis.time();
    const before = Number(beforeS) * 1000 + Math.floor(Number(beforeUs) / 1000);
    const after = Number(afterS) * 1000 + Math.floor(Number(afterUs) / 1000);
    expect(result.nowMs).toBeGreaterThanOrEqual(before);
    expect(result.nowMs).toBeLessThanOrEqual(after);
    expect(result.windows[0]).toEqual({ limit: 5, count: 1, freeAtMs: result.nowMs + 60_000 });
  });

  it("gives at most the limit of 20 concurrent lease requests; a lease given back frees its slot", async () => {
    const key = unique("lease");
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) => store().acquireLease(key, 3, 10_000, `token-${i}`)),
    );
    expect(results.filter((result) => result.acquired)).toHaveLength(3);
    expect(await redis.zcard(raw(key))).toBe(3);
    const holder = results.findIndex((result) => result.acquired);
    await store().releaseLease(key, `token-${holder}`);
    expect(await store().acquireLease(key, 3, 10_000, "late")).toEqual({ acquired: true, held: 3 });
    // A lease nobody gives back lapses on the server's clock.
    const short = unique("lapse");
    expect((await store().acquireLease(short, 1, 100, "gone")).acquired).toBe(true);
    expect((await store().acquireLease(short, 1, 100, "next")).acquired).toBe(false);
    await sleep(150);
    expect((await store().acquireLease(short, 1, 100, "next")).acquired).toBe(true);
  });

  it("draws from a budget that starts full and can be overdrawn, refilling on the server's clock", async () => {
    const key = unique("budget");
    expect((await store().drawBudget(key, 0, 1, 500)).level).toBe(500);
    const overdrawn = await store().drawBudget(key, 800, 1, 500);
    expect(overdrawn.level).toBeGreaterThanOrEqual(-300);
    expect(overdrawn.level).toBeLessThan(-250);
    await sleep(200);
    const refilled = await store().drawBudget(key, 0, 1, 500);
    expect(refilled.level).toBeGreaterThanOrEqual(overdrawn.level + 190);
    expect(refilled.level).toBeLessThanOrEqual(500);
  });

  it("slides: requests age out one window after they were counted", async () => {
    const windows = [{ key: unique("slide"), limit: 2 }];
    const first = await store().slidingWindow(windows, 1_500);
    await sleep(600);
    expect((await store().slidingWindow(windows, 1_500)).allowed).toBe(true);
    const refused = await store().slidingWindow(windows, 1_500);
    expect(refused.allowed).toBe(false);
    expect(refused.windows[0]).toMatchObject({ count: 2, freeAtMs: first.nowMs + 1_500 });
    await sleep(first.nowMs + 1_500 - refused.nowMs + 50);
    // The first request aged out, the second (600 ms later) has not: one slot, not a reset window.
    const admitted = await store().slidingWindow(windows, 1_500);
    expect(admitted.allowed).toBe(true);
    expect((await store().slidingWindow(windows, 1_500)).allowed).toBe(false);
  });
});

it("the shim answered the @vercel/kv driver with base64 encoding, EVALSHA and pipelines", () => {
  expect(shim.requests.length).toBeGreaterThan(0);
  expect(shim.requests.every((request) => request.base64 && request.status === 200)).toBe(true);
  const commands = shim.requests.flatMap((request) => request.commands);
  expect(commands).toContain("evalsha");
  expect(commands).toContain("ping");
  // The 40-request burst went out in far fewer HTTP requests: @upstash/redis pipelines concurrent commands.
  expect(shim.requests.some((request) => request.path === "/pipeline" && request.commands.length > 1)).toBe(true);
});

it("a wrong Vercel KV token makes the store fail (status reports it down) instead of answering", async () => {
  const store = createKv(config({ KV_REST_API_URL: shim.url, KV_REST_API_TOKEN: "wrong" }));
  await expect(store.ping()).rejects.toThrow(/Unauthorized/);
  await expect(store.slidingWindow([{ key: unique("auth"), limit: 1 }], 1_000)).rejects.toThrow();
  expect(shim.requests.at(-1)?.status).toBe(401);
});

describe("a store that accepts connections but never answers", () => {
  let tcp: TcpServer;
  let http: Server;
  const sockets: Socket[] = [];
  beforeAll(async () => {
    tcp = createTcpServer((socket) => {
      sockets.push(socket);
    });
    http = createHttpServer(() => undefined);
    await new Promise<void>((resolve) => tcp.listen(0, "127.0.0.1", resolve));
    await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  });
  afterAll(async () => {
    http.closeAllConnections();
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => http.close(resolve));
    await new Promise((resolve) => tcp.close(resolve));
  });

  it.each(["redis", "vercel-kv"])("%s: every call fails within the command bound", async (driver) => {
    const port =
      driver === "redis" ? (tcp.address() as { port: number }).port : (http.address() as { port: number }).port;
    const store = createKv(
      driver === "redis"
        ? config({ REDIS_URL: `redis://127.0.0.1:${port}` })
        : config({ KV_REST_API_URL: `http://127.0.0.1:${port}`, KV_REST_API_TOKEN: "t" }),
    );
    try {
      for (let i = 0; i < 3; i++) {
        const started = performance.now();
        await expect(store.slidingWindow([{ key: "never", limit: 5 }], 60_000)).rejects.toThrow();
        expect(performance.now() - started).toBeLessThan(TIMEOUT_MS + 400);
      }
    } finally {
      await store.close();
    }
  });
});

describe("on a dedicated redis-server", () => {
  let dedicated: DedicatedRedis;
  let dedicatedShim: UpstashShim;
  let admin: Redis;
  beforeAll(async () => {
    dedicated = await startDedicatedRedis();
    dedicatedShim = await startUpstashShim(dedicated.url);
    admin = new Redis(dedicated.url);
  });
  afterAll(async () => {
    admin.disconnect();
    await dedicatedShim.close();
    await dedicated.stop();
  });

  it("both drivers run the same script after SCRIPT FLUSH: EVALSHA falls back to EVAL on NOSCRIPT", async () => {
    const tcp = createKv(config({ REDIS_URL: dedicated.url }));
    const rest = createKv(config({ KV_REST_API_URL: dedicatedShim.url, KV_REST_API_TOKEN: dedicatedShim.token }));
    try {
      const windows = [{ key: unique("flush"), limit: 10 }];
      expect((await rest.slidingWindow(windows, 60_000)).windows[0]?.count).toBe(1);
      expect(dedicatedShim.requests.flatMap((request) => request.commands)).toEqual(["evalsha", "eval"]);
      expect((await tcp.slidingWindow(windows, 60_000)).windows[0]?.count).toBe(2);
      expect(await admin.script("FLUSH")).toBe("OK");
      expect((await rest.slidingWindow(windows, 60_000)).windows[0]?.count).toBe(3);
      expect((await tcp.slidingWindow(windows, 60_000)).windows[0]?.count).toBe(4);
      expect((await rest.slidingWindow(windows, 60_000)).windows[0]?.count).toBe(5);
      expect(dedicatedShim.requests.flatMap((request) => request.commands)).toEqual([
        "evalsha",
        "eval",
        "evalsha",
        "eval",
        "evalsha",
      ]);
      // One script text, one SHA: the TCP driver's EVAL loaded the same script the REST driver calls by SHA.
      const [loaded] = (await admin.script("EXISTS", await scriptSha())) as number[];
      expect(loaded).toBe(1);
    } finally {
      await tcp.close();
      await rest.close();
    }
  });
});

async function scriptSha(): Promise<string> {
  const { createHash } = await import("node:crypto");
  const { SLIDING_WINDOW_LUA } = await import("../../../server/kv/sliding-window");
  return createHash("sha1").update(SLIDING_WINDOW_LUA).digest("hex");
}
