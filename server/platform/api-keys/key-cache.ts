// API keys authenticated from this process's memory (docs/architecture.md, "API keys and the key cache": no database
// round trip on the hot path where it is safe). A key's record is kept for 10 s; a revocation, a rotation or a change
// of an organisation's limits bumps a generation counter in the key-value store, which every instance reads twice a
// second and which empties its cache, so the change takes effect everywhere within 0.5 s. While the store cannot be
// read, nothing is cached. A key the database refused is remembered as refused for good.
import { kv } from "../../kv";
import { warnThrottled } from "../../kv/warn";
import { detached } from "../../observability/requests";

/** How long a key's record is used from memory before the database is asked again (ms). */
export const KEY_CACHE_TTL_MS = 10_000;
/** How often each process reads the generation counter (ms): the longest a revocation takes to reach it. */
export const KEY_GENERATION_POLL_MS = 500;
/** The shared counter of key changes. */
const GENERATION_KEY = "auth:key-generation";
/** Most keys kept per process; the oldest entry goes first beyond it. */
const MAX_CACHED_KEYS = 10_000;

interface Entry<T> {
  value: T;
  /** Epoch ms when the key stops authenticating (a rotated key's end); null while it has none. */
  expiresAt: number | null;
  cachedAt: number;
}

interface CacheState {
  entries: Map<string, Entry<unknown>>;
  /** Hashes of keys the database refused (unknown, revoked or expired), oldest first. */
  refused?: Set<string>;
  /** The generation last read from the store; null before the first read. */
  generation: number | null;
  /** Whether the last read succeeded: only then are records cached. */
  trusted: boolean;
  /** How many generations this process has published: a poll that overlaps one is discarded. */
  localBumps: number;
  poller?: NodeJS.Timeout;
}

// One cache per process: Next.js may instantiate this module in more than one bundle.
const holder = globalThis as unknown as { __crmKeyCache?: CacheState };
holder.__crmKeyCache ??= { entries: new Map(), generation: null, trusted: false, localBumps: 0 };
const state = holder.__crmKeyCache;

async function poll(): Promise<void> {
  const bumps = state.localBumps;
  try {
    const generation = await kv().counter(GENERATION_KEY);
    // This process published a newer generation while the read was under way: the read is stale, not a change made
    // elsewhere, and taking it would clear the cache again at the next poll.
    if (state.localBumps !== bumps) return;
    if (state.generation !== null && generation !== state.generation) state.entries.clear();
    state.generation = generation;
    state.trusted = true;
  } catch (error) {
    // A revocation could not reach this process now: forget everything and ask the database until the store answers.
    state.entries.clear();
    state.trusted = false;
    warnThrottled("auth.key-cache", {
      message: "key cache off: the key-value store cannot be read",
      error: String(error),
    });
  }
}

function startPolling(): void {
  if (state.poller) return;
  void poll();
  state.poller = detached(() => setInterval(() => void poll(), KEY_GENERATION_POLL_MS));
  state.poller.unref();
}

/**
 * The cached record of a key hash, when it is fresh (read within {@link KEY_CACHE_TTL_MS} and no change since).
 * @returns `{ value, expiresAt }`, or undefined when the database must be asked.
 */
export function cachedKey<T>(hash: string, now = Date.now()): { value: T; expiresAt: number | null } | undefined {
  startPolling();
  const entry = state.entries.get(hash);
  if (!entry || !state.trusted || now - entry.cachedAt >= KEY_CACHE_TTL_MS) return undefined;
  return { value: entry.value as T, expiresAt: entry.expiresAt };
}

/** Keeps a key's record (a valid key only) for {@link KEY_CACHE_TTL_MS}, when the generation can be trusted. */
export function cacheKey<T>(hash: string, value: T, expiresAt: number | null, now = Date.now()): void {
  if (!state.trusted) return;
  if (state.entries.size >= MAX_CACHED_KEYS) state.entries.delete(state.entries.keys().next().value as string);
  state.entries.set(hash, { value, expiresAt, cachedAt: now });
}

/**
 * Makes every instance forget its cached key records (revocation, rotation, a change of an organisation's plan or
 * limits): this process at once, the others within {@link KEY_GENERATION_POLL_MS} through the key-value store. Never
 * throws: when the store is unreachable, the other instances stop caching by themselves.
 */
export async function forgetCachedKeys(): Promise<void> {
  state.entries.clear();
  state.localBumps += 1;
  try {
    state.generation = await kv().increment(GENERATION_KEY);
  } catch (error) {
    warnThrottled("auth.key-cache", {
      message: "key change not published to the key-value store",
      error: String(error),
    });
  }
}

/**
 * Whether the database refused this key hash before (unknown, revoked or expired), in this process: such a key is
 * answered 401 from memory. A refusal is final (a key is never unrevoked, never made valid again, and no key can be
 * presented before the transaction that creates it commits), so it needs no generation and no expiry.
 */
export function keyRefused(hash: string): boolean {
  return state.refused?.has(hash) ?? false;
}

/**
 * Remembers that the database refused a key hash, so a client that keeps sending a revoked, expired or deleted key
 * costs one lookup per process, not one per request. At most {@link MAX_CACHED_KEYS} hashes; the oldest goes first
 * (and then costs one lookup more).
 */
export function rememberRefusedKey(hash: string): void {
  state.refused ??= new Set();
  if (state.refused.size >= MAX_CACHED_KEYS) state.refused.delete(state.refused.values().next().value as string);
  state.refused.add(hash);
}
