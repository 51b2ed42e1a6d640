// The one way services reach the database (docs/architecture.md, "Layers and the request pipeline"): `prisma()` is the
// enclosing transaction's client inside `transaction()`, else the process-wide one; `outsideTransaction()` is for the
// few writes that must not join a request's transaction (audit rows, after-commit hand-overs).
import { AsyncLocalStorage } from "node:async_hooks";
import { log } from "../observability/logger";
import { db, guardSecondConnections } from "./client";
import type { PrismaClient } from "./generated/client";
import { RETRY_ATTEMPTS, retryableDatabaseFailure, retryPause } from "./statement-budget";

/** The Prisma client inside an interactive transaction. */
export type TransactionClient = Parameters<Parameters<PrismaClient["$transaction"]>[0]>[0];

interface TransactionScope {
  tx: TransactionClient;
  /** True from BEGIN until the transaction commits or rolls back. */
  open: boolean;
  afterCommit: Array<() => void | Promise<void>>;
  /** Values kept for the transaction's lifetime by {@link transactionLocal}. */
  locals: Map<symbol, unknown>;
}

/** What an async context holds: a transaction, or work {@link outsideTransaction} started inside one. */
type Scope = TransactionScope | { outside: TransactionScope };

// One per process, not per copy of this module: Next.js bundles its own copies beside dist/serve.js's, and a
// better-auth instance made by one copy (authFor keeps them process-wide) must see the transactions another copy opens.
const holder = globalThis as unknown as { __crmTransactionScope?: AsyncLocalStorage<Scope> };
holder.__crmTransactionScope ??= new AsyncLocalStorage<Scope>();
const scope = holder.__crmTransactionScope;

/** The transaction this async context runs in, while it is open: not inside {@link outsideTransaction}. */
function currentTransaction(): TransactionScope | undefined {
  const store = scope.getStore();
  return store && "tx" in store && store.open ? store : undefined;
}

// One connection per request (docs/architecture.md, "Data and migrations"): a query on the process-wide pool while a
// transaction of the same async context is still open would hold a second connection, whether it bypassed prisma()
// or ran in outsideTransaction() and is awaited by the transaction. The embedded database's pool has one connection,
// so that query would wait for itself; the check makes it fail at once, on every database.
guardSecondConnections(() => {
  const store = scope.getStore();
  const held = store && ("tx" in store ? store : store.outside);
  if (!held?.open) return null;
  return "outside" in (store ?? {})
    ? "outsideTransaction() called while the transaction is open"
    : "a query on the process-wide client inside transaction()";
});

/** Longest time an interactive transaction may run (ms); a bulk of 500 takes well under a second. */
const TRANSACTION_TIMEOUT_MS = 30_000;
/** Longest wait for a pooled connection to start one (ms). */
const TRANSACTION_MAX_WAIT_MS = 10_000;

/**
 * The client to query with: the enclosing {@link transaction}'s when there is one (so reads see its uncommitted writes
 * and a request never holds two pooled connections at once), else the process-wide client (`DATABASE_URL`, or the
 * embedded database). The transaction client has no `$transaction`; use {@link transaction} for that.
 */
export function prisma(): PrismaClient {
  return (currentTransaction()?.tx ?? db().prisma) as PrismaClient;
}

/**
 * Runs `fn` in a database transaction. Inside an enclosing {@link transaction} (the idempotency layer runs the whole
 * operation in one, docs/architecture.md, "Idempotency") it joins that one instead of opening a second, so the
 * operation, its outbox events and its idempotency record commit or roll back together. Callbacks registered with
 * {@link afterCommit} run once the outermost transaction has committed, and never when it rolls back.
 *
 * When the outermost transaction fails on a deadlock (`40P01`) or a serialisation failure (`40001`), which PostgreSQL
 * resolves by rolling one side back, it runs `fn` again from the start, at most 4 runs in all with a jittered pause
 * between them (docs/architecture.md, "Budgets: what one request may cost"): `fn` must keep its effects inside the
 * transaction ({@link afterCommit} for the rest), as every caller does.
 * @throws whatever `fn` throws, after rolling back; a deadlock or serialisation failure once the runs are used up.
 */
export async function transaction<T>(fn: (tx: TransactionClient) => Promise<T>): Promise<T> {
  const current = currentTransaction();
  if (current) return fn(current.tx);
  for (let attempt = 1; ; attempt++) {
    try {
      return await runTransaction(fn);
    } catch (error) {
      if (attempt >= RETRY_ATTEMPTS || !retryableDatabaseFailure(error)) throw error;
      await retryPause(attempt);
    }
  }
}

async function runTransaction<T>(fn: (tx: TransactionClient) => Promise<T>): Promise<T> {
  const afterCommit: TransactionScope["afterCommit"] = [];
  let opened: TransactionScope | undefined;
  let result: T;
  try {
    result = await db().prisma.$transaction(
      (tx) => {
        opened = { tx, open: true, afterCommit, locals: new Map() };
        return scope.run(opened, () => fn(tx));
      },
      { timeout: TRANSACTION_TIMEOUT_MS, maxWait: TRANSACTION_MAX_WAIT_MS },
    );
  } finally {
    // Work this transaction started and did not wait for (timers, unawaited promises) now queries on its own.
    if (opened) opened.open = false;
  }
  for (const callback of afterCommit) {
    // A failing callback must not turn a committed write into an error response; its own code logs and recovers.
    try {
      await callback();
    } catch (error) {
      log().error({ err: error }, "after-commit callback failed");
    }
  }
  return result;
}

let savepoints = 0;

/**
 * Runs `fn` so that its writes can be undone alone (partial bulk retries): inside an enclosing
 * {@link transaction}, between `SAVEPOINT` and `RELEASE`, rolled back to the savepoint when `fn` throws; outside one,
 * in a transaction of its own.
 * @throws whatever `fn` throws, after undoing its writes.
 */
export async function savepoint<T>(fn: () => Promise<T>): Promise<T> {
  const current = currentTransaction();
  if (!current) return transaction(() => fn());
  const name = `sp_${++savepoints}`;
  await current.tx.$executeRawUnsafe(`SAVEPOINT ${name}`);
  try {
    const result = await fn();
    await current.tx.$executeRawUnsafe(`RELEASE SAVEPOINT ${name}`);
    return result;
  } catch (error) {
    // A deadlock or serialisation failure is the whole transaction's to retry ({@link transaction}), not one item's:
    // rolled back to the savepoint it would surface as that item's failure.
    if (retryableDatabaseFailure(error)) throw error;
    await current.tx.$executeRawUnsafe(`ROLLBACK TO SAVEPOINT ${name}`);
    throw error;
  }
}

/**
 * Registers `callback` to run after the enclosing {@link transaction} commits (for example handing outbox events to
 * Inngest, docs/architecture.md, "Webhooks and the outbox"). Outside a transaction it runs at once.
 */
export async function afterCommit(callback: () => void | Promise<void>): Promise<void> {
  const current = currentTransaction();
  if (current) current.afterCommit.push(callback);
  else await callback();
}

/**
 * A value kept for the lifetime of the enclosing transaction: the first call in a transaction creates it with `init`,
 * later calls in the same transaction get the same value (e.g. the events to hand over after its commit). Outside a
 * transaction each call gets a new value.
 */
export function transactionLocal<T>(key: symbol, init: () => T): T {
  const locals = currentTransaction()?.locals;
  if (!locals) return init();
  if (!locals.has(key)) locals.set(key, init());
  return locals.get(key) as T;
}

/**
 * Runs `fn` outside any enclosing transaction, so that {@link prisma} inside it is the process-wide client: for work
 * that runs after the request's transaction has ended (after-commit stamps, timers started inside a request, which
 * inherit its context). While that transaction is still open its queries are refused with SecondConnectionError
 * (server/db/client.ts): they would need a second connection while the transaction holds one, so such work waits for
 * the transaction to end ({@link afterCommit}) or is done before it starts.
 */
export function outsideTransaction<T>(fn: () => T): T {
  const store = scope.getStore();
  if (!store) return fn();
  return scope.run({ outside: "tx" in store ? store : store.outside }, fn);
}
