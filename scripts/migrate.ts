// `npm run db:migrate`: applies pending migrations to the configured database (docs/architecture.md,
// "Data and migrations"): PostgreSQL when DATABASE_URL is set, otherwise the embedded database of DATA_DIR, through the
// running server's socket when one owns it, else opened here.
import { closeDb, connectDatabase } from "../server/db/client";
import { migrateDatabase } from "../server/db/migrate";

async function main(): Promise<void> {
  const log = (line: string) => console.log(`  ${line}`);
  try {
    const { database, owner } = await connectDatabase({ own: false });
    const where =
      database.kind === "postgres"
        ? `PostgreSQL at ${redact(database.url)}`
        : `the embedded database (${owner ? "opened here" : `served by the running server at ${database.url}`})`;
    console.log(`Migrating ${where}`);
    const { applied } = await migrateDatabase({ url: database.url }, { log });
    console.log(
      applied.length === 0
        ? "Database is up to date; no migrations applied."
        : `Done: applied ${applied.length} migration(s).`,
    );
  } finally {
    await closeDb();
  }
}

// The URL may carry a password; it has no business in logs.
function redact(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = "***";
    return parsed.toString();
  } catch {
    return "(unparseable DATABASE_URL)";
  }
}

main().catch((error: unknown) => {
  console.error(`db:migrate failed: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
