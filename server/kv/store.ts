// The interface every key-value store driver implements (docs/architecture.md, "Key-value store and rate limits");
// apart from index.ts so drivers need not import the module that chooses between them.
import type { SlidingWindowResult, WindowSpec } from "./sliding-window";

/** Which backend answers: Vercel KV / Upstash REST, TCP Redis, or this process's memory. */
export type KvDriver = "vercel-kv" | "redis" | "memory";

/**
 * The key-value store behind rate-limit windows (docs/architecture.md, "Key-value store and rate limits"). Both Redis
 * drivers run the same Lua script (`SLIDING_WINDOW_LUA`); the memory driver implements the same semantics in-process.
 */
export interface KeyValueStore {
  driver: KvDriver;
  /** Resolves when the store answers; rejects with the driver's error otherwise (bounded, see `KV_TIMEOUT_MS`). */
  ping(): Promise<void>;
  /**
   * Counts one request against every window in `windows` at once, atomically: admitted only when each has fewer than
   * its `limit` requests in the last `windowMs` ms; a refused request is counted nowhere (docs/api-contract.md §8).
   * @throws the driver's error when the store is unreachable or slower than `KV_TIMEOUT_MS` (never for memory).
   */
  slidingWindow(windows: readonly WindowSpec[], windowMs: number): Promise<SlidingWindowResult>;
  /**
   * The value of a counter shared by every instance (0 when never incremented), e.g. the API-key revocation
   * generation every instance polls.
   * @throws the driver's error when the store is unreachable (never for memory).
   */
  counter(key: string): Promise<number>;
  /**
   * Adds one to a shared counter, atomically.
   * @returns the new value.
   * @throws the driver's error when the store is unreachable (never for memory).
   */
  increment(key: string): Promise<number>;
  close(): Promise<void>;
}
