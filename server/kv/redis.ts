import { randomUUID } from "node:crypto";
import { Redis } from "ioredis";
import { tracingOn } from "../observability/telemetry";
import { BUDGET_LUA, LEASE_LUA, parseBudgetReply, parseLeaseReply } from "./budget-scripts";
import { parseSlidingWindowReply, SLIDING_WINDOW_LUA, slidingWindowArgs } from "./sliding-window";
import type { KeyValueStore } from "./store";
import { warnThrottled } from "./warn";

type WithScript = Redis & {
  crmSlidingWindow(numberOfKeys: number, ...keysAndArgs: string[]): Promise<unknown>;
  crmLease(key: string, limit: string, leaseMs: string, token: string): Promise<unknown>;
  crmBudget(key: string, amount: string, refillPerMs: string, capacity: string): Promise<unknown>;
};

// Ready-check wait for PING (the status probe): a first connection may take longer than one command.
const PING_CONNECT_WAIT_MS = 1_500;

/**
 * The TCP Redis driver (`REDIS_URL`). Every command is bounded by `timeoutMs` (ioredis `commandTimeout`) and fails at
 * once while disconnected (`enableOfflineQueue: false`), so no request waits on an outage; ioredis reconnects in the
 * background (every ≤ 1 s). The sliding window runs as one script: EVAL on a connection's first use, EVALSHA after.
 * @param timeoutMs per-command bound in ms.
 */
export function redisStore(url: string, timeoutMs: number): KeyValueStore {
  const client = new Redis(url, {
    enableOfflineQueue: false,
    commandTimeout: timeoutMs,
    connectTimeout: 2_000,
    maxRetriesPerRequest: 0,
    // Concurrent requests' scripts go out in one write per event-loop turn instead of one socket write each: those
    // write syscalls were the largest cost of the rate limit under load (docs/architecture.md, "Memory and speed").
    // Not while tracing: a batch is sent in the context of the request that queued first, so the other requests'
    // Redis spans would land in its trace.
    enableAutoPipelining: !tracingOn(),
    retryStrategy: (attempt) => Math.min(attempt * 100, 1_000),
  }) as WithScript;
  client.defineCommand("crmSlidingWindow", { lua: SLIDING_WINDOW_LUA });
  client.defineCommand("crmLease", { lua: LEASE_LUA, numberOfKeys: 1 });
  client.defineCommand("crmBudget", { lua: BUDGET_LUA, numberOfKeys: 1 });
  client.on("error", (error: Error) => {
    // Without a listener ioredis would crash the process; the limiter decides what an outage means.
    warnThrottled("kv.redis.connection", { driver: "redis", error: error.message });
  });
  let everReady = false;
  client.on("ready", () => {
    everReady = true;
  });
  // Unique per process; with a counter, every admitted request gets its own sorted-set member across instances.
  const instance = randomUUID();
  let sequence = 0;

  /** Resolves when the client can send; waits only for a first connection still in progress. */
  function ready(waitMs: number): Promise<void> {
    if (client.status === "ready") return Promise.resolve();
    const connecting = client.status === "connecting" || client.status === "connect" || client.status === "wait";
    if (everReady || !connecting) return Promise.reject(new Error(`redis not connected (${client.status})`));
    return new Promise((resolve, reject) => {
      const done = (error?: Error) => {
        clearTimeout(timer);
        client.off("ready", onReady);
        client.off("close", onClose);
        if (error) reject(error);
        else resolve();
      };
      const onReady = () => done();
      const onClose = () => done(new Error("redis connection closed"));
      const timer = setTimeout(() => done(new Error(`redis not ready within ${waitMs} ms`)), waitMs);
      client.once("ready", onReady);
      client.once("close", onClose);
    });
  }

  return {
    driver: "redis",
    async ping() {
      await ready(PING_CONNECT_WAIT_MS);
      await client.ping();
    },
    async slidingWindow(windows, windowMs) {
      await ready(timeoutMs);
      sequence = (sequence + 1) % Number.MAX_SAFE_INTEGER;
      const args = slidingWindowArgs(windows, windowMs, `${instance}:${sequence}`);
      const reply = await client.crmSlidingWindow(windows.length, ...windows.map((window) => window.key), ...args);
      return parseSlidingWindowReply(reply, windows);
    },
    async counter(key) {
      await ready(timeoutMs);
      return Number((await client.get(key)) ?? 0);
    },
    async increment(key) {
      await ready(timeoutMs);
      return client.incr(key);
    },
    async acquireLease(key, limit, leaseMs, token) {
      await ready(timeoutMs);
      return parseLeaseReply(await client.crmLease(key, String(limit), String(leaseMs), token));
    },
    async releaseLease(key, token) {
      await ready(timeoutMs);
      await client.zrem(key, token);
    },
    async drawBudget(key, amount, refillPerMs, capacity) {
      await ready(timeoutMs);
      return parseBudgetReply(await client.crmBudget(key, String(amount), String(refillPerMs), String(capacity)));
    },
    async close() {
      client.disconnect();
    },
  };
}
