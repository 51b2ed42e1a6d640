import { env } from "../env";
import { memoryStore } from "./memory";
import { redisStore } from "./redis";
import type { KeyValueStore } from "./store";
import { vercelKvStore } from "./vercel-kv";

export type { BudgetResult, LeaseResult } from "./budget-scripts";
export type { SlidingWindowResult, WindowSpec, WindowState } from "./sliding-window";
export type { KeyValueStore, KvDriver } from "./store";

/** Default bound on one store call, ms: a TCP round trip to Redis; an HTTPS request to Vercel KV / Upstash. */
export const KV_TIMEOUT_DEFAULTS_MS = { redis: 250, "vercel-kv": 1_000 } as const;

/**
 * The store with `prefix` put before every key it is given, so two deployments on one Redis never count in each
 * other's windows nor read each other's counters (docs/architecture.md, "Key-value store and rate limits"). The
 * prefix goes first, so a key's hash tag (`rl:{o:…}`) still keeps a request's windows on one cluster node.
 */
function namespaced(store: KeyValueStore, prefix: string): KeyValueStore {
  return {
    driver: store.driver,
    ping: () => store.ping(),
    slidingWindow: (windows, windowMs) =>
      store.slidingWindow(
        windows.map((window) => ({ key: prefix + window.key, limit: window.limit })),
        windowMs,
      ),
    counter: (key) => store.counter(prefix + key),
    increment: (key) => store.increment(prefix + key),
    acquireLease: (key, limit, leaseMs, token) => store.acquireLease(prefix + key, limit, leaseMs, token),
    releaseLease: (key, token) => store.releaseLease(prefix + key, token),
    drawBudget: (key, amount, refillPerMs, capacity) => store.drawBudget(prefix + key, amount, refillPerMs, capacity),
    close: () => store.close(),
  };
}

/**
 * Builds the store the environment names: Vercel KV when `KV_REST_API_URL` and `KV_REST_API_TOKEN` are set, else TCP
 * Redis when `REDIS_URL` is set, else memory; every key it writes starts with `KV_PREFIX` (default `crm:`). Exported
 * for tests; the app uses the process-wide {@link kv}.
 */
export function createKv(config = env()): KeyValueStore {
  if (config.KV_REST_API_URL && config.KV_REST_API_TOKEN) {
    const timeoutMs = config.KV_TIMEOUT_MS ?? KV_TIMEOUT_DEFAULTS_MS["vercel-kv"];
    return namespaced(vercelKvStore(config.KV_REST_API_URL, config.KV_REST_API_TOKEN, timeoutMs), config.KV_PREFIX);
  }
  if (config.REDIS_URL) {
    const timeoutMs = config.KV_TIMEOUT_MS ?? KV_TIMEOUT_DEFAULTS_MS.redis;
    return namespaced(redisStore(config.REDIS_URL, timeoutMs), config.KV_PREFIX);
  }
  // One process's memory is nobody else's: no prefix needed.
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
