// `npm run db:migrate`: applies pending migrations to the configured database (DESIGN.md §3, "Migrations").
// PostgreSQL when DATABASE_URL is set, otherwise the embedded PGlite database under DATA_DIR.
import { mkdirSync } from "node:fs";
import path from "node:path";
import { PGlite } from "@electric-sql/pglite";
import { migrateDatabase } from "../server/db/migrate";
import { env } from "../server/env";

async function main(): Promise<void> {
  const config = env();
  const log = (line: string) => console.log(`  ${line}`);

  if (config.DATABASE_URL) {
    console.log(`Migrating PostgreSQL at ${redact(config.DATABASE_URL)}`);
    const { applied } = await migrateDatabase({ url: config.DATABASE_URL }, { log });
    console.log(summary(applied));
    return;
  }

  // Must stay the directory openDatabase() in server/db/client.ts opens; that module is not imported here because
  // it needs the generated Prisma client, which a fresh checkout may not have yet.
  const dir = path.resolve(config.DATA_DIR, "pglite");
  mkdirSync(dir, { recursive: true });
  console.log(`Migrating embedded PGlite at ${dir}`);
  const pglite = new PGlite(dir);
  try {
    const { applied } = await migrateDatabase({ pglite }, { log });
    console.log(summary(applied));
  } finally {
    await pglite.close();
  }
}

function summary(applied: string[]): string {
  return applied.length === 0
    ? "Database is up to date; no migrations applied."
    : `Done: applied ${applied.length} migration(s).`;
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
