import { replaceUnstorableText } from "../../contract/storable";
import { outsideTransaction, prisma } from "../../db/transaction";
import { log } from "../../observability/logger";

/** One audited API call (docs/api-contract.md §1): who, what, outcome and duration in ms. */
export interface AuditEntry {
  orgId: string | null;
  apiKeyId: string | null;
  isTest: boolean;
  requestId: string;
  method: string;
  path: string;
  query: string | null;
  status: number;
  errorCode: string | null;
  durationMs: number;
  ip: string | null;
  userAgent: string | null;
  /** When the call was answered; kept so a batch retried after an outage keeps the real time. */
  createdAt: Date;
}

/** Longest wait of a row of an organisation's request for its batch, ms. */
const FLUSH_INTERVAL_MS = 250;
/**
 * Longest wait of a row without an organisation (a request without a valid key, a refused flood's) for its batch, ms:
 * longer, so requests the service refuses cost the database at most one `INSERT` a second per process (and one per
 * {@link FLUSH_SIZE} rows), however fast they come.
 */
const ANONYMOUS_FLUSH_INTERVAL_MS = 1_000;
const FLUSH_SIZE = 200;
/** Rows kept in memory for a retry while the database is unreachable; beyond this the oldest are dropped. */
const MAX_RETAINED = 10_000;
const RETRY_INTERVAL_MS = 1_000;

// One queue per process: Next may instantiate this module in more than one bundle.
const holder = globalThis as unknown as { __crmAudit?: AuditState };
holder.__crmAudit ??= { queue: [], timer: undefined, flushing: Promise.resolve() };
const state = holder.__crmAudit;
interface AuditState {
  queue: AuditEntry[];
  timer: NodeJS.Timeout | undefined;
  /** When the scheduled batch is due (epoch ms); a row that may not wait that long brings it forward. */
  due?: number;
  /** Whether the scheduled batch is the retry of a refused one: rows do not bring a retry forward. */
  retrying?: boolean;
  /** The chain of batch writes; resolves when the last one started is done. */
  flushing: Promise<void>;
  /** Resolves when the rows queued now are stored; created on demand by {@link auditWritten}. */
  next?: { promise: Promise<void>; resolve: () => void };
}

// NUL and lone surrogates come straight from request paths, queries and user agents; the jsonb the batch travels as
// cannot hold them, and one such row would fail its whole batch again and again.
function storable(text: string | null): string | null {
  return text === null ? null : replaceUnstorableText(text);
}

function schedule(delayMs: number): void {
  const due = Date.now() + delayMs;
  if (state.timer !== undefined && (state.retrying || (state.due ?? 0) <= due)) return;
  clearTimeout(state.timer);
  state.due = due;
  state.timer = setTimeout(() => void flushAudit(), delayMs);
}

/** Most characters of a stored query string; a longer one is cut. */
const QUERY_MAX_LENGTH = 2048;

/**
 * The query string an audit row keeps (docs/api-contract.md §1.2): the parsed query form-encoded as `URLSearchParams`
 * writes it, at most 2,048 characters; null when there is none. A request without an authenticated organisation
 * keeps the parameter names only (`email&limit`): no organisation's erasure (docs/api-contract.md §4.16) can reach
 * such a row, so it never holds a value a client sent.
 */
export function auditQuery(query: ReadonlyMap<string, string>, authenticated: boolean): string | null {
  if (query.size === 0) return null;
  const text = authenticated
    ? new URLSearchParams([...query]).toString()
    : [...query.keys()].map((name) => new URLSearchParams([[name, ""]]).toString().slice(0, -1)).join("&");
  return text.slice(0, QUERY_MAX_LENGTH);
}

/**
 * Queues an audit row (text a database cannot hold, NUL or a lone surrogate, replaced by U+FFFD); rows are written in
 * batches (one `INSERT` per 200 rows, else within 250 ms, or 1 s for rows without an organisation), so auditing adds
 * no database round trip to the response path (docs/api-contract.md §1.2) and a flood of refused requests costs the
 * database about one `INSERT` a second (docs/architecture.md, "API keys and the key cache"). A batch the database
 * refuses is kept (up to 10,000 rows) and retried every second, logged to stderr, never surfaced to the caller.
 */
export function recordAudit(entry: AuditEntry): void {
  state.queue.push({
    ...entry,
    method: storable(entry.method) as string,
    path: storable(entry.path) as string,
    query: storable(entry.query),
    userAgent: storable(entry.userAgent),
  });
  if (state.queue.length >= FLUSH_SIZE) void flushAudit();
  else schedule(entry.orgId === null ? ANONYMOUS_FLUSH_INTERVAL_MS : FLUSH_INTERVAL_MS);
}

/**
 * Resolves once every row queued so far is stored, keeping the batching: it waits for the scheduled batch rather
 * than forcing one. The API route hands it to Next's `after()`, so a graceful shutdown (SIGTERM to `next start`)
 * and serverless hosts wait for it.
 */
export function auditWritten(): Promise<void> {
  if (state.queue.length === 0) return state.flushing;
  if (!state.next) {
    const next: Partial<NonNullable<AuditState["next"]>> = {};
    next.promise = new Promise<void>((done) => {
      next.resolve = done;
    });
    state.next = next as NonNullable<AuditState["next"]>;
  }
  return state.next.promise;
}

/** Writes every queued row now; resolves when they are stored. Used by tests and the benchmark. */
export function flushAudit(): Promise<void> {
  clearTimeout(state.timer);
  state.timer = undefined;
  state.retrying = false;
  const batch = state.queue.splice(0, state.queue.length);
  const waiting = state.next;
  state.next = undefined;
  if (batch.length === 0) {
    if (waiting) void state.flushing.then(waiting.resolve);
    return state.flushing;
  }
  state.flushing = state.flushing.then(async () => {
    try {
      // Never in a request's transaction (a timer may inherit a request's async context). One statement over a JSON
      // array: Prisma's createMany costs several times more CPU per batch (bench: audit was ~10% of GET throughput).
      await outsideTransaction(() =>
        prisma().$executeRawUnsafe(
          `INSERT INTO "AuditLog" ("orgId", "apiKeyId", "requestId", "method", "path", "query", "status", "errorCode",
           "durationMs", "ip", "userAgent", "isTest", "createdAt")
         SELECT a."orgId", a."apiKeyId", a."requestId", a."method", a."path", a."query", a."status", a."errorCode",
           a."durationMs", a."ip", a."userAgent", a."isTest", a."createdAt"::timestamp
         FROM jsonb_to_recordset($1::jsonb) AS a("orgId" text, "apiKeyId" text, "requestId" text, "method" text,
           "path" text, "query" text, "status" int, "errorCode" text, "durationMs" int, "ip" text, "userAgent" text,
           "isTest" boolean, "createdAt" text)`,
          JSON.stringify(batch),
        ),
      );
    } catch (error) {
      // Kept for a retry so an outage (or a database not open yet) does not erase the record of the calls.
      state.queue.unshift(...batch);
      const dropped = state.queue.length - MAX_RETAINED;
      if (dropped > 0) state.queue.splice(0, dropped);
      log().error(
        { rows: batch.length, dropped: Math.max(dropped, 0), err: error },
        "audit batch not stored; retrying",
      );
      if (state.timer === undefined) {
        state.retrying = true;
        state.due = Date.now() + RETRY_INTERVAL_MS;
        state.timer = setTimeout(() => void flushAudit(), RETRY_INTERVAL_MS);
      }
    }
  });
  if (waiting) void state.flushing.then(waiting.resolve);
  return state.flushing;
}
