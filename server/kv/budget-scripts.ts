// The two scripts behind an organisation's budgets (docs/architecture.md, "Budgets: what one request may cost"), run
// atomically with EVAL/EVALSHA by both Redis drivers; the memory driver implements the same semantics in-process. Each
// takes one key, so an organisation's keys (hash tag {o:…}) stay on one cluster node.

/** The outcome of taking a lease ({@link LEASE_LUA}): whether it was given, and how many are held now. */
export interface LeaseResult {
  acquired: boolean;
  /** Leases held after the call, this one included when it was given. */
  held: number;
}

/** The outcome of drawing from a budget ({@link BUDGET_LUA}): what is left (negative: owed), and the store's clock. */
export interface BudgetResult {
  /** Units left after the draw; below 0 the budget is overdrawn until it refills. */
  level: number;
  /** The store's clock, epoch ms. */
  nowMs: number;
}

/**
 * Concurrency leases over a sorted set (members: lease tokens, scores: when each lease lapses, epoch ms). KEYS[1]: the
 * set; ARGV[1]: the most leases held at once; ARGV[2]: a lease's longest life, ms (a holder that died frees its slot
 * then); ARGV[3]: the new lease's token. Lapsed leases are dropped first. Returns `{acquired (1|0), held}`. A lease is
 * given back with ZREM of its token.
 */
export const LEASE_LUA = `-- crm lease v1
if redis.replicate_commands then redis.replicate_commands() end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
local held = redis.call('ZCARD', KEYS[1])
if held < tonumber(ARGV[1]) then
  redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[3])
  redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[2]))
  return {1, held + 1}
end
return {0, held}
`;

/**
 * A token bucket that may be overdrawn (the cost of a request is known only after it ran): KEYS[1] a hash of `level`
 * and `at` (epoch ms of the last draw). ARGV[1]: units drawn now (≥ 0; 0 only reads); ARGV[2]: units refilled per ms;
 * ARGV[3]: the bucket's capacity (also its level when new). The level refills up to the capacity, then the draw is
 * taken from it, possibly below 0. Returns `{level (as text: it has decimals), nowMs}`.
 */
export const BUDGET_LUA = `-- crm budget v1
if redis.replicate_commands then redis.replicate_commands() end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local rate = tonumber(ARGV[2])
local capacity = tonumber(ARGV[3])
local state = redis.call('HMGET', KEYS[1], 'level', 'at')
local level = tonumber(state[1]) or capacity
local at = tonumber(state[2]) or now
level = math.min(capacity, level + math.max(0, now - at) * rate) - tonumber(ARGV[1])
redis.call('HSET', KEYS[1], 'level', tostring(level), 'at', tostring(now))
redis.call('PEXPIRE', KEYS[1], math.ceil((capacity - level) / rate) + 1000)
return {tostring(level), now}
`;

/**
 * Parses {@link LEASE_LUA}'s reply.
 * @throws Error when it is not two integers (a misbehaving store is treated as down).
 */
export function parseLeaseReply(reply: unknown): LeaseResult {
  const values = Array.isArray(reply) ? reply.map(Number) : [];
  if (values.length !== 2 || values.some((value) => !Number.isFinite(value))) throw new Error("unexpected lease reply");
  return { acquired: values[0] === 1, held: values[1] as number };
}

/**
 * Parses {@link BUDGET_LUA}'s reply.
 * @throws Error when it is not a number and a clock (a misbehaving store is treated as down).
 */
export function parseBudgetReply(reply: unknown): BudgetResult {
  const values = Array.isArray(reply) ? reply.map(Number) : [];
  if (values.length !== 2 || values.some((value) => !Number.isFinite(value)))
    throw new Error("unexpected budget reply");
  return { level: values[0] as number, nowMs: values[1] as number };
}
