import type { SlidingWindowResult, WindowSpec } from "./sliding-window";
import type { KeyValueStore } from "./store";

interface Log {
  /** Admission times in ms, ascending. */
  times: number[];
  windowMs: number;
}

const SWEEP_INTERVAL_MS = 60_000;

/**
 * The in-memory store (one process): the embedded default, and the limiter's fallback while a shared store is
 * unreachable. Implements the same sliding-window semantics as the Lua script; it runs synchronously, so it is atomic
 * by construction.
 * @param options.now clock in epoch ms (tests pass a controllable one); default `Date.now`.
 */
export function memoryStore(options: { now?: () => number } = {}): KeyValueStore {
  const clock = options.now ?? Date.now;
  const logs = new Map<string, Log>();
  let last = 0;
  // A clock stepping back (NTP) must not reorder the logs.
  const now = () => {
    last = Math.max(last, clock());
    return last;
  };

  // Idle subjects would otherwise stay in memory for the life of the process.
  const sweep = setInterval(() => {
    const at = now();
    for (const [key, log] of logs) {
      const newest = log.times.at(-1);
      if (newest === undefined || newest <= at - log.windowMs) logs.delete(key);
    }
    for (const [key, state] of budgets) {
      if (state.level + (at - state.at) * state.refillPerMs >= state.capacity) budgets.delete(key);
    }
  }, SWEEP_INTERVAL_MS);
  sweep.unref();

  function slidingWindowSync(windows: readonly WindowSpec[], windowMs: number): SlidingWindowResult {
    const at = now();
    const cutoff = at - windowMs;
    const entries = windows.map((window) => {
      let log = logs.get(window.key);
      if (!log) {
        log = { times: [], windowMs };
        logs.set(window.key, log);
      }
      log.windowMs = windowMs;
      let expired = 0;
      while (expired < log.times.length && (log.times[expired] as number) <= cutoff) expired++;
      if (expired > 0) log.times.splice(0, expired);
      return log;
    });
    const allowed = windows.every((window, i) => (entries[i] as Log).times.length < window.limit);
    if (allowed) for (const log of entries) log.times.push(at);
    return {
      allowed,
      nowMs: at,
      windows: windows.map((window, i) => {
        const times = (entries[i] as Log).times;
        const index = Math.max(0, times.length - window.limit);
        const entry = times[index];
        return { limit: window.limit, count: times.length, freeAtMs: entry === undefined ? at : entry + windowMs };
      }),
    };
  }

  const counters = new Map<string, number>();
  /** Per lease key: token → when it lapses (ms). */
  const leases = new Map<string, Map<string, number>>();
  /** Per budget key: its level and when it was last drawn from (ms). */
  const budgets = new Map<string, { level: number; at: number; refillPerMs: number; capacity: number }>();
  return {
    driver: "memory",
    ping: async () => undefined,
    slidingWindow: async (windows, windowMs) => slidingWindowSync(windows, windowMs),
    counter: async (key) => counters.get(key) ?? 0,
    async increment(key) {
      const value = (counters.get(key) ?? 0) + 1;
      counters.set(key, value);
      return value;
    },
    async acquireLease(key, limit, leaseMs, token) {
      const at = now();
      const held = leases.get(key) ?? new Map<string, number>();
      for (const [id, lapses] of held) if (lapses <= at) held.delete(id);
      leases.set(key, held);
      if (held.size >= limit) return { acquired: false, held: held.size };
      held.set(token, at + leaseMs);
      return { acquired: true, held: held.size };
    },
    async releaseLease(key, token) {
      const held = leases.get(key);
      held?.delete(token);
      if (held?.size === 0) leases.delete(key);
    },
    async drawBudget(key, amount, refillPerMs, capacity) {
      const at = now();
      const state = budgets.get(key) ?? { level: capacity, at, refillPerMs, capacity };
      state.level = Math.min(capacity, state.level + Math.max(0, at - state.at) * refillPerMs) - amount;
      Object.assign(state, { at, refillPerMs, capacity });
      budgets.set(key, state);
      return { level: state.level, nowMs: at };
    },
    async close() {
      clearInterval(sweep);
      logs.clear();
      counters.clear();
      leases.clear();
      budgets.clear();
    },
  };
}
