import { connectDatabase } from "./client";
import type { EmbeddedDatabase } from "./embedded";
import { migrateDatabase } from "./migrate";

/**
 * Connects the process-wide database for a command ({@link connectDatabase}: `DATABASE_URL`, the running server's
 * embedded database, or the embedded database opened here) and applies pending migrations, so commands work on a
 * fresh clone (docs/architecture.md, "Data and migrations"; docs/architecture.md, "Running in production").
 * @param options.own true for the server, which must own the embedded database (see {@link connectDatabase}).
 * @param options.opening the embedded database the server already started opening, if it did.
 * @returns the names of the migrations applied now.
 * @throws EmbeddedDatabaseBusyError (`own: true`) when another process owns `DATA_DIR`; Error from the migration
 *         runner (unreachable database, checksum mismatch).
 */
export async function migrateProcessDatabase(
  options: { own: boolean; opening?: Promise<EmbeddedDatabase> } = { own: false },
): Promise<string[]> {
  const { database } = await connectDatabase(options);
  const { applied } = await migrateDatabase({ url: database.url }, { log: () => undefined });
  return applied;
}
