// GET /readyz's answer against a database of this file's own (vitest runs each file in its own process): ready when
// every migration of the build is recorded, 503 naming what is pending or unreadable, and `shutting_down` from the
// moment the server begins to stop. Results are reused for one second, so each case waits that long first.
import pg from "pg";
import { afterAll, beforeAll, expect, it } from "vitest";
import { resetEnvCache } from "../../../server/env";
import { createFreshDatabase } from "../../helpers/fresh-database";

let database: { url: string; drop: () => Promise<void> };
let sql: pg.Client;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

beforeAll(async () => {
  database = await createFreshDatabase("crm_ready");
  process.env.DATABASE_URL = database.url;
  resetEnvCache();
  sql = new pg.Client({ connectionString: database.url });
  await sql.connect();
});

afterAll(async () => {
  const { closeDb } = await import("../../../server/db/client");
  await closeDb();
  await sql.end();
  await database.drop();
});

async function readiness() {
  const { readinessReply, READINESS_TTL_MS } = await loadProbes();
  await sleep(READINESS_TTL_MS + 50);
  const reply = await readinessReply();
  return { status: reply.status, body: JSON.parse(reply.body ?? "{}") };
}

async function loadProbes() {
  const [{ readinessReply }, { READINESS_TTL_MS, markShuttingDown }] = await Promise.all([
    import("../../../server/http/probes"),
    import("../../../server/platform/status/service"),
  ]);
  return { readinessReply, READINESS_TTL_MS, markShuttingDown };
}

it("is ready with every migration applied", async () => {
  const { status, body } = await readiness();
  expect(status).toBe(200);
  expect(body).toMatchObject({ status: "ready", checks: { migrations: { status: "up", pending: [] } } });
});

it("answers 503 naming the pending migration when the database lacks one of this build's migrations", async () => {
  const { rows } = await sql.query<{ migration_name: string }>(
    `DELETE FROM "_prisma_migrations" WHERE migration_name = (SELECT max(migration_name) FROM "_prisma_migrations")
     RETURNING migration_name`,
  );
  const { status, body } = await readiness();
  expect(status).toBe(503);
  expect(body.status).toBe("not_ready");
  expect(body.reason).toBe("migrations: 1 pending (run npm run db:migrate)");
  expect(body.checks.migrations.pending).toEqual([rows[0]?.migration_name]);
  expect(body.checks.database.status).toBe("up");
});

it("answers 503 when no migration was ever applied (no _prisma_migrations table)", async () => {
  await sql.query(`DROP TABLE "_prisma_migrations"`);
  const { status, body } = await readiness();
  expect(status).toBe(503);
  expect(body.reason).toBe("migrations: none applied or unreadable");
});

it("answers 503 shutting_down at once, without checking anything, once shutdown began", async () => {
  const { readinessReply, markShuttingDown } = await loadProbes();
  markShuttingDown();
  const reply = await readinessReply();
  expect(reply.status).toBe(503);
  expect(JSON.parse(reply.body ?? "{}")).toEqual({
    status: "shutting_down",
    reason: "shutting down: finishing the requests in flight",
  });
});
