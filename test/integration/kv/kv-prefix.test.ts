// KV_PREFIX: every entry the service writes in the key-value store starts with it, so two deployments on one Redis
// never share rate-limit windows or the key-cache generation, while instances of one deployment (same prefix) do.
// Three instances of the REST facade run as processes of their own on the real Redis, with a small anonymous window.
import type { ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { Redis } from "ioredis";
import { afterAll, beforeAll, expect, it } from "vitest";
import { env } from "../../../server/env";
import { createKv } from "../../../server/kv";
import { spawnApiInstance } from "../../helpers/spawn-instance";

const REDIS_URL = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
const LIMIT = 5;
const run = randomBytes(4).toString("hex");
const PREFIX_A = `kvprefix-${run}-a:`;
const PREFIX_B = `kvprefix-${run}-b:`;
const children: ChildProcess[] = [];
let redis: Redis;

/** Starts an instance with `prefix` and resolves with its /api/v1 URL. */
function instance(prefix: string): Promise<string> {
  // Redis calls bounded at 2 s, not 250 ms: on a loaded machine a slow call would make an instance count in its own
  // memory for a second (documented, "Key-value store and rate limits"), and the shared window this test asserts
  // would not be the one counted.
  return spawnApiInstance(
    { KV_PREFIX: prefix, RATE_LIMIT_ANONYMOUS_PER_MIN: String(LIMIT), REDIS_URL, KV_TIMEOUT_MS: "2000" },
    children,
  );
}

/** An anonymous request (no key: 401 while the window has room, then 429) and its status. */
const anonymous = (url: string) => fetch(`${url}/accounts`).then((res) => res.status);

let a: string;
let b: string;
let aAgain: string;

beforeAll(async () => {
  redis = new Redis(REDIS_URL);
  [a, b, aAgain] = await Promise.all([instance(PREFIX_A), instance(PREFIX_B), instance(PREFIX_A)]);
}, 60_000);

afterAll(async () => {
  for (const child of children) child.kill("SIGTERM");
  const keys = [...(await redis.keys(`${PREFIX_A}*`)), ...(await redis.keys(`${PREFIX_B}*`))];
  if (keys.length > 0) await redis.del(...keys);
  redis.disconnect();
});

it("instances with different prefixes on one Redis do not share windows; instances with the same prefix do", async () => {
  const first = [];
  for (let i = 0; i < LIMIT; i++) first.push(await anonymous(a));
  expect(first).toEqual(Array(LIMIT).fill(401));
  expect(await anonymous(a)).toBe(429);

  // Another deployment (prefix B) on the same Redis: its window for 127.0.0.1 is untouched.
  const other = await fetch(`${b}/accounts`);
  expect(other.status).toBe(401);
  expect(other.headers.get("x-ratelimit-remaining")).toBe(String(LIMIT - 1));

  // A second instance of deployment A counts in A's window, which is full.
  expect(await anonymous(aAgain)).toBe(429);

  // The windows are stored under each prefix, and nothing of theirs without one.
  const windowKey = "rl:{ip:127.0.0.1}";
  expect(await redis.zcard(`${PREFIX_A}${windowKey}`)).toBe(LIMIT);
  expect(await redis.zcard(`${PREFIX_B}${windowKey}`)).toBe(1);
});

it("windows and counters (the key-cache generation) are written under the prefix, and read back through it", async () => {
  const prefix = `kvprefix-${run}-c:`;
  const store = createKv({ ...env(), REDIS_URL, KV_REST_API_URL: undefined, KV_PREFIX: prefix });
  try {
    await store.slidingWindow([{ key: "rl:{o:org1}", limit: 10 }], 60_000);
    expect(await store.increment("auth:key-generation")).toBe(1);
    expect(await store.counter("auth:key-generation")).toBe(1);
    const written = (await redis.keys(`${prefix}*`)).sort();
    expect(written).toEqual([`${prefix}auth:key-generation`, `${prefix}rl:{o:org1}`]);
    expect(await redis.get(`${prefix}auth:key-generation`)).toBe("1");
  } finally {
    await store.close();
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length > 0) await redis.del(...keys);
  }
});
