// The embedded default: no DATABASE_URL and no REDIS_URL → PGlite under DATA_DIR, served by its one
// owner over a loopback socket, and the in-memory store. Runs in its own process (vitest forks + isolate), so the
// process-wide database is this file's. The cross-process behaviour (second server, admin command, kill -9) is in
// start.test.ts.
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import pg from "pg";
import { afterAll, beforeAll, expect, it } from "vitest";
import { closeDb, connectDatabase, db } from "../../../server/db/client";
import {
  EmbeddedDatabaseBusyError,
  embeddedTemplateDir,
  openEmbeddedDatabase,
  readLiveEmbeddedLock,
} from "../../../server/db/embedded";
import { migrationNames } from "../../../server/db/migration-files";
import { migrateProcessDatabase } from "../../../server/db/ready";
import { flushAudit } from "../../../server/platform/request-log/record";
import { client, createTestOrg, startApi, type TestServer } from "../../helpers/api";

const dataDir = mkdtempSync(path.join(tmpdir(), "crm-embedded-"));
delete process.env.DATABASE_URL;
delete process.env.REDIS_URL;
process.env.DATA_DIR = dataDir;

let server: TestServer;
beforeAll(async () => {
  // A new data directory is a copy of the build's migrated template: nothing left to apply.
  expect(await migrateProcessDatabase({ own: true })).toEqual([]);
  server = await startApi();
}, 120_000);
afterAll(async () => {
  await server?.close();
  await flushAudit();
  await closeDb();
  rmSync(dataDir, { recursive: true, force: true });
});

it("owns the data directory: its lock names this process and the socket URL, and a second opener is refused", async () => {
  const lock = readLiveEmbeddedLock(dataDir);
  expect(lock).toMatchObject({ pid: process.pid, url: db().url });
  expect(db().url).toMatch(/^postgresql:\/\/postgres@127\.0\.0\.1:\d+\/postgres$/);
  await expect(openEmbeddedDatabase(dataDir)).rejects.toBeInstanceOf(EmbeddedDatabaseBusyError);
  // A command in this process reuses the owner's database instead of opening the directory again.
  expect((await connectDatabase({ own: false })).database).toBe(db());
});

it("serves the accounts happy path on PGlite with the in-memory store", async () => {
  expect(db().kind).toBe("pglite");
  const status = await fetch(`${server.url}/status`).then((res) => res.json());
  expect(status.data).toMatchObject({
    database: { status: "up", driver: "pglite" },
    cache: { status: "up", driver: "memory" },
  });

  const api = client(server.url, (await createTestOrg()).key);
  const created = await api("POST", "/accounts", { name: "Embedded Co", externalId: "e-1" });
  expect(created.status).toBe(201);
  const bulk = await api("POST", "/accounts/bulk", {
    accounts: [
      { name: "Embedded Co renamed", externalId: "e-1" },
      ...Array.from({ length: 120 }, (_, i) => ({ name: `E${i}`, externalId: `e-${i + 2}` })),
    ],
  });
  expect(bulk.body.data).toMatchObject({ created: 120, updated: 1, total: 121 });
  const page1 = await api("GET", "/accounts?limit=100&sort=name:asc");
  expect(page1.body.data).toHaveLength(100);
  expect(page1.body.hasMore).toBe(true);
  const page2 = await api("GET", `/accounts?limit=100&sort=name:asc&cursor=${page1.body.nextCursor}`);
  expect(page2.body.data).toHaveLength(21);
  expect(page2.body.hasMore).toBe(false);
  expect((await api("PATCH", `/accounts/${created.body.data.id}`, { lifecycleStatus: "ACTIVE" })).body.data.name).toBe(
    "Embedded Co renamed",
  );
  expect((await api("DELETE", `/accounts/${created.body.data.id}`)).body.data.lifecycleStatus).toBe("CHURNED");
  expect((await api("DELETE", `/accounts/${created.body.data.id}?force=true`)).body.data).toEqual({
    id: created.body.data.id,
    deleted: true,
  });
});

it("a new data directory starts as a copy of the build's migrated template, not a fresh initdb", async () => {
  expect(existsSync(path.join(embeddedTemplateDir(), "PG_VERSION")), "run `npm run build` first").toBe(true);
  // initdb gives every cluster its own system identifier; copies of one template share it.
  const identifiers: string[] = [];
  for (let i = 0; i < 2; i++) {
    const dir = mkdtempSync(path.join(tmpdir(), "crm-embedded-copy-"));
    const embedded = await openEmbeddedDatabase(dir);
    const sql = new pg.Client({ connectionString: embedded.url });
    try {
      await sql.connect();
      const { rows } = await sql.query<{ id: string }>("SELECT system_identifier::text AS id FROM pg_control_system()");
      identifiers.push(rows[0]?.id ?? "");
      const recorded = await sql.query<{ name: string }>(
        `SELECT migration_name AS name FROM "_prisma_migrations" WHERE finished_at IS NOT NULL ORDER BY migration_name`,
      );
      expect(recorded.rows.map((row) => row.name)).toEqual(migrationNames());
      // What `SEED_DEMO=false` starts from: the schema and nothing in it.
      const organisations = await sql.query<{ n: number }>(`SELECT count(*)::int AS n FROM "Organisation"`);
      expect(organisations.rows[0]?.n).toBe(0);
    } finally {
      await sql.end();
      await embedded.close();
      rmSync(dir, { recursive: true, force: true });
    }
  }
  expect(identifiers[0]).toMatch(/^\d+$/);
  expect(identifiers[1]).toBe(identifiers[0]);
}, 60_000);

it("a new data directory for the demo starts as the build's demo template: the book, and no key, user or secret", async () => {
  expect(existsSync(path.join(embeddedTemplateDir("demo"), "PG_VERSION")), "run `npm run build` first").toBe(true);
  const dir = mkdtempSync(path.join(tmpdir(), "crm-embedded-demo-"));
  const embedded = await openEmbeddedDatabase(dir, { template: "demo" });
  const sql = new pg.Client({ connectionString: embedded.url });
  try {
    await sql.connect();
    const { rows } = await sql.query<Record<string, number>>(
      `SELECT (SELECT count(*)::int FROM "Organisation" WHERE "slug" = 'demo') AS "organisations",
              (SELECT count(*)::int FROM "Organisation") AS "allOrganisations",
              (SELECT count(*)::int FROM "Account") AS "accounts",
              (SELECT count(*)::int FROM "Device") AS "devices",
              (SELECT count(*)::int FROM "ApiKey") AS "keys",
              (SELECT count(*)::int FROM "ApiKeyChecksumSecret") AS "secrets",
              (SELECT count(*)::int FROM "User") AS "users",
              (SELECT count(*)::int FROM "Session") AS "sessions",
              (SELECT count(*)::int FROM "Member") AS "members"`,
    );
    // Each installation makes its own key, owner, password and checksum secret at its first start.
    expect(rows[0]).toEqual({
      organisations: 1,
      allOrganisations: 1,
      accounts: 200,
      devices: 5_000,
      keys: 0,
      secrets: 0,
      users: 0,
      sessions: 0,
      members: 0,
    });
  } finally {
    await sql.end();
    await embedded.close();
    rmSync(dir, { recursive: true, force: true });
  }
}, 60_000);
