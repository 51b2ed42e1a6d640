// The interface every key-value store driver implements (docs/architecture.md, "Key-value store and rate limits");
// apart from index.ts so drivers need not import the module that chooses between them.
import type { BudgetResult, LeaseResult } from "./budget-scripts";
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
  /**
   * Takes one of at most `limit` concurrent leases of `key`, atomically (`LEASE_LUA`): given when fewer are held; a
   * lease lapses after `leaseMs` ms unless given back first with {@link releaseLease}.
   * @param token the lease's id, unique across instances.
   * @throws the driver's error when the store is unreachable (never for memory).
   */
  acquireLease(key: string, limit: number, leaseMs: number, token: string): Promise<LeaseResult>;
  /**
   * Gives back a lease taken by {@link acquireLease} (nothing when it has lapsed).
   * @throws the driver's error when the store is unreachable (never for memory).
   */
  releaseLease(key: string, token: string): Promise<void>;
  /**
   * Draws `amount` units from the token bucket `key` (`BUDGET_LUA`), which refills `refillPerMs` units a ms up to
   * `capacity` and may be overdrawn; `amount` 0 only reads it.
   * @throws the driver's error when the store is unreachable (never for memory).
   */
  drawBudget(key: string, amount: number, refillPerMs: number, capacity: number): Promise<BudgetResult>;
  close(): Promise<void>;
}
