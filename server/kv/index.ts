import { env } from "../env";
import { memoryStore } from "./memory";
import { redisStore } from "./redis";
import type { SlidingWindowResult, WindowSpec } from "./sliding-window";
import { vercelKvStore } from "./vercel-kv";

export type { SlidingWindowResult, WindowSpec, WindowState } from "./sliding-window";

/** Which backend answers: Vercel KV / Upstash REST, TCP Redis, or this process's memory. */
export type KvDriver = "vercel-kv" | "redis" | "memory";

/**
 * The key-value store behind rate-limit windows (DESIGN.md §4). Both Redis drivers run the same Lua script
 * (`SLIDING_WINDOW_LUA`); the memory driver implements the same semantics in-process.
 */
export interface KeyValueStore {
  driver: KvDriver;
  /** Resolves when the store answers; rejects with the driver's error otherwise (bounded, see `KV_TIMEOUT_MS`). */
  ping(): Promise<void>;
  /**
   * Counts one request against every window in `windows` at once, atomically: admitted only when each has fewer than
   * its `limit` requests in the last `windowMs` ms; a refused request is counted nowhere (spec §8).
   * @throws the driver's error when the store is unreachable or slower than `KV_TIMEOUT_MS` (never for memory).
   */
  slidingWindow(windows: readonly WindowSpec[], windowMs: number): Promise<SlidingWindowResult>;
  close(): Promise<void>;
}

/** Default bound on one store call, ms: a TCP round trip to Redis; an HTTPS request to Vercel KV / Upstash. */
export const KV_TIMEOUT_DEFAULTS_MS = { redis: 250, "vercel-kv": 1_000 } as const;

/**
 * Builds the store the environment names: Vercel KV when `KV_REST_API_URL` and `KV_REST_API_TOKEN` are set, else TCP
 * Redis when `REDIS_URL` is set, else memory. Exported for tests; the app uses the process-wide {@link kv}.
 */
export function createKv(config = env()): KeyValueStore {
  if (config.KV_REST_API_URL && config.KV_REST_API_TOKEN) {
    const timeoutMs = config.KV_TIMEOUT_MS ?? KV_TIMEOUT_DEFAULTS_MS["vercel-kv"];
    return vercelKvStore(config.KV_REST_API_URL, config.KV_REST_API_TOKEN, timeoutMs);
  }
  if (config.REDIS_URL) return redisStore(config.REDIS_URL, config.KV_TIMEOUT_MS ?? KV_TIMEOUT_DEFAULTS_MS.redis);
  return memoryStore();
}

const holder = globalThis as unknown as { __crmKv?: KeyValueStore };

/** The process-wide store chosen from the environment (see {@link createKv}); created on first use. */
export function kv(): KeyValueStore {
  holder.__crmKv ??= createKv();
  return holder.__crmKv;
}

/** Closes the process-wide store, if open; the next {@link kv} call builds a new one from the environment. */
export async function closeKv(): Promise<void> {
  const current = holder.__crmKv;
  holder.__crmKv = undefined;
  await current?.close();
}
