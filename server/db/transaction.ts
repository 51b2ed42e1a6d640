// The one way services reach the database (docs/architecture.md, "Layers and the request pipeline"): `prisma()` is the
// enclosing transaction's client inside `transaction()`, else the process-wide one; `outsideTransaction()` is for the
// few writes that must not join a request's transaction (audit rows, after-commit hand-overs).
import { AsyncLocalStorage } from "node:async_hooks";
import { log } from "../observability/logger";
import { db } from "./client";
import type { PrismaClient } from "./generated/client";

/** The Prisma client inside an interactive transaction. */
export type TransactionClient = Parameters<Parameters<PrismaClient["$transaction"]>[0]>[0];

interface TransactionScope {
  tx: TransactionClient;
  afterCommit: Array<() => void | Promise<void>>;
  /** Values kept for the transaction's lifetime by {@link transactionLocal}. */
  locals: Map<symbol, unknown>;
}

const scope = new AsyncLocalStorage<TransactionScope>();

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
  return (scope.getStore()?.tx ?? db().prisma) as PrismaClient;
}

/**
 * Runs `fn` in a database transaction. Inside an enclosing {@link transaction} (the idempotency layer runs the whole
 * operation in one, docs/architecture.md, "Idempotency") it joins that one instead of opening a second, so the
 * operation, its outbox events and its idempotency record commit or roll back together. Callbacks registered with
 * {@link afterCommit} run once the outermost transaction has committed, and never when it rolls back.
 * @throws whatever `fn` throws, after rolling back.
 */
export async function transaction<T>(fn: (tx: TransactionClient) => Promise<T>): Promise<T> {
  const current = scope.getStore();
  if (current) return fn(current.tx);
  const afterCommit: TransactionScope["afterCommit"] = [];
  const result = await db().prisma.$transaction(
    (tx) => scope.run({ tx, afterCommit, locals: new Map() }, () => fn(tx)),
    { timeout: TRANSACTION_TIMEOUT_MS, maxWait: TRANSACTION_MAX_WAIT_MS },
  );
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
  const current = scope.getStore();
  if (!current) return transaction(() => fn());
  const name = `sp_${++savepoints}`;
  await current.tx.$executeRawUnsafe(`SAVEPOINT ${name}`);
  try {
    const result = await fn();
    await current.tx.$executeRawUnsafe(`RELEASE SAVEPOINT ${name}`);
    return result;
  } catch (error) {
    await current.tx.$executeRawUnsafe(`ROLLBACK TO SAVEPOINT ${name}`);
    throw error;
  }
}

/**
 * Registers `callback` to run after the enclosing {@link transaction} commits (for example handing outbox events to
 * Inngest, docs/architecture.md, "Webhooks and the outbox"). Outside a transaction it runs at once.
 */
export async function afterCommit(callback: () => void | Promise<void>): Promise<void> {
  const current = scope.getStore();
  if (current) current.afterCommit.push(callback);
  else await callback();
}

/**
 * A value kept for the lifetime of the enclosing transaction: the first call in a transaction creates it with `init`,
 * later calls in the same transaction get the same value (e.g. the events to hand over after its commit). Outside a
 * transaction each call gets a new value.
 */
export function transactionLocal<T>(key: symbol, init: () => T): T {
  const locals = scope.getStore()?.locals;
  if (!locals) return init();
  if (!locals.has(key)) locals.set(key, init());
  return locals.get(key) as T;
}

/**
 * Runs `fn` outside any enclosing transaction, so that {@link prisma} inside it is the process-wide client: for writes
 * that must stand whether the request's transaction commits or not, or that run after it (audit rows, after-commit
 * stamps), and for timers started inside a request, which inherit its context.
 */
export function outsideTransaction<T>(fn: () => T): T {
  return scope.exit(fn);
}
