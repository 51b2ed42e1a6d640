// The migration to better-auth on a database of the old shape (a user row with orgId and a bcrypt passwordHash, a
// session keyed by the SHA-256 of its cookie): applied by the runner, then run a second time by hand without effect;
// every user is an owner of their organisation and signs in with their old password, which is then rehashed.
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import bcrypt from "bcryptjs";
import pg from "pg";
import { expect, it } from "vitest";
import { migrateDatabase } from "../../../server/db/migrate";
import { ADMIN_URL } from "../../helpers/fresh-database";

const run = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, "../../..");
const MIGRATIONS = path.join(ROOT, "prisma", "migrations");
const ALL = readdirSync(MIGRATIONS)
  .filter((name) => /^\d+_/.test(name))
  .sort();
const NEW = ALL.find((name) => name.endsWith("_team_sign_in")) as string;
/** The migrations written after it, which the runner applies after it. */
const LATER = ALL.filter((name) => name > NEW);

async function withClient<T>(url: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

async function signInOnce(url: string, email: string, password: string) {
  const { stdout } = await run(
    process.execPath,
    ["--import", "tsx", path.join(ROOT, "test/helpers/sign-in-once.ts"), email, password],
    { cwd: ROOT, env: { ...process.env, DATABASE_URL: url } },
  );
  return JSON.parse(stdout.trim().split("\n").at(-1) as string);
}

it("moves users of the old shape in as owners, idempotently, and they sign in with their old password", {
  timeout: 180_000,
}, async () => {
  const name = `crm_auth_migration_${randomBytes(4).toString("hex")}`;
  await withClient(ADMIN_URL, (client) => client.query(`CREATE DATABASE "${name}"`));
  const url = Object.assign(new URL(ADMIN_URL), { pathname: `/${name}` }).toString();
  const previous = mkdtempSync(path.join(os.tmpdir(), "migrations-before-"));
  try {
    // The database as the release before this one left it: every migration before it, none after.
    cpSync(MIGRATIONS, previous, { recursive: true });
    for (const name of [NEW, ...LATER]) rmSync(path.join(previous, name), { recursive: true });
    await migrateDatabase({ url }, { migrationsDir: previous, log: () => undefined });
    const hashA = await bcrypt.hash("old password of alice", 12);
    const hashB = await bcrypt.hash("old password of bob", 12);
    await withClient(url, async (client) => {
      await client.query(`INSERT INTO "Organisation" (id, slug, name, "updatedAt") VALUES
        ('org_a', 'acme', 'Acme MSP', now()), ('org_b', 'globex', 'Globex', now())`);
      await client.query(
        `INSERT INTO "User" (id, "orgId", email, name, "passwordHash", "updatedAt") VALUES
          ('user_a', 'org_a', 'alice@acme.example', 'Alice', $1, now()),
          ('user_b', 'org_b', 'bob@globex.example', NULL, $2, now()),
          ('user_c', 'org_a', 'carol@acme.example', 'Carol', $2, now())`,
        [hashA, hashB],
      );
      await client.query(
        `INSERT INTO "Session" (id, "userId", "expiresAt") VALUES ('${"a".repeat(64)}', 'user_a', now() + interval '1 day')`,
      );
    });

    const { applied } = await migrateDatabase({ url }, { log: () => undefined });
    expect(applied).toEqual([NEW, ...LATER]);
    // Run again by hand (as an operator replaying the file would): nothing changes, nothing fails.
    const sql = readFileSync(path.join(MIGRATIONS, NEW, "migration.sql"), "utf8");
    await withClient(url, (client) => client.query(sql));

    await withClient(url, async (client) => {
      const members = await client.query(`SELECT "orgId", "userId", role FROM "Member" ORDER BY "userId"`);
      expect(members.rows).toEqual([
        { orgId: "org_a", userId: "user_a", role: "owner" },
        { orgId: "org_b", userId: "user_b", role: "owner" },
        { orgId: "org_a", userId: "user_c", role: "owner" },
      ]);
      const accounts = await client.query(
        `SELECT "userId", "accountId", "providerId", password FROM "AuthAccount" ORDER BY "userId"`,
      );
      expect(accounts.rows).toEqual([
        { userId: "user_a", accountId: "user_a", providerId: "credential", password: hashA },
        { userId: "user_b", accountId: "user_b", providerId: "credential", password: hashB },
        { userId: "user_c", accountId: "user_c", providerId: "credential", password: hashB },
      ]);
      const users = await client.query(`SELECT id, name FROM "User" ORDER BY id`);
      expect(users.rows).toEqual([
        { id: "user_a", name: "Alice" },
        { id: "user_b", name: "bob" },
        { id: "user_c", name: "Carol" },
      ]);
      // The old cookie's sessions cannot be reached by the new cookie: they ended.
      expect((await client.query(`SELECT count(*)::int AS n FROM "Session"`)).rows).toEqual([{ n: 0 }]);
      const columns = await client.query(
        `SELECT column_name FROM information_schema.columns WHERE table_name = 'User' AND column_name IN ('orgId', 'passwordHash')`,
      );
      expect(columns.rows).toEqual([]);
    });

    expect(await signInOnce(url, "alice@acme.example", "old password of alice")).toEqual({
      userId: "user_a",
      activeOrgId: "org_a",
    });
    expect(await signInOnce(url, "bob@globex.example", "wrong password")).toMatchObject({ status: 401 });
    // Alice's bcrypt hash was replaced by scrypt at that sign-in, and she still signs in; Carol's, unused, is as it was.
    await withClient(url, async (client) => {
      const rows = await client.query(`SELECT "userId", password FROM "AuthAccount" ORDER BY "userId"`);
      expect(rows.rows[0].password).toMatch(/^[0-9a-f]{32}:[0-9a-f]{128}$/);
      expect(rows.rows[2].password).toBe(hashB);
    });
    expect(await signInOnce(url, "alice@acme.example", "old password of alice")).toMatchObject({ userId: "user_a" });
  } finally {
    rmSync(previous, { recursive: true, force: true });
    await withClient(ADMIN_URL, (client) => client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`));
  }
});
