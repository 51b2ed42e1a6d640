import { env } from "../../env";
import { type KeyValueStore, kv, type SlidingWindowResult, type WindowSpec } from "../../kv";
import { memoryStore } from "../../kv/memory";
import { warnThrottled } from "../../kv/warn";

/** How long the limiter counts in memory after the shared store failed before trying it again, ms. */
export const STORE_RETRY_AFTER_MS = 1_000;

/**
 * Who a request is counted against: an API key (and its organisation), or an anonymous client IP, in the window all
 * its anonymous requests share or, with `window`, in a window of that name of its own (the status endpoint's).
 */
export type RateLimitSubject =
  | { kind: "key"; apiKeyId: string; orgId: string; perKey: number; perOrg: number }
  | { kind: "anonymous"; ip: string; window?: "status" }
  | { kind: "pages"; visitor: string }
  /**
   * The MCP protocol's own messages of one key (initialize, tools/list, notifications: everything but tool calls,
   * which count as the key's requests), in a window of `RATE_LIMIT_ANONYMOUS_PER_MIN` (docs/api-contract.md §10.5).
   */
  | { kind: "protocol"; apiKeyId: string };

/**
 * The outcome of counting one request (docs/api-contract.md §8): whether it may run, the headers every response carries
 * (`X-RateLimit-Limit`, `-Remaining`, `-Reset` in Unix seconds, `-Policy: sliding-window`; and the IETF draft's
 * `RateLimit-Policy` and `RateLimit`) and, when refused, the
 * seconds to wait (`Retry-After`, ≥ 1).
 */
export interface RateLimitDecision {
  allowed: boolean;
  headers: Record<string, string>;
  retryAfterSeconds?: number;
}

// Keys of one organisation share the hash tag {o:…}, so a cluster keeps both windows of a request on one node.
function windowsOf(subject: RateLimitSubject): WindowSpec[] {
  if (subject.kind === "key") {
    return [
      { key: `rl:{o:${subject.orgId}}:k:${subject.apiKeyId}`, limit: subject.perKey },
      { key: `rl:{o:${subject.orgId}}`, limit: subject.perOrg },
    ];
  }
  // A person clicking through the settings, prefetches included, stays far below the pages' window; a script hammering
  // a page or an export is refused before the page looks its session up.
  if (subject.kind === "pages") return [{ key: `rl:{pg:${subject.visitor}}`, limit: env().RATE_LIMIT_PAGES_PER_MIN }];
  if (subject.kind === "protocol") {
    return [{ key: `rl:{mcp:${subject.apiKeyId}}`, limit: env().RATE_LIMIT_ANONYMOUS_PER_MIN }];
  }
  // The address comes from a header: bound the key length.
  const key = `rl:{ip:${subject.ip.slice(0, 64)}}${subject.window ? `:${subject.window}` : ""}`;
  return [{ key, limit: env().RATE_LIMIT_ANONYMOUS_PER_MIN }];
}

/** Policy names of the IETF `RateLimit-Policy` header, in the order of {@link windowsOf}'s windows. */
function policyNames(subject: RateLimitSubject): string[] {
  if (subject.kind === "key") return ["key", "org"];
  if (subject.kind === "pages") return ["pages"];
  if (subject.kind === "protocol") return ["mcp"];
  return [subject.window ?? "ip"];
}

const state: { fallback?: KeyValueStore; retryAt: number; degraded: boolean } = { retryAt: 0, degraded: false };

/**
 * Runs `operation` on the shared store; while it is unreachable, on this process's memory (limits and budgets then
 * apply per instance), trying the shared store again every {@link STORE_RETRY_AFTER_MS} ms, so it comes back by
 * itself. Never throws for the store's sake (docs/architecture.md, "Key-value store and rate limits").
 */
export async function onLimitStore<T>(operation: (store: KeyValueStore) => Promise<T>): Promise<T> {
  const store = kv();
  if (store.driver === "memory") return operation(store);
  if (Date.now() >= state.retryAt) {
    try {
      const result = await operation(store);
      if (state.degraded) {
        state.degraded = false;
        warnThrottled("rate-limit.store-up", { driver: store.driver, message: "shared store answers again" }, "info");
      }
      return result;
    } catch (error) {
      state.retryAt = Date.now() + STORE_RETRY_AFTER_MS;
      state.degraded = true;
      warnThrottled("rate-limit.store-down", {
        driver: store.driver,
        error: error instanceof Error ? error.message : String(error),
        message: "key-value store unreachable; counting rate limits in this process until it answers",
      });
    }
  }
  state.fallback ??= memoryStore();
  return operation(state.fallback);
}

function count(windows: WindowSpec[], windowMs: number): Promise<SlidingWindowResult> {
  return onLimitStore((store) => store.slidingWindow(windows, windowMs));
}

/**
 * Builds the decision from the windows' states. The headers report the tighter window (fewer remaining; on a tie the
 * one that frees a slot later). `X-RateLimit-Reset`: Unix seconds, rounded up, when that window next frees a slot —
 * the moment its oldest counted request ages out, i.e. when `Remaining` next goes up (on a 429: when a retry can pass
 * that window). `Retry-After`: seconds until every full window has a free slot, rounded up, at least 1.
 */
function decide(result: SlidingWindowResult, names: readonly string[], windowMs: number): RateLimitDecision {
  const views = result.windows.map((window, index) => ({
    name: names[index] ?? `w${index}`,
    limit: window.limit,
    remaining: Math.max(0, window.limit - window.count),
    freeAtMs: window.freeAtMs,
  }));
  const reported = views.reduce((tightest, view) =>
    view.remaining < tightest.remaining || (view.remaining === tightest.remaining && view.freeAtMs > tightest.freeAtMs)
      ? view
      : tightest,
  );
  const headers = {
    "X-RateLimit-Limit": String(reported.limit),
    "X-RateLimit-Remaining": String(reported.remaining),
    "X-RateLimit-Reset": String(Math.ceil(reported.freeAtMs / 1000)),
    "X-RateLimit-Policy": "sliding-window",
    // IETF draft-ietf-httpapi-ratelimit-headers (docs/api-contract.md §8.3): every policy with its quota and window in
    // seconds, and the tighter one's remaining requests and seconds until it frees one.
    "RateLimit-Policy": views.map((view) => `"${view.name}";q=${view.limit};w=${windowMs / 1000}`).join(", "),
    RateLimit: `"${reported.name}";r=${reported.remaining};t=${Math.max(0, Math.ceil((reported.freeAtMs - result.nowMs) / 1000))}`,
  };
  if (result.allowed) return { allowed: true, headers };
  const waitMs = Math.max(
    0,
    ...views.filter((view) => view.remaining === 0).map((view) => view.freeAtMs - result.nowMs),
  );
  return { allowed: false, headers, retryAfterSeconds: Math.max(1, Math.ceil(waitMs / 1000)) };
}

/**
 * Counts one request against the subject's sliding windows (docs/api-contract.md §8): an API key's per-key and
 * per-organisation windows together (admitted only when both have room; a refused request counts in neither), or an
 * anonymous IP's window of `RATE_LIMIT_ANONYMOUS_PER_MIN` (the status endpoint's own window of the same size, so bad
 * keys from an address never lock its health checks out). One round trip to the store. Never throws: when the store is
 * unreachable the windows are counted in this process's memory.
 * @param windowMs window length in ms; default `RATE_LIMIT_WINDOW_MS` (server/env.ts: 60,000, the minute of
 *        docs/api-contract.md §8; tests configure a shorter one).
 * @returns the decision; the REST facade answers 429 `rate_limited` with `Retry-After` when `allowed` is false.
 */
export async function enforceRateLimit(
  subject: RateLimitSubject,
  windowMs = env().RATE_LIMIT_WINDOW_MS,
): Promise<RateLimitDecision> {
  return decide(await count(windowsOf(subject), windowMs), policyNames(subject), windowMs);
}
