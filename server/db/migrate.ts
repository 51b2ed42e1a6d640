import { randomUUID } from "node:crypto";
import path from "node:path";
import pg from "pg";
import { type MigrationFile, readMigrations } from "./migration-files";

/**
 * Where {@link migrateDatabase} applies migrations: a PostgreSQL URL (the embedded database too, through the socket its
 * owner serves it on; docs/architecture.md, "The embedded database").
 */
export type MigrationTarget = { url: string };

/** Options of {@link migrateDatabase}. */
export interface MigrateOptions {
  /** Folder holding `<timestamp>_<name>/migration.sql`; default `prisma/migrations` resolved from `process.cwd()`. */
  migrationsDir?: string;
  /** Receives one human-readable line per applied migration and per warning. */
  log?: (line: string) => void;
}

/** Outcome of {@link migrateDatabase}. */
export interface MigrateResult {
  /** Names of the migration folders applied by this call, in the order they ran; empty when already up to date. */
  applied: string[];
}

/** One row of `_prisma_migrations`, as far as the runner needs it. */
interface MigrationRow {
  migration_name: string;
  checksum: string;
  finished_at: Date | string | null;
  rolled_back_at: Date | string | null;
}

/** What the runner needs from a connection; one implementation per engine. */
interface Session {
  /** Runs one or more statements without parameters (multi-statement files go through here). */
  exec(sql: string): Promise<void>;
  query<T>(sql: string, params?: unknown[]): Promise<T[]>;
  /** Runs `work` in one transaction on this session; rolls back and rethrows if it throws. */
  transaction(work: (tx: Pick<Session, "exec" | "query">) => Promise<void>): Promise<void>;
}

// The key `prisma migrate deploy` itself locks, so our runner and Prisma's exclude each other on a shared database.
const ADVISORY_LOCK_KEY = 72707369;

// Byte-for-byte the table Prisma's schema engine creates, so `prisma migrate deploy` can take over a database we built.
const CREATE_MIGRATIONS_TABLE = `CREATE TABLE IF NOT EXISTS "_prisma_migrations" (
    "id"                    VARCHAR(36) PRIMARY KEY NOT NULL,
    "checksum"              VARCHAR(64) NOT NULL,
    "finished_at"           TIMESTAMPTZ,
    "migration_name"        VARCHAR(255) NOT NULL,
    "logs"                  TEXT,
    "rolled_back_at"        TIMESTAMPTZ,
    "started_at"            TIMESTAMPTZ NOT NULL DEFAULT now(),
    "applied_steps_count"   INTEGER NOT NULL DEFAULT 0
)`;

/**
 * Applies the pending Prisma-format migrations to a database (docs/architecture.md, "Data and migrations").
 *
 * Reads `<migrationsDir>/<timestamp>_<name>/migration.sql` in lexical order and, under the PostgreSQL advisory lock
 * Prisma uses (so concurrent runners and `prisma migrate deploy` wait for each other), applies each one not yet
 * recorded in `_prisma_migrations`, each in its own transaction together with its `_prisma_migrations` row (same
 * table and columns as Prisma; `checksum` = SHA-256 hex of the file bytes, `applied_steps_count` = 1). A migration
 * that fails is rolled back and not recorded, so fixing it and re-running is enough. (A file with its own
 * `BEGIN; … COMMIT;`, as Prisma writes for enum changes, still runs; its COMMIT just ends the runner's transaction
 * early, as it would under `prisma migrate deploy`.) Waits as long as another runner holds the lock.
 *
 * @param target `{ url }`: a PostgreSQL URL, connected with a `pg.Client` (simple query protocol, so multi-statement
 *   files run); an optional `?schema=` parameter selects the schema as in Prisma.
 * @returns The names of the migrations this call applied, in order.
 * @throws Error if the migrations folder is missing or a migration folder has no `migration.sql`; if a recorded
 *   migration's checksum differs from its file (the message names the migration); if `_prisma_migrations` holds a
 *   failed migration (not finished, not rolled back, as Prisma's P3009); or if a migration's SQL fails (the message
 *   names the migration, `cause` is the database error). Connection errors propagate unchanged.
 */
export async function migrateDatabase(target: MigrationTarget, options: MigrateOptions = {}): Promise<MigrateResult> {
  const migrationsDir = path.resolve(process.cwd(), options.migrationsDir ?? "prisma/migrations");
  const migrations = readMigrations(migrationsDir);
  const log = options.log ?? (() => {});

  const client = await connectPatiently(target.url);
  try {
    const schema = new URL(target.url).searchParams.get("schema");
    if (schema) {
      const quoted = `"${schema.replaceAll('"', '""')}"`;
      await client.query(`CREATE SCHEMA IF NOT EXISTS ${quoted}; SET search_path TO ${quoted}`);
    }
    return await runLocked(pgSession(client), migrations, log);
  } finally {
    await client.end().catch(() => {});
  }
}

/** Connection attempts while this process's event loop stalls, at most; each is bounded at 5 s. */
const CONNECT_ATTEMPTS = 3;
/** Connection time-out of one attempt, ms. */
const CONNECT_TIMEOUT_MS = 5_000;
/** A time-out reported this much later than it was due (ms) fired after a stall of this thread, not of the database. */
const STALL_MS = 1_000;

// Connects a client, bounded at 5 s per attempt. `npm start` migrates while it imports Next.js, which can keep this
// thread busy for seconds on a loaded machine; pg's timer then fires before the connection's own callback runs, so a
// time-out during such a stall is tried again. A refusal, or a time-out on a thread that was free, fails at once.
async function connectPatiently(url: string): Promise<pg.Client> {
  for (let attempt = 1; ; attempt++) {
    const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: CONNECT_TIMEOUT_MS });
    const started = performance.now();
    try {
      await client.connect();
      return client;
    } catch (error) {
      await client.end().catch(() => {});
      const timedOut = error instanceof Error && /timeout/i.test(error.message);
      const late = performance.now() - started - CONNECT_TIMEOUT_MS > STALL_MS;
      if (!timedOut || !late || attempt >= CONNECT_ATTEMPTS) throw error;
    }
  }
}

async function runLocked(session: Session, migrations: MigrationFile[], log: (line: string) => void) {
  await session.exec(`SELECT pg_advisory_lock(${ADVISORY_LOCK_KEY})`);
  try {
    return await applyPending(session, migrations, log);
  } finally {
    await session.exec(`SELECT pg_advisory_unlock(${ADVISORY_LOCK_KEY})`);
  }
}

async function applyPending(
  session: Session,
  migrations: MigrationFile[],
  log: (line: string) => void,
): Promise<MigrateResult> {
  await session.exec(CREATE_MIGRATIONS_TABLE);
  const rows = await session.query<MigrationRow>(
    `SELECT migration_name, checksum, finished_at, rolled_back_at FROM "_prisma_migrations" ORDER BY started_at`,
  );

  const failed = rows.filter((row) => row.finished_at === null && row.rolled_back_at === null);
  if (failed.length > 0) {
    const names = failed.map((row) => row.migration_name).join(", ");
    throw new Error(
      `Found failed migrations in _prisma_migrations: ${names}. Resolve them first (prisma migrate resolve, or delete their rows once the database is repaired).`,
    );
  }

  // Rolled-back rows do not count as applied: Prisma re-applies such migrations too.
  const applied = new Map(rows.filter((row) => row.rolled_back_at === null).map((row) => [row.migration_name, row]));
  const known = new Set(migrations.map((migration) => migration.name));
  for (const name of applied.keys()) {
    if (!known.has(name)) log(`warning: migration ${name} is recorded in the database but missing from the folder`);
  }
  for (const migration of migrations) {
    const row = applied.get(migration.name);
    if (row && row.checksum !== migration.checksum) {
      throw new Error(
        `Migration ${migration.name} was modified after it was applied (checksum ${row.checksum} in _prisma_migrations, ${migration.checksum} on disk). Restore the file and add a new migration instead.`,
      );
    }
  }

  const done: string[] = [];
  for (const migration of migrations) {
    if (applied.has(migration.name)) continue;
    const started = Date.now();
    try {
      await session.transaction(async (tx) => {
        const id = randomUUID();
        await tx.query(`INSERT INTO "_prisma_migrations" (id, checksum, migration_name) VALUES ($1, $2, $3)`, [
          id,
          migration.checksum,
          migration.name,
        ]);
        await tx.exec(migration.sql);
        // clock_timestamp, not now(): now() is frozen at transaction start and would equal started_at.
        await tx.query(
          `UPDATE "_prisma_migrations" SET finished_at = clock_timestamp(), applied_steps_count = 1 WHERE id = $1`,
          [id],
        );
      });
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      throw new Error(`Migration ${migration.name} failed and was rolled back: ${message}`, { cause: error });
    }
    done.push(migration.name);
    log(`applied ${migration.name} (${Date.now() - started} ms)`);
  }
  return { applied: done };
}

function pgSession(client: pg.Client): Session {
  // A query without parameters goes over the simple protocol, which accepts several statements at once.
  const exec = async (sql: string) => {
    await client.query(sql);
  };
  const query = async <T>(sql: string, params?: unknown[]) => (await client.query(sql, params)).rows as T[];
  return {
    exec,
    query,
    async transaction(work) {
      await client.query("BEGIN");
      try {
        await work({ exec, query });
        await client.query("COMMIT");
      } catch (error) {
        await client.query("ROLLBACK").catch(() => {});
        throw error;
      }
    },
  };
}
