import { PrismaPg } from "@prisma/adapter-pg";
import { env } from "../env";
import { log } from "../observability/logger";
import type { EmbeddedDatabase } from "./embedded";
import { readLiveEmbeddedLock } from "./embedded-lock";
import { PrismaClient } from "./generated/client";
import { budgetedClientClass, setRequestStatementTimeout } from "./statement-budget";

/** A connected database: the Prisma client, which engine backs it, its URL, and how to release it. */
export interface Database {
  prisma: PrismaClient;
  /**
   * `postgres` when `DATABASE_URL` is set, `pglite` for the embedded default (docs/architecture.md,
   * "The embedded database").
   */
  kind: "postgres" | "pglite";
  /** The PostgreSQL URL it is reached at: `DATABASE_URL`, or the embedded database's loopback socket. */
  url: string;
  close(): Promise<void>;
}

// Named statements are parsed once per connection, then only bound and executed: PostgreSQL skips parsing (and, after
// a few runs, planning) the hot path's queries (docs/architecture.md, "Memory and speed"). Names are handed out to
// the first 500 distinct texts only, so texts that vary (IN lists of any length) cannot grow every connection's
// statement cache without bound; later texts run unnamed, as before.
const STATEMENT_NAMES_MAX = 500;
const statementNames = new Map<string, string>();
function statementName(query: { sql: string }): string | undefined {
  const known = statementNames.get(query.sql);
  if (known !== undefined || statementNames.size >= STATEMENT_NAMES_MAX) return known;
  const name = `crm_${statementNames.size}`;
  statementNames.set(query.sql, name);
  return name;
}

// Whether each pooled connection is a PostgreSQL session of its own, which keeps what is set on it (named statements,
// the statement timeout). Not on the embedded database, whose socket runs every connection in one PostgreSQL session
// (one connection's statement names would collide with another's), nor behind a transaction-mode pooler, which marks
// its URL with Prisma's `pgbouncer=true` and may hand each transaction a different server connection.
function ownSessions(options: { url: string; kind?: Database["kind"] }): boolean {
  if ((options.kind ?? "postgres") !== "postgres") return false;
  try {
    return new URL(options.url).searchParams.get("pgbouncer") !== "true";
  } catch {
    return false;
  }
}

/**
 * Thrown when a query would take a second pooled connection while the async context that starts it already holds one
 * in an open transaction of server/db/transaction.ts (docs/architecture.md, "Data and migrations"): on the embedded database (a pool of one) it would wait for itself until the 5 s connection timeout,
 * on PostgreSQL it commits apart from the transaction and can wait for the transaction's own row locks.
 */
export class SecondConnectionError extends Error {
  constructor(reason: string) {
    super(
      `A query needed a second database connection while its transaction holds one (${reason}): use prisma() inside the transaction, or run the query after it ends`,
    );
    this.name = "SecondConnectionError";
  }
}

/** Says why the pool may not hand this async context a connection now, or null when it may. */
type ConnectionCheck = () => string | null;

// Process-wide, as the database is: the copy of this module that opened the pool may not be the one whose
// transaction.ts installed the check (Next.js bundles copies of both beside dist/serve.js's).
const guardHolder = globalThis as unknown as { __crmConnectionCheck?: ConnectionCheck };

/**
 * Installs the check every query on a client of {@link openDatabase} runs before it takes a pooled connection
 * (transaction.ts installs it: "a transaction of this async context is open"). The transaction's own queries run on
 * its connection and are not checked.
 */
export function guardSecondConnections(check: ConnectionCheck): void {
  guardHolder.__crmConnectionCheck = check;
}

// The pool methods that take a connection: a statement on its own, or the start of an interactive transaction.
const POOL_METHODS = ["queryRaw", "executeRaw", "executeScript", "startTransaction"] as const;
const reported = new Set<string>();

/**
 * Wraps the driver adapter's pool methods with the connection check: a violation throws
 * {@link SecondConnectionError}, except in production on PostgreSQL (where the query works, only apart from the
 * transaction), which logs it once per call site and lets it run.
 */
function guardPool(factory: PrismaPg, kind: Database["kind"]): PrismaPg {
  const lenient = kind === "postgres" && env().NODE_ENV === "production";
  const connect = factory.connect.bind(factory);
  factory.connect = async () => {
    const adapter = await connect();
    for (const name of POOL_METHODS) {
      const method = (adapter[name] as (...args: unknown[]) => Promise<unknown>).bind(adapter);
      (adapter as unknown as Record<string, unknown>)[name] = (...args: unknown[]) => {
        const reason = guardHolder.__crmConnectionCheck?.();
        if (reason) {
          const error = new SecondConnectionError(reason);
          if (!lenient) return Promise.reject(error);
          const site = error.stack?.split("\n").slice(2, 8).join("\n") ?? "";
          if (!reported.has(site)) {
            reported.add(site);
            log().error({ err: error }, "second database connection inside a transaction");
          }
        }
        return method(...args);
      };
    }
    return adapter;
  };
  return factory;
}

/**
 * Opens a Prisma client on a PostgreSQL URL through `@prisma/adapter-pg`: the one access path in every mode, since the
 * embedded database is served over the wire protocol too (docs/architecture.md, "The embedded database"). Connection
 * attempts give up after 5 s. On PostgreSQL every statement runs under a `statement_timeout` (`DB_STATEMENT_TIMEOUT_MS`
 * for requests, longer for background jobs, none for maintenance: server/db/statement-budget.ts), and the client gives
 * up 2 s after it and cancels the statement; on the embedded database, which cannot time a statement out, the client
 * waits at least 15 s (docs/architecture.md, "Budgets: what one request may cost").
 */
export function openDatabase(options: { url: string; kind?: Database["kind"] }): Database {
  const kind = options.kind ?? "postgres";
  const requestTimeoutMs = env().DB_STATEMENT_TIMEOUT_MS;
  setRequestStatementTimeout(requestTimeoutMs);
  // A transaction-mode pooler hands each transaction any server connection: a session setting would leak to another
  // client, so there the timeout is the role's (ALTER ROLE … SET statement_timeout; README, "Deploy").
  const manageTimeouts = ownSessions(options);
  const adapter = guardPool(
    new PrismaPg(
      {
        connectionString: options.url,
        connectionTimeoutMillis: 5_000,
        Client: budgetedClientClass({ manageTimeouts, minimumClientTimeoutMs: kind === "pglite" ? 15_000 : 0 }),
        ...(manageTimeouts
          ? {
              statement_timeout: requestTimeoutMs,
              // A transaction left open by a crashed step must not hold its row locks for long.
              idle_in_transaction_session_timeout: 60_000,
              // One statement, one core: parallel workers would let one tenant's scan take every core of the database
              // server from the others (docs/architecture.md, "Budgets: what one request may cost").
              options: "-c max_parallel_workers_per_gather=0",
            }
          : {}),
        // The embedded database's socket runs every connection in one PostgreSQL session and interleaves their
        // protocol messages outside a transaction, so two connections' statements could meet (a 500, or the other
        // query's rows). PGlite runs one query at a time anyway: one connection costs nothing and keeps them apart.
        max: kind === "pglite" ? 1 : 10,
      },
      manageTimeouts
        ? // An undefined name runs the statement unnamed (pg), which the adapter's type does not spell out.
          { statementNameGenerator: statementName as (query: { sql: string }) => string }
        : undefined,
    ),
    kind,
  );
  // "minimal": Prisma otherwise records a stack trace at every query (`new Error()`), only to point at the calling line
  // in its error messages; our errors reach users as the envelope and the logs as the request id and the cause.
  const prisma = new PrismaClient({ adapter, errorFormat: "minimal" });
  return { prisma, kind, url: options.url, close: () => prisma.$disconnect() };
}

// What server/db/generated/internal/class.ts imports at the first query (untyped modules, hence plain strings).
const QUERY_COMPILER_MODULES = [
  "@prisma/client/runtime/query_compiler_fast_bg.postgresql.mjs",
  "@prisma/client/runtime/query_compiler_fast_bg.postgresql.wasm-base64.mjs",
];

/**
 * Loads the two modules of Prisma's query compiler (its runtime and its WebAssembly, a 4.5 MB base64 module the
 * generated client imports at its first query, about 0.2 s of CPU) ahead of that query. The server calls it while
 * the database is still opening, when this thread would otherwise wait (docs/architecture.md, "Running in
 * production"). Never rejects: a Prisma version that names them otherwise loads them at the first query, as before.
 */
export async function preloadQueryCompiler(): Promise<void> {
  await Promise.all(QUERY_COMPILER_MODULES.map((specifier) => import(specifier))).catch(() => undefined);
}

// One database per process, shared by Next's bundles and our scripts: route modules may be instantiated more than once.
const holder = globalThis as unknown as { __crmDatabase?: Database; __crmEmbedded?: EmbeddedDatabase };

/**
 * Where the process-wide database is: `DATABASE_URL`, else the embedded database of `DATA_DIR` as served by the
 * process that owns it (its lock file names the URL).
 * @throws Error when neither is set up: a command must call {@link connectDatabase} first.
 */
function resolveUrl(): { url: string; kind: Database["kind"] } {
  const config = env();
  if (config.DATABASE_URL) return { url: config.DATABASE_URL, kind: "postgres" };
  const owner = readLiveEmbeddedLock(config.DATA_DIR);
  if (owner?.url) return { url: owner.url, kind: "pglite" };
  throw new Error(
    `No database: DATABASE_URL is not set and no process serves the embedded database in ${config.DATA_DIR} (start it with npm start).`,
  );
}

/** The process-wide database (`DATABASE_URL`, or the embedded one served from `DATA_DIR`); opened on first use. */
export function db(): Database {
  if (!holder.__crmDatabase) holder.__crmDatabase = openDatabase(resolveUrl());
  return holder.__crmDatabase;
}

/**
 * Makes the process-wide database reachable before {@link db} is used, for the server and the commands. With
 * `DATABASE_URL` there is nothing to do. Otherwise: `own: false` (the admin command, migrations) goes through the
 * running server's socket when one owns `DATA_DIR`, and opens the directory itself only when none does; `own: true`
 * (the server) always opens it and fails when another process owns it. An embedded database opened here is closed
 * by {@link closeDb}.
 * @returns the database and whether this process owns the embedded database.
 * @throws EmbeddedDatabaseBusyError (`own: true`) when another live process owns `DATA_DIR`.
 */
export async function connectDatabase(options: {
  own: boolean;
  /** The embedded database being opened already (the server starts it before its other imports). */
  opening?: Promise<EmbeddedDatabase>;
}): Promise<{ database: Database; owner: boolean }> {
  const config = env();
  if (config.DATABASE_URL || (!options.own && readLiveEmbeddedLock(config.DATA_DIR)?.url)) {
    return { database: db(), owner: false };
  }
  // Loaded only here: processes that reach the database by URL (Next.js bundles, serverless) never load PGlite.
  const { openEmbeddedDatabase } = await import("./embedded");
  holder.__crmEmbedded ??= await (options.opening ?? openEmbeddedDatabase(config.DATA_DIR));
  holder.__crmDatabase ??= openDatabase({ url: holder.__crmEmbedded.url, kind: "pglite" });
  return { database: holder.__crmDatabase, owner: true };
}

/** Closes the process-wide database, if open, and the embedded database this process owns, if any. */
export async function closeDb(): Promise<void> {
  const current = holder.__crmDatabase;
  const embedded = holder.__crmEmbedded;
  holder.__crmDatabase = undefined;
  holder.__crmEmbedded = undefined;
  await current?.close();
  await embedded?.close();
}
