// The migration folders on disk (docs/architecture.md, "Data and migrations"), read without a database driver: the
// embedded database reads them before anything else is imported at start-up. The turbopackIgnore comments keep Next.js
// from tracing the whole project into the /readyz function for these paths (next.config.mjs traces the migrations).
import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";

/** One migration folder read from disk: its folder name, its SQL and the SHA-256 hex of the file's bytes. */
export interface MigrationFile {
  name: string;
  sql: string;
  checksum: string;
}

/**
 * The names of the migration folders in `migrationsDir` (default `prisma/migrations` resolved from `process.cwd()`),
 * in the order the migration runner (`migrateDatabase`) applies them: what a database must have recorded in `_prisma_migrations` to be
 * up to date (the readiness probe compares the two).
 * @throws Error if the folder is missing.
 */
export function migrationNames(migrationsDir = "prisma/migrations"): string[] {
  const dir = path.resolve(/*turbopackIgnore: true*/ process.cwd(), migrationsDir);
  if (!existsSync(dir)) throw new Error(`Migrations folder not found: ${dir}`);
  return (
    readdirSync(/*turbopackIgnore: true*/ dir)
      // Dot-folders are work in progress (scripts/migration-diff.ts stages a new migration in one), never migrations.
      .filter((name) => !name.startsWith(".") && statSync(path.join(/*turbopackIgnore: true*/ dir, name)).isDirectory())
      // Plain code-unit order, not localeCompare: timestamps must sort the same on every machine.
      .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
  );
}

/**
 * A digest of the migrations in `migrationsDir` (default `prisma/migrations` resolved from `process.cwd()`): the
 * first 16 hex digits of SHA-256 over each migration's name and checksum, in order. Equal digests mean the same
 * migrations; the embedded database's build template is named by it (docs/architecture.md, "The embedded database").
 * @throws Error if the folder is missing or a migration folder has no `migration.sql`.
 */
export function migrationsDigest(migrationsDir = "prisma/migrations"): string {
  const hash = createHash("sha256");
  for (const migration of readMigrations(path.resolve(/*turbopackIgnore: true*/ process.cwd(), migrationsDir))) {
    hash.update(`${migration.name}\0${migration.checksum}\n`);
  }
  return hash.digest("hex").slice(0, 16);
}

/**
 * Reads every migration of `dir` (absolute) in the order of {@link migrationNames}, with the SHA-256 hex checksum of
 * its file, as `_prisma_migrations` records it (docs/architecture.md, "Data and migrations").
 * @throws Error if the folder is missing or a migration folder has no `migration.sql`.
 */
export function readMigrations(dir: string): MigrationFile[] {
  const names = migrationNames(dir);
  return names.map((name) => {
    const file = path.join(/*turbopackIgnore: true*/ dir, name, "migration.sql");
    if (!existsSync(file)) throw new Error(`Migration ${name} has no migration.sql (${file})`);
    const bytes = readFileSync(file);
    return { name, sql: bytes.toString("utf8"), checksum: createHash("sha256").update(bytes).digest("hex") };
  });
}
