import { hash, randomUUID } from "node:crypto";
import { createClient } from "@vercel/kv";
import { BUDGET_LUA, LEASE_LUA, parseBudgetReply, parseLeaseReply } from "./budget-scripts";
import { parseSlidingWindowReply, SLIDING_WINDOW_LUA, slidingWindowArgs } from "./sliding-window";
import type { KeyValueStore } from "./store";

const sha1 = (script: string) => hash("sha1", script, "hex");
const SCRIPT_SHA = sha1(SLIDING_WINDOW_LUA);
const LEASE_SHA = sha1(LEASE_LUA);
const BUDGET_SHA = sha1(BUDGET_LUA);

/**
 * The Vercel KV / Upstash REST driver (`KV_REST_API_URL` + `KV_REST_API_TOKEN`): commands are HTTPS requests
 * (`@vercel/kv` over `@upstash/redis`, base64 response encoding, concurrent commands auto-pipelined into one request).
 * Each request is aborted after `timeoutMs` and not retried, so no API request waits on an outage. The sliding
 * window runs as the same Lua script as the TCP driver: EVALSHA, falling back to EVAL when the server answers NOSCRIPT.
 * @param timeoutMs per-request bound in ms.
 */
export function vercelKvStore(url: string, token: string, timeoutMs: number): KeyValueStore {
  const client = createClient({
    url,
    token,
    retry: { retries: 0 },
    // A function: a fresh timeout per request (a shared signal would abort every later request too).
    signal: () => AbortSignal.timeout(timeoutMs),
    automaticDeserialization: false,
    enableTelemetry: false,
  });
  const instance = randomUUID();
  let sequence = 0;
  // EVALSHA first; a server that has not seen the script yet answers NOSCRIPT, and EVAL loads it.
  const run = (script: string, sha: string, keys: string[], args: string[]) =>
    client.evalsha(sha, keys, args).catch((error: unknown) => {
      if (!String(error).includes("NOSCRIPT")) throw error;
      return client.eval(script, keys, args);
    });

  return {
    driver: "vercel-kv",
    async ping() {
      await client.ping();
    },
    async slidingWindow(windows, windowMs) {
      sequence = (sequence + 1) % Number.MAX_SAFE_INTEGER;
      const keys = windows.map((window) => window.key);
      const args = slidingWindowArgs(windows, windowMs, `${instance}:${sequence}`);
      return parseSlidingWindowReply(await run(SLIDING_WINDOW_LUA, SCRIPT_SHA, keys, args), windows);
    },
    async counter(key) {
      return Number((await client.get<string | number>(key)) ?? 0);
    },
    increment: (key) => client.incr(key),
    async acquireLease(key, limit, leaseMs, token) {
      return parseLeaseReply(await run(LEASE_LUA, LEASE_SHA, [key], [String(limit), String(leaseMs), token]));
    },
    async releaseLease(key, token) {
      await client.zrem(key, token);
    },
    async drawBudget(key, amount, refillPerMs, capacity) {
      const args = [String(amount), String(refillPerMs), String(capacity)];
      return parseBudgetReply(await run(BUDGET_LUA, BUDGET_SHA, [key], args));
    },
    close: async () => undefined,
  };
}
