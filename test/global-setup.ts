// Gives every test run a fresh PostgreSQL database with all migrations applied, so no run sees another's rows,
// and points the workers at it and at the real Redis.
import { randomBytes } from "node:crypto";
import { createFreshDatabase } from "./helpers/fresh-database";

export default async function setup(): Promise<() => Promise<void>> {
  const { url, drop } = await createFreshDatabase("crm_test");
  process.env.DATABASE_URL = url;
  process.env.REDIS_URL ??= "redis://127.0.0.1:6379";
  // One secret for the tests and the processes they start (the admin command), as production sets it.
  process.env.BETTER_AUTH_SECRET ??= "test-secret-for-settings-cookies-0123456789";
  // Runs of other checkouts may share this Redis: a prefix of the run's own keeps their windows and counters apart.
  process.env.KV_PREFIX ??= `test-${randomBytes(4).toString("hex")}:`;
  // Many tests share the anonymous window of 127.0.0.1; rate-limit tests set low limits explicitly.
  process.env.RATE_LIMIT_ANONYMOUS_PER_MIN ??= "1000000";
  process.env.RATE_LIMIT_PAGES_PER_MIN ??= "1000000";
  // In-process servers would print a line per request; tests that read the log capture it (test/helpers/log-capture).
  process.env.LOG_LEVEL ??= "warn";

  return drop;
}
