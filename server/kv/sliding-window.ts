/** One sliding window to count a request against: a store key and its limit (requests per window). */
export interface WindowSpec {
  key: string;
  limit: number;
}

/** The state of one window after counting (or refusing) a request. */
export interface WindowState {
  /** The window's limit, as requested. */
  limit: number;
  /** Requests counted in the window now, the current one included when it was admitted. */
  count: number;
  /**
   * When the window next frees a slot, epoch ms: the moment the entry that keeps it at its limit ages out (the
   * oldest one while it has room), so `Remaining` goes up then. Equals `nowMs` when the window is empty.
   */
  freeAtMs: number;
}

/** The outcome of {@link SLIDING_WINDOW_LUA}: admitted only when every window had room; a refusal counts nowhere. */
export interface SlidingWindowResult {
  allowed: boolean;
  /** The store's clock when it counted, epoch ms (the Redis server's `TIME` on the Redis drivers). */
  nowMs: number;
  /** One state per {@link WindowSpec}, in the same order. */
  windows: WindowState[];
}

/**
 * Sliding-window log over sorted sets, one per window (docs/architecture.md, "Key-value store and rate limits"), run
 * atomically with EVAL/EVALSHA by both Redis drivers. KEYS: one sorted set per window (members are request ids, scores
 * their time in ms). ARGV[1]: window length in ms; ARGV[2]: a request id unique across instances; ARGV[2 + i]: the
 * limit of KEYS[i]. Returns `{allowed (1|0), nowMs, count_1, freeAt_1, count_2, freeAt_2, …}`; all integers. The clock
 * is the server's `TIME`, so every app instance counts on one clock. Keys of one subject share a hash tag, so the
 * script also runs on a cluster.
 */
export const SLIDING_WINDOW_LUA = `-- crm sliding window v1
if redis.replicate_commands then redis.replicate_commands() end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local window = tonumber(ARGV[1])
local counts = {}
local allowed = 1
for i, key in ipairs(KEYS) do
  redis.call('ZREMRANGEBYSCORE', key, '-inf', now - window)
  counts[i] = redis.call('ZCARD', key)
  if counts[i] >= tonumber(ARGV[2 + i]) then allowed = 0 end
end
if allowed == 1 then
  for i, key in ipairs(KEYS) do
    redis.call('ZADD', key, now, ARGV[2])
    redis.call('PEXPIRE', key, window)
    counts[i] = counts[i] + 1
  end
end
local out = {allowed, now}
for i, key in ipairs(KEYS) do
  local freeAt = now
  if counts[i] > 0 then
    local index = math.max(0, counts[i] - tonumber(ARGV[2 + i]))
    local entry = redis.call('ZRANGE', key, index, index, 'WITHSCORES')
    if entry[2] then freeAt = tonumber(entry[2]) + window end
  end
  out[#out + 1] = counts[i]
  out[#out + 1] = freeAt
end
return out
`;

/** The EVAL arguments of {@link SLIDING_WINDOW_LUA} for `windows` (ARGV as strings, as both clients send them). */
export function slidingWindowArgs(windows: readonly WindowSpec[], windowMs: number, requestId: string): string[] {
  return [String(windowMs), requestId, ...windows.map((window) => String(window.limit))];
}

/**
 * Parses the script's reply.
 * @throws Error when the reply is not the expected array of integers (a misbehaving store is treated as down).
 */
export function parseSlidingWindowReply(reply: unknown, windows: readonly WindowSpec[]): SlidingWindowResult {
  const values = Array.isArray(reply) ? reply.map(Number) : [];
  if (values.length !== 2 + 2 * windows.length || values.some((value) => !Number.isFinite(value))) {
    throw new Error("unexpected sliding-window reply");
  }
  return {
    allowed: values[0] === 1,
    nowMs: values[1] as number,
    windows: windows.map((window, i) => ({
      limit: window.limit,
      count: values[2 + 2 * i] as number,
      freeAtMs: values[3 + 2 * i] as number,
    })),
  };
}
