// The migration runner and the drift check of docs/architecture.md, "Data and migrations": the committed migrations
// must build the same schema as prisma/schema.prisma, and the runner must record them the way Prisma does.
import { execFile } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import pg from "pg";
import { describe, expect, it } from "vitest";
import { openEmbeddedDatabase } from "../../../server/db/embedded";
import { migrateDatabase } from "../../../server/db/migrate";
import { ADMIN_URL } from "../../helpers/fresh-database";

const run = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, "../../..");
const MIGRATIONS_DIR = path.join(ROOT, "prisma", "migrations");
/** The migration that numbers events per organisation ("sequence"). */
const SEQUENCE_MIGRATION = "20261126100000_event_sequence";
/** The migration that clamps stored times to the years 0001 to 9999. */
const INPUT_BOUNDS_MIGRATION = "20261129120000_input_bounds";

function migrationNames(dir = MIGRATIONS_DIR): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && !entry.name.startsWith("."))
    .map((entry) => entry.name)
    .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

function sha256(file: string): string {
  return createHash("sha256").update(readFileSync(file)).digest("hex");
}

async function admin<T>(work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: ADMIN_URL, connectionTimeoutMillis: 5_000 });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/**
 * Opens an embedded database in a new data directory (served over its loopback socket, docs/architecture.md,
 * "The embedded database"), hands `work` its URL and a query function, and removes it afterwards.
 */
async function withEmbedded<T>(
  work: (url: string, query: <R>(sql: string, params?: unknown[]) => Promise<R[]>) => Promise<T>,
): Promise<T> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), "migrations-embedded-"));
  // A fresh initdb: the build's template already holds every migration.
  const embedded = await openEmbeddedDatabase(dataDir, { template: false });
  const client = new pg.Client({ connectionString: embedded.url });
  await client.connect();
  try {
    return await work(embedded.url, async (sql, params) => (await client.query(sql, params)).rows);
  } finally {
    await client.end();
    await embedded.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** Creates `count` empty databases, hands their URLs to `work`, and drops them whatever happens. */
async function withDatabases<T>(count: number, work: (urls: string[]) => Promise<T>): Promise<T> {
  const names = Array.from({ length: count }, () => `crm_migrations_test_${randomBytes(5).toString("hex")}`);
  await admin(async (client) => {
    for (const name of names) await client.query(`CREATE DATABASE "${name}"`);
  });
  try {
    return await work(
      names.map((name) => {
        const url = new URL(ADMIN_URL);
        url.pathname = `/${name}`;
        return url.toString();
      }),
    );
  } finally {
    await admin(async (client) => {
      for (const name of names) await client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    });
  }
}

async function schemaDump(url: string): Promise<string> {
  const { stdout } = await run(
    process.env.PG_DUMP ?? "pg_dump",
    ["--schema-only", "--no-owner", "--no-privileges", "--exclude-table=_prisma_migrations", "--dbname", url],
    { maxBuffer: 64 * 1024 * 1024 },
  );
  return normaliseDump(stdout);
}

/**
 * Drops what differs between two dumps of the same schema (comments, SET lines, pg_dump's random `\restrict` key) and
 * what Prisma does not model, which only hand-written migration SQL creates (functions and triggers: the events feed's
 * numbering, the search index's upkeep and the usage roll-up's marks, tested by their own behaviour; extensions; GIN indexes of several columns,
 * which Prisma refuses and `search.test.ts` checks exist and are used), and sorts the columns inside each CREATE TABLE (a
 * column added by a later migration lands at the end of the table, which Prisma does not consider drift) and the
 * statements.
 */
function normaliseDump(dump: string): string {
  const lines = dump.split("\n").map((line) => line.trimEnd());
  const modelled: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] as string;
    if (line.startsWith("CREATE FUNCTION ")) {
      while (i < lines.length && lines[i] !== "$$;") i++;
      continue;
    }
    if (/^CREATE (CONSTRAINT )?TRIGGER /.test(line)) {
      while (i < lines.length && !(lines[i] as string).endsWith(";")) i++;
      continue;
    }
    if (/^(CREATE|COMMENT ON) EXTENSION /.test(line)) continue;
    // One line in pg_dump's output: `CREATE INDEX "…" ON public."…" USING gin ("orgId", …);`
    if (/^CREATE INDEX .* USING gin \([^)]*,/.test(line)) continue;
    modelled.push(line);
  }
  const kept = modelled.filter(
    (line) =>
      line !== "" &&
      !line.startsWith("--") &&
      !line.startsWith("SET ") &&
      !line.startsWith("SELECT pg_catalog.set_config") &&
      !line.startsWith("\\restrict") &&
      !line.startsWith("\\unrestrict"),
  );
  const out: string[] = [];
  for (let i = 0; i < kept.length; i++) {
    const line = kept[i] as string;
    out.push(line);
    if (!/^CREATE TABLE .*\($/.test(line)) continue;
    const columns: string[] = [];
    while (i + 1 < kept.length && kept[i + 1] !== ");") columns.push((kept[++i] as string).replace(/,$/, ""));
    out.push(...columns.sort());
  }
  // Statements compared as a set: pg_dump orders objects by their dependencies, and a function over a table's row type
  // (search's entries) moves the tables it names ahead of others.
  const statements: string[] = [];
  let current: string[] = [];
  for (const line of out) {
    current.push(line);
    if (line.endsWith(";")) {
      statements.push(current.join("\n"));
      current = [];
    }
  }
  if (current.length > 0) statements.push(current.join("\n"));
  return statements.sort().join("\n");
}

async function execSql(url: string, sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

describe("migrations", () => {
  it("build the same schema as prisma/schema.prisma (drift check)", { timeout: 180_000 }, async () => {
    // First use installs Prisma 6 into node_modules/.cache/prisma6, hence the long timeout.
    const { stdout: fullDdl } = await run(
      path.join(ROOT, "node_modules", ".bin", "tsx"),
      ["scripts/migration-diff.ts", "--from-empty", "--stdout"],
      { cwd: ROOT, env: { ...process.env, PG_ADMIN_URL: ADMIN_URL }, maxBuffer: 64 * 1024 * 1024 },
    );
    expect(fullDdl).toContain("CREATE TABLE");

    await withDatabases(2, async ([fromMigrations, fromSchema]) => {
      const { applied } = await migrateDatabase({ url: fromMigrations as string });
      expect(applied).toEqual(migrationNames());
      await execSql(fromSchema as string, fullDdl);

      const [a, b] = await Promise.all([schemaDump(fromMigrations as string), schemaDump(fromSchema as string)]);
      expect(a).toContain('CREATE TABLE public."Organisation"');
      expect(a).not.toContain("_prisma_migrations");
      expect(a).toEqual(b);
    });
  });

  it("applies every migration once on the embedded database and records it as Prisma does", { timeout: 60_000 }, () =>
    withEmbedded(async (url, query) => {
      const names = migrationNames();
      expect(names.length).toBeGreaterThan(0);
      expect((await migrateDatabase({ url })).applied).toEqual(names);
      expect((await migrateDatabase({ url })).applied).toEqual([]);

      const rows = await query(
        `SELECT migration_name, checksum, finished_at >= started_at AS finished, applied_steps_count, rolled_back_at
         FROM "_prisma_migrations" ORDER BY migration_name`,
      );
      expect(rows).toEqual(
        names.map((name) => ({
          migration_name: name,
          checksum: sha256(path.join(MIGRATIONS_DIR, name, "migration.sql")),
          finished: true,
          applied_steps_count: 1,
          rolled_back_at: null,
        })),
      );

      // The table must be Prisma's own so `prisma migrate deploy` can take over later.
      const columns = await query(
        `SELECT column_name, data_type, character_maximum_length AS len FROM information_schema.columns
         WHERE table_name = '_prisma_migrations' ORDER BY ordinal_position`,
      );
      expect(columns).toEqual([
        { column_name: "id", data_type: "character varying", len: 36 },
        { column_name: "checksum", data_type: "character varying", len: 64 },
        { column_name: "finished_at", data_type: "timestamp with time zone", len: null },
        { column_name: "migration_name", data_type: "character varying", len: 255 },
        { column_name: "logs", data_type: "text", len: null },
        { column_name: "rolled_back_at", data_type: "timestamp with time zone", len: null },
        { column_name: "started_at", data_type: "timestamp with time zone", len: null },
        { column_name: "applied_steps_count", data_type: "integer", len: null },
      ]);
    }),
  );

  it("rejects an edited migration and rolls back a failing one", { timeout: 60_000 }, () =>
    withEmbedded(async (url, query) => {
      const dir = mkdtempSync(path.join(os.tmpdir(), "migrations-test-"));
      try {
        cpSync(MIGRATIONS_DIR, dir, { recursive: true });
        await migrateDatabase({ url }, { migrationsDir: dir });

        const first = migrationNames(dir)[0] as string;
        writeFileSync(
          path.join(dir, first, "migration.sql"),
          `${readFileSync(path.join(dir, first, "migration.sql"))}\n`,
        );
        await expect(migrateDatabase({ url }, { migrationsDir: dir })).rejects.toThrow(first);
        cpSync(path.join(MIGRATIONS_DIR, first, "migration.sql"), path.join(dir, first, "migration.sql"));

        const broken = "99991231235959_broken";
        mkdirSync(path.join(dir, broken));
        writeFileSync(path.join(dir, broken, "migration.sql"), 'CREATE TABLE "Half" (id int);\nSELECT 1 / 0;\n');
        await expect(migrateDatabase({ url }, { migrationsDir: dir })).rejects.toThrow(broken);

        expect(await query(`SELECT to_regclass('"Half"')::text AS t`)).toEqual([{ t: null }]);
        expect(await query(`SELECT 1 FROM "_prisma_migrations" WHERE migration_name = $1`, [broken])).toEqual([]);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    }),
  );

  it("numbers the events recorded before sequence existed in the order the feed served them", { timeout: 60_000 }, () =>
    withDatabases(1, async ([url]) => {
      const dir = mkdtempSync(path.join(os.tmpdir(), "migrations-sequence-"));
      const client = new pg.Client({ connectionString: url });
      const other = new pg.Client({ connectionString: url });
      try {
        // The database as it was before: every migration up to the one that adds "sequence".
        for (const name of migrationNames().filter((name) => name < SEQUENCE_MIGRATION)) {
          cpSync(path.join(MIGRATIONS_DIR, name), path.join(dir, name), { recursive: true });
        }
        await migrateDatabase({ url: url as string }, { migrationsDir: dir });
        await Promise.all([client.connect(), other.connect()]);
        await client.query(
          `INSERT INTO "Organisation" ("id", "slug", "name", "updatedAt") VALUES ('org_a', 'a', 'A', now()), ('org_b', 'b', 'B', now())`,
        );
        const insert = (connection: pg.Client, id: string, orgId: string, name = "account.updated") =>
          connection.query(
            `INSERT INTO "Event" ("id", "orgId", "name", "data", "createdAt") VALUES ($1, $2, $3, '{}', now())`,
            [id, orgId, name],
          );
        // Two transactions committing in the reverse order of their ids: the first format served the older one's
        // events first (txid, then insertion number).
        await client.query("BEGIN");
        await insert(client, "e1", "org_a");
        await other.query("BEGIN");
        await insert(other, "e2", "org_a");
        await insert(other, "e3", "org_b");
        await other.query("COMMIT");
        await insert(client, "e4", "org_a");
        await client.query("COMMIT");
        await insert(client, "e5", "org_a", "webhook.test");
        const before = await client.query(`SELECT "id", "seq"::int AS "seq" FROM "Event" ORDER BY "seq"`);

        expect((await migrateDatabase({ url: url as string })).applied).toEqual(
          migrationNames().filter((name) => name >= SEQUENCE_MIGRATION),
        );
        const after = await client.query(
          `SELECT "orgId", "id", "sequence"::int AS "sequence", "legacySeq"::int AS "legacySeq" FROM "Event" ORDER BY "orgId", "sequence"`,
        );
        const seqOf = new Map(before.rows.map((row) => [row.id, row.seq]));
        expect(after.rows).toEqual([
          { orgId: "org_a", id: "e1", sequence: 1, legacySeq: seqOf.get("e1") },
          { orgId: "org_a", id: "e4", sequence: 2, legacySeq: seqOf.get("e4") },
          { orgId: "org_a", id: "e2", sequence: 3, legacySeq: seqOf.get("e2") },
          { orgId: "org_a", id: "e5", sequence: 4, legacySeq: seqOf.get("e5") },
          { orgId: "org_b", id: "e3", sequence: 1, legacySeq: seqOf.get("e3") },
        ]);
        const counters = await client.query(
          `SELECT "orgId", "lastSequence"::int AS "last" FROM "EventCounter" ORDER BY "orgId"`,
        );
        expect(counters.rows).toEqual([
          { orgId: "org_a", last: 4 },
          { orgId: "org_b", last: 1 },
        ]);
        // Events recorded afterwards are numbered as their transaction commits, after the existing ones.
        await client.query(`SELECT "event_record"($1, $2)`, [
          "org_a",
          JSON.stringify([
            {
              id: "e6",
              name: "account.updated",
              data: {},
              actor: { type: "system" },
              createdAt: new Date().toISOString(),
            },
          ]),
        ]);
        const e6 = await client.query(`SELECT "sequence"::int AS "sequence" FROM "Event" WHERE "id" = 'e6'`);
        expect(e6.rows).toEqual([{ sequence: 5 }]);
      } finally {
        await Promise.allSettled([client.end(), other.end()]);
        rmSync(dir, { recursive: true, force: true });
      }
    }),
  );

  it(
    "clamps times stored outside the years 0001 to 9999 and keeps a field named constructor",
    { timeout: 60_000 },
    () =>
      withDatabases(1, async ([url]) => {
        const dir = mkdtempSync(path.join(os.tmpdir(), "migrations-bounds-"));
        const client = new pg.Client({ connectionString: url });
        try {
          // The database as it was before: every migration up to the one that bounds times.
          for (const name of migrationNames().filter((name) => name < INPUT_BOUNDS_MIGRATION)) {
            cpSync(path.join(MIGRATIONS_DIR, name), path.join(dir, name), { recursive: true });
          }
          await migrateDatabase({ url: url as string }, { migrationsDir: dir });
          await client.connect();
          await client.query(
            `INSERT INTO "Organisation" ("id", "slug", "name", "updatedAt") VALUES ('o', 'o', 'O', now())`,
          );
          await client.query(
            `INSERT INTO "CustomField" ("id", "orgId", "resource", "key", "label", "type", "updatedAt") VALUES
             ('f1', 'o', 'account', 'when', 'When', 'datetime', now()),
             ('f2', 'o', 'account', 'renewal', 'Renewal', 'date', now()),
             ('f3', 'o', 'task', 'constructor', 'Constructor', 'number', now())`,
          );
          // As the API stored them: 9999-12-31T23:59:59-01:00, 0001-01-01T00:00:00+01:00, year 0000 as text.
          const values = [
            ["a1", { when: "+010000-01-01T00:59:59.000Z", renewal: "0000-02-29" }],
            ["a2", { when: "0000-12-31T23:00:00.000Z", renewal: "2027-03-31" }],
            ["a3", { when: "-000001-12-31T23:00:00.000Z" }],
            ["a4", { when: "2026-05-01T08:00:00.000Z", renewal: "9999-12-31" }],
          ] as const;
          for (const [id, customFields] of values) {
            await client.query(
              `INSERT INTO "Account" ("id", "orgId", "name", "customFields", "updatedAt") VALUES ($1, 'o', $1, $2, '2026-01-01')`,
              [id, JSON.stringify(customFields)],
            );
          }
          await client.query(
            `INSERT INTO "Task" ("id", "orgId", "title", "dueAt", "customFields", "updatedAt") VALUES
             ('t1', 'o', 'Far', '10000-01-01 00:59:59', '{"constructor": 5}', '2026-01-01'),
             ('t2', 'o', 'Early', '0001-12-31 23:00:00 BC', '{}', '2026-01-01'),
             ('t3', 'o', 'Now', '2026-06-01 12:00:00', '{}', '2026-01-01')`,
          );

          await migrateDatabase({ url: url as string });
          const accounts = await client.query(
            `SELECT "id", "customFields", "updatedAt" = '2026-01-01' AS "kept" FROM "Account" ORDER BY "id"`,
          );
          expect(accounts.rows).toEqual([
            { id: "a1", customFields: { when: "9999-12-31T23:59:59.999Z", renewal: "0001-01-01" }, kept: true },
            { id: "a2", customFields: { when: "0001-01-01T00:00:00.000Z", renewal: "2027-03-31" }, kept: true },
            { id: "a3", customFields: { when: "0001-01-01T00:00:00.000Z" }, kept: true },
            { id: "a4", customFields: { when: "2026-05-01T08:00:00.000Z", renewal: "9999-12-31" }, kept: true },
          ]);
          const tasks = await client.query(
            `SELECT "id", to_char("dueAt", 'YYYY-MM-DD"T"HH24:MI:SS.MS') AS "dueAt", "customFields" FROM "Task" ORDER BY "id"`,
          );
          const taskRows: Array<{ id: string; dueAt: string; customFields: Record<string, number> }> = [
            { id: "t1", dueAt: "9999-12-31T23:59:59.999", customFields: { constructor: 5 } },
            { id: "t2", dueAt: "0001-01-01T00:00:00.000", customFields: {} },
            { id: "t3", dueAt: "2026-06-01T12:00:00.000", customFields: {} },
          ];
          expect(tasks.rows).toEqual(taskRows);
          // A definition named constructor stays as it was (the service reads values by own keys only).
          const kept = await client.query(`SELECT "key", "archivedAt" FROM "CustomField" WHERE "id" = 'f3'`);
          expect(kept.rows).toEqual([{ key: "constructor", archivedAt: null }]);
        } finally {
          await client.end().catch(() => undefined);
          rmSync(dir, { recursive: true, force: true });
        }
      }),
  );

  it("applies each migration once when two runners start together (advisory lock)", { timeout: 60_000 }, async () => {
    await withDatabases(1, async ([url]) => {
      const names = migrationNames();
      const [a, b] = await Promise.all([
        migrateDatabase({ url: url as string }),
        migrateDatabase({ url: url as string }),
      ]);
      // The lock covers the whole run, so one runner does everything and the other finds nothing left.
      expect([a.applied.length, b.applied.length].sort()).toEqual([0, names.length]);
      expect([...a.applied, ...b.applied]).toEqual(names);

      const client = new pg.Client({ connectionString: url });
      await client.connect();
      const { rows } = await client
        .query<{ migration_name: string }>(`SELECT migration_name FROM "_prisma_migrations" ORDER BY migration_name`)
        .finally(() => client.end());
      expect(rows.map((row) => row.migration_name)).toEqual(names);
    });
  });

  it("migrates although this process's thread is busy for longer than the connection time-out", {
    timeout: 60_000,
  }, async () => {
    await withDatabases(1, async ([url]) => {
      // npm start migrates while it imports Next.js: a thread busy past pg's 5 s timer must not fail the start.
      const running = migrateDatabase({ url: url as string });
      const until = Date.now() + 6_000;
      while (Date.now() < until) {
        // Busy, as a large synchronous import is.
      }
      const { applied } = await running;
      expect(applied).toEqual(migrationNames());
    });
  });
});
