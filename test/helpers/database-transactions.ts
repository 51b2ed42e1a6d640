// How many transactions a database has run, as PostgreSQL itself counts them (pg_stat_database: every statement
// outside a transaction block is one, commits and rollbacks alike), for tests and the benchmark that bound what a
// request costs the database. Read from another database of the same server, so reading adds nothing to the count.
import pg from "pg";

/**
 * The database's transactions so far (`xact_commit + xact_rollback`), with nothing left uncounted: a backend reports
 * its counts to the statistics at most once a second while it runs (and may hold them up to 10 s when idle), but
 * always when it exits, so every backend connected to the database is ended first (`pg_terminate_backend`, waiting
 * for the exit; their clients reconnect when they next query). The transaction PostgreSQL runs to start each session
 * (its catalog reads) is not counted (`sessions`): those reconnections are the measuring's doing, while a running
 * server keeps its pool's connections. Only meaningful on a database nothing else uses meanwhile: a test's or a bench
 * section's own.
 * @param adminUrl a URL of the same server on another database (e.g. `postgres`).
 * @param database the measured database's name.
 */
export async function settledTransactions(adminUrl: string, database: string): Promise<number> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    if ((await client.query("SELECT current_database() AS name")).rows[0]?.name === database)
      throw new Error("read the transactions of a database from another one");
    const deadline = Date.now() + 10_000;
    for (;;) {
      const { rows } = await client.query<{ ended: boolean }>(
        "SELECT pg_terminate_backend(pid, 5000) AS ended FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()",
        [database],
      );
      if (rows.length === 0) break;
      if (Date.now() > deadline) throw new Error(`backends of ${database} did not exit`);
    }
    // A fresh snapshot of the statistics, not the one this session may have cached.
    await client.query("SELECT pg_stat_clear_snapshot()");
    const { rows } = await client.query<{ total: string }>(
      "SELECT xact_commit + xact_rollback - sessions AS total FROM pg_stat_database WHERE datname = $1",
      [database],
    );
    return Number(rows[0]?.total ?? Number.NaN);
  } finally {
    await client.end();
  }
}
