import { env } from "../env";
import { db } from "./client";
import { migrateDatabase } from "./migrate";

/**
 * Applies pending migrations to the process-wide database (PostgreSQL from `DATABASE_URL`, or the embedded PGlite)
 * so commands work on a fresh clone (DESIGN.md §3, §8).
 * @returns the names of the migrations applied now.
 * @throws Error from the migration runner (unreachable database, checksum mismatch).
 */
export async function migrateProcessDatabase(): Promise<string[]> {
  const database = db();
  const target = database.pglite ? { pglite: database.pglite } : { url: env().DATABASE_URL as string };
  const { applied } = await migrateDatabase(target, { log: () => undefined });
  return applied;
}
