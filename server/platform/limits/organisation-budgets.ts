// What one organisation may take of the shared database (docs/architecture.md, "Budgets: what one request may cost";
// docs/api-contract.md §8.5): a few expensive operations at once, and a budget of database time a minute, both
// derived from its organisation-wide rate limit, both kept in the key-value store so every instance counts the same,
// both answered 429 `rate_limited` with the reason. Request counts (§8.2) bound how often a tenant calls; these bound
// what its calls cost the others.
import { randomUUID } from "node:crypto";
import { ApiError } from "../../errors";
import { warnThrottled } from "../../kv/warn";
import { detached } from "../../observability/requests";
import { onLimitStore } from "./rate-limits";

/** Database time an organisation may use a minute for each request a minute its organisation-wide window admits, ms. */
export const DATABASE_MS_PER_REQUEST = 250;

/** Requests a minute of the organisation-wide window per slot for expensive work (at least one slot). */
export const REQUESTS_PER_SLOT = 60;

/**
 * An organisation's budgets (docs/api-contract.md §8.5), derived from its organisation-wide rate limit (its plan's, or
 * the operator's override), so one setting scales both: `concurrent`, how many expensive operations (searches, lists
 * sorted by a custom field, bulk writes, erasures, CSV exports) it runs at once across every instance, one per
 * {@link REQUESTS_PER_SLOT} requests a minute; and `databaseMsPerMinute`, the database time its API requests may use a
 * minute (ms of statements running), {@link DATABASE_MS_PER_REQUEST} per request a minute, of which a quarter can be
 * spent at once ({@link BURST_FRACTION}). Starter (60 a minute): 1 at once, 15 s a minute.
 * @param perOrg the organisation-wide window, requests per minute.
 */
export function organisationBudget(perOrg: number): { concurrent: number; databaseMsPerMinute: number } {
  return {
    concurrent: Math.max(1, Math.floor(perOrg / REQUESTS_PER_SLOT)),
    databaseMsPerMinute: perOrg * DATABASE_MS_PER_REQUEST,
  };
}

/** The part of a minute's database time an organisation can spend at once (the token bucket's capacity). */
export const BURST_FRACTION = 0.25;

/** How long an expensive operation's slot stays taken when its process dies before giving it back, ms. */
const LEASE_MS = 120_000;

/** How often this process adds its organisations' database time to the shared budgets, ms. */
export const BUDGET_FLUSH_MS = 250;

/** Organisations this process forgets after this long without a request, ms. */
const IDLE_MS = 120_000;

/** The kinds of work that take one of the organisation's concurrent slots. */
export type ExpensiveOperation = "search" | "custom-field sort" | "bulk" | "erasure" | "export";

interface OrganisationState {
  /** The organisation-wide window its budgets derive from, requests per minute. */
  perOrg: number;
  /** Database time used here and not yet drawn from the shared budget, ms. */
  pendingMs: number;
  /** The shared budget's level at the last draw (ms of database time; below 0: owed), or null before the first. */
  level: number | null;
  /** When that level was read, epoch ms on this process's clock. */
  readAt: number;
  lastSeenAt: number;
  /** The first read of the level, while under way (shared by the requests that wait for it). */
  reading?: Promise<void>;
}

// One per process: Next.js bundles may instantiate this module more than once.
const holder = globalThis as unknown as {
  __crmOrganisationBudgets?: { organisations: Map<string, OrganisationState>; flusher?: NodeJS.Timeout };
};
holder.__crmOrganisationBudgets ??= { organisations: new Map() };
const budgets = holder.__crmOrganisationBudgets;

const runningKey = (orgId: string) => `budget:{o:${orgId}}:running`;
const databaseKey = (orgId: string) => `budget:{o:${orgId}}:db`;

function refillPerMs(perOrg: number): number {
  return organisationBudget(perOrg).databaseMsPerMinute / 60_000;
}

function capacity(perOrg: number): number {
  return organisationBudget(perOrg).databaseMsPerMinute * BURST_FRACTION;
}

/**
 * Takes one of the organisation's slots for an expensive operation ({@link organisationBudget} `concurrent`), shared
 * by every instance through the key-value store (on this process's memory while the store is down).
 * @param perOrg the organisation-wide window, requests per minute.
 * @returns a function that gives the slot back (never rejects); a slot not given back lapses after 2 minutes.
 * @throws ApiError `rate_limited` (429, `Retry-After: 1`) naming the reason when every slot is taken.
 */
export async function acquireExpensiveSlot(
  orgId: string,
  perOrg: number,
  operation: ExpensiveOperation,
): Promise<() => Promise<void>> {
  const limit = organisationBudget(perOrg).concurrent;
  const token = randomUUID();
  const key = runningKey(orgId);
  const lease = await onLimitStore((store) => store.acquireLease(key, limit, LEASE_MS, token));
  if (!lease.acquired) {
    throw new ApiError(
      "rate_limited",
      `Too many expensive requests of this organisation at once: its limit of ${perOrg} requests a minute runs ${limit} at a time (searches, custom-field sorts, bulk writes, erasures and exports), and this ${operation} was not started. Retry in 1 second`,
      { headers: { "Retry-After": "1" } },
    );
  }
  return () => onLimitStore((store) => store.releaseLease(key, token)).catch(() => undefined);
}

function stateOf(orgId: string, perOrg: number, now: number): OrganisationState {
  let state = budgets.organisations.get(orgId);
  if (!state) {
    state = { perOrg, pendingMs: 0, level: null, readAt: now, lastSeenAt: now };
    budgets.organisations.set(orgId, state);
  }
  state.perOrg = perOrg;
  state.lastSeenAt = now;
  return state;
}

/**
 * Whether the organisation has used its database time for now, as this process last read the shared budget plus
 * what it used since. Only an organisation this process has not seen for 2 minutes costs a store call (its level is
 * read once); otherwise memory answers.
 * @returns null while time is left; otherwise ApiError `rate_limited` (429) with `Retry-After` (seconds until the
 *   budget has refilled above 0) and the reason.
 */
export async function databaseBudgetRefusal(orgId: string, perOrg: number): Promise<ApiError | null> {
  const state = stateOf(orgId, perOrg, Date.now());
  if (state.level === null) {
    state.reading ??= draw(orgId, state, 0).finally(() => {
      state.reading = undefined;
    });
    await state.reading;
  }
  if (state.level === null) return null;
  const rate = refillPerMs(perOrg);
  const level = Math.min(capacity(perOrg), state.level + (Date.now() - state.readAt) * rate) - state.pendingMs;
  if (level > 0) return null;
  const seconds = Math.max(1, Math.ceil(-level / rate / 1000));
  return new ApiError(
    "rate_limited",
    `This organisation has used its database time for now: its limit of ${perOrg} requests a minute allows ${organisationBudget(perOrg).databaseMsPerMinute / 1000} seconds of database work a minute, and its requests used them. Retry in ${seconds} seconds`,
    { headers: { "Retry-After": String(seconds) } },
  );
}

/**
 * Waits until the organisation has database time left ({@link databaseBudgetRefusal}): long work of its own (an
 * export) goes on at the pace its budget refills instead of being refused halfway.
 */
export async function awaitDatabaseBudget(orgId: string, perOrg: number): Promise<void> {
  for (;;) {
    const refusal = await databaseBudgetRefusal(orgId, perOrg);
    if (!refusal) return;
    await new Promise((resolve) => setTimeout(resolve, Number(refusal.headers?.["Retry-After"] ?? 1) * 1000));
  }
}

/** Draws `amount` ms from the organisation's shared budget and keeps the level it reads back; never rejects. */
function draw(orgId: string, state: OrganisationState, amount: number): Promise<void> {
  const { perOrg } = state;
  return onLimitStore((store) =>
    store.drawBudget(databaseKey(orgId), amount, refillPerMs(perOrg), capacity(perOrg)),
  ).then(
    (result) => {
      state.level = result.level;
      state.readAt = Date.now();
    },
    (error: unknown) => {
      state.pendingMs += amount;
      warnThrottled("budget.flush", { message: "database time not charged yet", error: String(error) });
    },
  );
}

/**
 * Charges database time to the organisation's budget: added here at once, and to the shared budget (every instance's)
 * within {@link BUDGET_FLUSH_MS}, whose level this process then reads back.
 * @param databaseMs milliseconds of statements the request ran (`measureDatabaseTime`).
 */
export function chargeDatabaseTime(orgId: string, perOrg: number, databaseMs: number): void {
  if (!(databaseMs > 0)) return;
  const state = stateOf(orgId, perOrg, Date.now());
  state.pendingMs += databaseMs;
  if (!budgets.flusher) {
    budgets.flusher = detached(() => setInterval(() => void flushDatabaseTime(), BUDGET_FLUSH_MS));
    budgets.flusher.unref();
  }
}

/**
 * Draws every organisation's pending database time from its shared budget and reads the level back (one store call
 * per organisation with pending time). Runs every {@link BUDGET_FLUSH_MS}; exported for tests. Never rejects: what a
 * draw could not store stays pending for the next.
 */
export async function flushDatabaseTime(): Promise<void> {
  const now = Date.now();
  const draws: Promise<void>[] = [];
  for (const [orgId, state] of budgets.organisations) {
    if (state.pendingMs === 0) {
      if (now - state.lastSeenAt > IDLE_MS) budgets.organisations.delete(orgId);
      continue;
    }
    const amount = state.pendingMs;
    state.pendingMs = 0;
    draws.push(draw(orgId, state, amount));
  }
  await Promise.all(draws);
}
