// What a statement may cost (docs/architecture.md, "Budgets: what one request may cost"): PostgreSQL enforces a
// `statement_timeout` chosen by the kind of work (a request, a background job, maintenance), so what the service stops
// waiting for, the database stops running; the time every statement takes is added up per request so an organisation's
// database time can be charged to its budget; a statement that failed alone on a deadlock or a serialisation failure
// is run again.
import { AsyncLocalStorage } from "node:async_hooks";
import pg from "pg";
import { ApiError } from "../errors";

/**
 * Statement timeouts by kind of work, ms (docs/architecture.md, "Budgets: what one request may cost"): `request` for
 * what an API call or a settings page runs (`DB_STATEMENT_TIMEOUT_MS`, default 5,000), `background` for Inngest
 * functions (60,000), `maintenance` for migrations, the demo seed and the admin command (0: none).
 */
export type StatementClass = "request" | "background" | "maintenance";

/** The `background` class's statement timeout, ms. */
export const BACKGROUND_STATEMENT_TIMEOUT_MS = 60_000;

/**
 * How much longer than the statement timeout the client waits before it gives up on the server and cancels the
 * statement itself (ms): PostgreSQL's own timeout fires first; the client's is for a server that stopped answering.
 */
export const CLIENT_GRACE_MS = 2_000;

/** A deadlock (`40P01`) or serialisation failure (`40001`): retried, boundedly, where the whole unit can run again. */
export const RETRYABLE_SQLSTATES: ReadonlySet<string> = new Set(["40P01", "40001"]);

/** How many times a statement or transaction that failed with a {@link RETRYABLE_SQLSTATES} code runs in all. */
export const RETRY_ATTEMPTS = 4;

interface BudgetScope {
  /** The statement timeout the work runs under, ms; 0 = none. */
  timeoutMs: number;
  /** Where the statements' durations are added, when the caller measures them. */
  account?: { ms: number };
}

// One per process, as the database pool is: Next.js bundles copies of this module beside dist/serve.js's.
const holder = globalThis as unknown as {
  __crmStatementBudget?: AsyncLocalStorage<BudgetScope>;
  __crmRequestStatementTimeoutMs?: number;
};
holder.__crmStatementBudget ??= new AsyncLocalStorage<BudgetScope>();
const scope = holder.__crmStatementBudget;

/** The statement timeout of the `request` class, ms (set by server/db/client.ts from `DB_STATEMENT_TIMEOUT_MS`). */
function requestTimeoutMs(): number {
  return holder.__crmRequestStatementTimeoutMs ?? 5_000;
}

/**
 * Sets the `request` class's statement timeout for this process (ms, ≥ 1). Called once by the database client from
 * `DB_STATEMENT_TIMEOUT_MS` (server/env.ts).
 */
export function setRequestStatementTimeout(ms: number): void {
  holder.__crmRequestStatementTimeoutMs = ms;
}

/** The statement timeout of a class, ms; 0 = none. */
export function statementTimeoutOf(kind: StatementClass): number {
  if (kind === "request") return requestTimeoutMs();
  return kind === "background" ? BACKGROUND_STATEMENT_TIMEOUT_MS : 0;
}

/**
 * Runs `fn` with every statement it issues (awaited or not) under the statement timeout of `kind`
 * ({@link StatementClass}), outside any request's measurement: background and maintenance work started by a request
 * (a re-index after its commit) is not its cost. Without it statements run under the `request` class.
 */
export function withStatementClass<T>(kind: StatementClass, fn: () => Promise<T>): Promise<T> {
  // Awaited inside: Prisma's promises are lazy, and one handed out of the scope would run its query outside it.
  return scope.run({ timeoutMs: statementTimeoutOf(kind) }, async () => await fn());
}

/**
 * Runs `fn` and adds up the time its database statements took (ms, wall time from send to answer, summed over
 * statements that overlap): what a request charges to its organisation's database-time budget.
 * @returns what `fn` returned and the milliseconds.
 */
export async function measureDatabaseTime<T>(fn: () => Promise<T>): Promise<{ result: T; databaseMs: number }> {
  const account = { ms: 0 };
  const result = await scope.run(
    { timeoutMs: scope.getStore()?.timeoutMs ?? requestTimeoutMs(), account },
    async () => await fn(),
  );
  return { result, databaseMs: account.ms };
}

/**
 * The database time the current measurement ({@link measureDatabaseTime}) has added up so far, ms; 0 outside one.
 */
export function databaseTimeSoFar(): number {
  return scope.getStore()?.account?.ms ?? 0;
}

/**
 * The SQLSTATE of a database failure as it reaches services: a Prisma error wrapping the driver adapter's
 * (`meta.driverAdapterError.cause.originalCode`), or `pg`'s own error (`code`).
 * @returns e.g. `57014`, or undefined when `error` is not a database failure with a code.
 */
export function sqlState(error: unknown): string | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 5 && current && typeof current === "object"; depth++) {
    const value = current as {
      code?: unknown;
      severity?: unknown;
      originalCode?: unknown;
      meta?: { driverAdapterError?: { cause?: { originalCode?: unknown } } };
      cause?: unknown;
    };
    const adapterCode = value.meta?.driverAdapterError?.cause?.originalCode;
    if (typeof adapterCode === "string") return adapterCode;
    if (typeof value.originalCode === "string") return value.originalCode;
    if (typeof value.code === "string" && typeof value.severity === "string") return value.code;
    current = value.cause;
  }
  return undefined;
}

/** Whether `error` is a deadlock or serialisation failure ({@link RETRYABLE_SQLSTATES}) that a retry may clear. */
export function retryableDatabaseFailure(error: unknown): boolean {
  const state = sqlState(error);
  return state !== undefined && RETRYABLE_SQLSTATES.has(state);
}

// 57014: cancelled (the statement timeout); 55P03: a lock not available in time; 25P03: an idle transaction ended.
const TIMEOUT_SQLSTATES = new Set(["57014", "55P03", "25P03"]);
// Prisma's: a transaction that could not start within its wait (the pool busy) or ran past its own time limit.
const PRISMA_TRANSACTION_TIMEOUT =
  /Unable to start a transaction in the given time|expired transaction|Transaction already closed/;

/**
 * The answer a database failure gets instead of a 500 (docs/api-contract.md §7): a statement the database cancelled at
 * its timeout, a client-side timeout, a lock or a pooled connection not had in time, or a transaction past its time
 * are 503 `timeout` with `Retry-After: 5`; a deadlock or serialisation failure that outlived the retries is 409
 * `conflict` with `Retry-After: 1`.
 * @returns the ApiError, or undefined when `error` is none of these (a bug or an outage: the caller's 500).
 */
export function databaseRefusal(error: unknown): ApiError | undefined {
  const state = sqlState(error);
  if (state && RETRYABLE_SQLSTATES.has(state)) {
    return new ApiError(
      "conflict",
      "Another request changed the same records at the same moment; retry after the seconds in Retry-After",
      { headers: { "Retry-After": "1" } },
    );
  }
  const message = error instanceof Error ? error.message : "";
  if (
    (state && TIMEOUT_SQLSTATES.has(state)) ||
    message.includes("Query read timeout") ||
    PRISMA_TRANSACTION_TIMEOUT.test(message)
  ) {
    const budget = requestTimeoutMs() / 1000;
    return new ApiError(
      "timeout",
      `The request ran longer than its budget (${budget} s per database statement) and was cancelled; its changes were rolled back. Retry after the seconds in Retry-After, or narrow the request`,
      { headers: { "Retry-After": "5" } },
    );
  }
  return undefined;
}

/** A pause before the `attempt`-th retry (1-based): 10–40 ms, doubling, with full jitter, so racers fall apart. */
export function retryPause(attempt: number): Promise<void> {
  const ms = Math.random() * 10 * 2 ** Math.min(attempt, 4);
  return new Promise((resolve) => setTimeout(resolve, ms));
}

interface CancelConnection {
  on(event: string, listener: () => void): void;
  connect(port: number | string, host?: string): void;
  cancel(processID: number, secretKey: number): void;
  end(): void;
}

type QueryConfig = { text: string; query_timeout?: number; [key: string]: unknown };
type Callback = (error: Error | null, result?: unknown) => void;

/** What the pool's clients need to know: whether they manage the session timeout, and the client-side bound. */
export interface BudgetedClientOptions {
  /**
   * Whether the server can be told a statement timeout per session (`SET statement_timeout`): PostgreSQL reached
   * directly. Not the embedded database (PGlite runs no timers) nor a transaction-mode pooler (a session setting
   * would stay on a server connection another client gets next).
   */
  manageTimeouts: boolean;
  /** Least time the client waits for an answer before giving up, ms, whatever the class (the embedded database). */
  minimumClientTimeoutMs: number;
}

/**
 * A `pg` client class for the pool (`Client` option of `pg.Pool`) that runs every statement under its class's
 * statement timeout (setting the session's `statement_timeout` when the class changes), gives up on the server
 * {@link CLIENT_GRACE_MS} after that timeout and then cancels the statement on the server (a cancel request, as
 * `psql`'s Ctrl-C sends), adds each statement's duration to the current measurement, and runs a statement outside a
 * transaction again when it alone failed on a deadlock or serialisation failure (at most {@link RETRY_ATTEMPTS} runs).
 */
export function budgetedClientClass(options: BudgetedClientOptions): typeof pg.Client {
  return class BudgetedClient extends pg.Client {
    /** The session's `statement_timeout` as last set, ms; undefined when unknown (after a rollback undid a SET). */
    sessionTimeoutMs: number | undefined = options.manageTimeouts ? requestTimeoutMs() : undefined;
    inTransaction = false;
    setInTransaction = false;

    // biome-ignore lint/suspicious/noExplicitAny: pg's overloads; every form is handled below.
    override query(config: any, values?: any, callback?: any): any {
      if (typeof values === "function") {
        callback = values;
        values = undefined;
      }
      // Submittables (cursors, streams) keep pg's own handling.
      if (config && typeof config === "object" && typeof config.submit === "function") {
        return super.query(config, values, callback);
      }
      const promise = this.run(typeof config === "string" ? { text: config } : { ...config }, values);
      if (typeof callback !== "function") return promise;
      promise.then(
        (result) => (callback as Callback)(null, result),
        (error: Error) => (callback as Callback)(error),
      );
      return undefined;
    }

    async run(config: QueryConfig, values: unknown): Promise<unknown> {
      const current = scope.getStore();
      const timeoutMs = current?.timeoutMs ?? requestTimeoutMs();
      if (options.manageTimeouts && timeoutMs !== this.sessionTimeoutMs) {
        await super.query(`SET statement_timeout = ${Math.max(0, Math.floor(timeoutMs))}`);
        this.sessionTimeoutMs = timeoutMs;
        if (this.inTransaction) this.setInTransaction = true;
      }
      const keyword = /^\s*(\w+)/.exec(config.text)?.[1]?.toUpperCase();
      const clientTimeout = timeoutMs > 0 ? Math.max(timeoutMs + CLIENT_GRACE_MS, options.minimumClientTimeoutMs) : 0;
      if (clientTimeout > 0) config.query_timeout = clientTimeout;
      const autocommit = !this.inTransaction && keyword !== "BEGIN";
      for (let attempt = 1; ; attempt++) {
        const started = performance.now();
        try {
          const result = await super.query(config as never, values as never);
          this.track(keyword);
          return result;
        } catch (error) {
          this.track(keyword, error);
          if (error instanceof Error && error.message === "Query read timeout") this.cancelBackend();
          if (!autocommit || attempt >= RETRY_ATTEMPTS || !retryableDatabaseFailure(error)) throw error;
          await retryPause(attempt);
        } finally {
          if (current?.account) current.account.ms += performance.now() - started;
        }
      }
    }

    /** Follows the session's transaction state from the statements that change it. */
    track(keyword: string | undefined, error?: unknown): void {
      if (keyword === "BEGIN" || keyword === "START") {
        if (!error) this.inTransaction = true;
        return;
      }
      if (keyword === "COMMIT" || keyword === "ROLLBACK" || keyword === "END" || keyword === "ABORT") {
        // A rollback (or a failed commit) undoes a SET made inside the transaction: the session's value is unknown.
        if (this.setInTransaction && (keyword !== "COMMIT" || error)) this.sessionTimeoutMs = undefined;
        this.inTransaction = false;
        this.setInTransaction = false;
      }
    }

    /**
     * Asks the server to cancel the statement this connection runs (a CancelRequest on a connection of its own, as
     * `pg`'s own cancel does). Best effort: the server may already be gone, which is why the client stopped waiting.
     */
    cancelBackend(): void {
      const self = this as unknown as {
        processID: number | null;
        secretKey: number | null;
        host: string;
        port: number;
      };
      if (self.processID === null || self.secretKey === null) return;
      // pg's Connection can do both; its type declarations name neither.
      const connection = new pg.Connection() as unknown as CancelConnection;
      connection.on("error", () => undefined);
      connection.on("connect", () => {
        connection.cancel(self.processID as number, self.secretKey as number);
        setTimeout(() => connection.end(), 1_000).unref();
      });
      if (self.host?.startsWith("/")) connection.connect(`${self.host}/.s.PGSQL.${self.port}`);
      else connection.connect(self.port, self.host);
    }
  };
}
