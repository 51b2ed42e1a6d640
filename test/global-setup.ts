// Gives every test run a fresh PostgreSQL database with all migrations applied (issue #2: "a fresh database per run"),
// and points the workers at it and at the real Redis.
import { randomBytes } from "node:crypto";
import pg from "pg";
import { migrateDatabase } from "../server/db/migrate";

export const ADMIN_URL = process.env.TEST_PG_ADMIN_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres";

function withDatabase(url: string, name: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${name}`;
  return parsed.toString();
}

export default async function setup(): Promise<() => Promise<void>> {
  const name = `crm_test_${Date.now()}_${randomBytes(3).toString("hex")}`;
  const admin = new pg.Client({ connectionString: ADMIN_URL });
  await admin.connect();
  await admin.query(`CREATE DATABASE "${name}"`);
  await admin.end();

  const url = withDatabase(ADMIN_URL, name);
  await migrateDatabase({ url }, { log: () => undefined });
  process.env.DATABASE_URL = url;
  process.env.REDIS_URL ??= "redis://127.0.0.1:6379";
  // Many tests share the anonymous window of 127.0.0.1; rate-limit tests set low limits explicitly.
  process.env.RATE_LIMIT_ANONYMOUS_PER_MIN ??= "1000000";

  return async () => {
    if (process.env.KEEP_TEST_DB) return;
    const cleanup = new pg.Client({ connectionString: ADMIN_URL });
    await cleanup.connect();
    await cleanup.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    await cleanup.end();
  };
}
