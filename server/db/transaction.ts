import { AsyncLocalStorage } from "node:async_hooks";
import { db } from "./client";
import type { PrismaClient } from "./generated/client";

/** The Prisma client inside an interactive transaction. */
export type TransactionClient = Parameters<Parameters<PrismaClient["$transaction"]>[0]>[0];

interface TransactionScope {
  tx: TransactionClient;
  afterCommit: Array<() => void | Promise<void>>;
}

const scope = new AsyncLocalStorage<TransactionScope>();

/** Longest time an interactive transaction may run (ms); a bulk of 500 takes well under a second. */
const TRANSACTION_TIMEOUT_MS = 30_000;
/** Longest wait for a pooled connection to start one (ms). */
const TRANSACTION_MAX_WAIT_MS = 10_000;

/**
 * Runs `fn` in a database transaction. Inside an enclosing {@link transaction} (the idempotency layer runs the whole
 * operation in one, DESIGN.md §5) it joins that one instead of opening a second, so the operation, its outbox events
 * and its idempotency record commit or roll back together. Callbacks registered with {@link afterCommit} run once the
 * outermost transaction has committed, and never when it rolls back.
 * @throws whatever `fn` throws, after rolling back.
 */
export async function transaction<T>(fn: (tx: TransactionClient) => Promise<T>): Promise<T> {
  const current = scope.getStore();
  if (current) return fn(current.tx);
  const afterCommit: TransactionScope["afterCommit"] = [];
  const result = await db().prisma.$transaction((tx) => scope.run({ tx, afterCommit }, () => fn(tx)), {
    timeout: TRANSACTION_TIMEOUT_MS,
    maxWait: TRANSACTION_MAX_WAIT_MS,
  });
  for (const callback of afterCommit) {
    // A failing callback must not turn a committed write into an error response; its own code logs and recovers.
    try {
      await callback();
    } catch (error) {
      console.error(JSON.stringify({ level: "error", message: "after-commit callback failed", error: String(error) }));
    }
  }
  return result;
}

/**
 * Registers `callback` to run after the enclosing {@link transaction} commits (for example handing outbox events to
 * Inngest, DESIGN.md §6). Outside a transaction it runs at once.
 */
export async function afterCommit(callback: () => void | Promise<void>): Promise<void> {
  const current = scope.getStore();
  if (current) current.afterCommit.push(callback);
  else await callback();
}

/**
 * The client to query with: the enclosing transaction's when there is one (so reads see its uncommitted writes and a
 * request never holds two pooled connections at once), else the process-wide client. The transaction client has no
 * `$transaction`; use {@link transaction} for that.
 */
export function currentClient(): PrismaClient {
  return (scope.getStore()?.tx ?? db().prisma) as PrismaClient;
}
