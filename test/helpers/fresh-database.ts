// A fresh PostgreSQL database with every migration applied, for one test run (vitest and Playwright global setups).
import { randomBytes } from "node:crypto";
import pg from "pg";
import { migrateDatabase } from "../../server/db/migrate";

/** The server the test databases are created on; `TEST_PG_ADMIN_URL` overrides the local default. */
export const ADMIN_URL = process.env.TEST_PG_ADMIN_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres";

/** Runs one statement on the {@link ADMIN_URL} server (CREATE or DROP DATABASE), on a connection of its own. */
export async function admin(sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: ADMIN_URL });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

/**
 * Creates `<prefix>_<ms>_<hex>` on {@link ADMIN_URL} and migrates it.
 * @returns its URL and `drop()`, which removes it (kept when `KEEP_TEST_DB` is set, for inspection).
 */
export async function createFreshDatabase(prefix: string): Promise<{ url: string; drop: () => Promise<void> }> {
  const name = `${prefix}_${Date.now()}_${randomBytes(3).toString("hex")}`;
  await admin(`CREATE DATABASE "${name}"`);
  const parsed = new URL(ADMIN_URL);
  parsed.pathname = `/${name}`;
  const url = parsed.toString();
  await migrateDatabase({ url }, { log: () => undefined });
  return {
    url,
    drop: async () => {
      if (!process.env.KEEP_TEST_DB) await admin(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    },
  };
}
