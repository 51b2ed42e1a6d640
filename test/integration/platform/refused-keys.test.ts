// Refused clients cost the database nothing and never shut others out (docs/api-contract.md §5.2, §8.2;
// docs/architecture.md, "API keys and the key cache"). A database of this file's own, so PostgreSQL's count of its
// transactions (test/helpers/database-transactions.ts) is this file's requests' alone; it is first migrated to the
// schema before keyed checksums and given keys of the first format, as a deployment that upgrades has them.

// The test client stands for one proxy, so a case picks its client address with X-Forwarded-For; the anonymous window
// is the default's size; windows of this file's own in the shared Redis.
process.env.TRUST_PROXY = "1";
process.env.RATE_LIMIT_ANONYMOUS_PER_MIN = "120";
process.env.KV_PREFIX = `${process.env.KV_PREFIX ?? "test:"}refused-keys-${process.pid}:`;
// Event-loop lag on a loaded test machine must not tip a burst into the per-process fallback count.
process.env.KV_TIMEOUT_MS = "2000";
resetEnvCache();

import { randomBytes } from "node:crypto";
import { cpSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { closeDb } from "../../../server/db/client";
import { migrateDatabase } from "../../../server/db/migrate";
import { prisma } from "../../../server/db/transaction";
import { resetEnvCache } from "../../../server/env";
import { hashApiKey } from "../../../server/platform/api-keys/format";
import { FULL_ACCESS_SCOPES } from "../../../server/platform/api-keys/scopes";
import { revokeApiKey } from "../../../server/platform/api-keys/service";
import { canonicalAddress } from "../../../server/platform/client-address";
import { flushAudit } from "../../../server/platform/request-log/record";
import { client, createKey, createTestOrg, forgedKey, startApi, type TestServer, unknownKey } from "../../helpers/api";
import { settledTransactions } from "../../helpers/database-transactions";
import { ADMIN_URL, admin } from "../../helpers/fresh-database";
import { legacyApiKey } from "../../helpers/legacy-keys";

/** The migration that introduced keyed checksums: the database is first built without it. */
const KEYED_CHECKSUMS = "20261129140000_keyed_key_checksums";
const ANONYMOUS_LIMIT = 120;

const database = `crm_refused_keys_${Date.now()}_${randomBytes(3).toString("hex")}`;
/** The API as served, request log included. */
let server: TestServer;
/** The same pipeline without the request log, to show what the key check alone costs. */
let unlogged: TestServer;
/** First-format keys stored before the migration: one in use, one revoked before it. */
const legacy = { usable: legacyApiKey(), revoked: legacyApiKey(true) };

/** A client address of its own, as the service writes it (RFC 5952). */
const address = () =>
  canonicalAddress(`2001:db8:${randomBytes(2).toString("hex")}::${randomBytes(2).toString("hex")}`) as string;
const from = (target: TestServer, ip: string, key?: string) =>
  client(target.url, key)("GET", "/accounts", undefined, { "X-Forwarded-For": ip });
/** The database's transactions so far, once the request-log rows queued until now are stored. */
const transactions = async () => {
  await flushAudit();
  return settledTransactions(ADMIN_URL, database);
};

beforeAll(async () => {
  await admin(`CREATE DATABASE "${database}"`);
  const url = new URL(ADMIN_URL);
  url.pathname = `/${database}`;
  // The schema as it was before keyed checksums, with an organisation and its first-format keys.
  const before = mkdtempSync(path.join(tmpdir(), "crm-migrations-"));
  try {
    for (const entry of readdirSync("prisma/migrations"))
      if (entry < KEYED_CHECKSUMS)
        cpSync(path.join("prisma/migrations", entry), path.join(before, entry), { recursive: true });
    await migrateDatabase({ url: url.toString() }, { migrationsDir: before, log: () => undefined });
  } finally {
    rmSync(before, { recursive: true, force: true });
  }
  const sql = new pg.Client({ connectionString: url.toString() });
  await sql.connect();
  try {
    await sql.query(
      `INSERT INTO "Organisation" ("id", "slug", "name", "updatedAt", "rateLimitPerKey", "rateLimitPerOrg")
       VALUES ('org_first_format', $1, 'First format', now(), 100000, 100000)`,
      [`first-${randomBytes(4).toString("hex")}`],
    );
    for (const [id, raw, revoked] of [
      ["key_usable", legacy.usable, false],
      ["key_revoked", legacy.revoked, true],
    ] as const) {
      await sql.query(
        `INSERT INTO "ApiKey" ("id", "orgId", "name", "keyHash", "prefix", "isTest", "scopes", "revokedAt")
         VALUES ($1, 'org_first_format', 'first format', $2, $3, $4, $5, $6)`,
        [
          id,
          hashApiKey(raw),
          raw.slice(0, 13),
          raw.startsWith("msp_test_"),
          FULL_ACCESS_SCOPES,
          revoked ? new Date() : null,
        ],
      );
    }
  } finally {
    await sql.end();
  }
  // The upgrade: the rest of the migrations, then a process that starts on them.
  await migrateDatabase({ url: url.toString() }, { log: () => undefined });
  process.env.DATABASE_URL = url.toString();
  resetEnvCache();
  await closeDb();
  server = await startApi();
  unlogged = await startApi(0, { audit: false });
}, 180_000);

afterAll(async () => {
  await server?.close();
  await unlogged?.close();
  await flushAudit();
  await closeDb();
  await admin(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`);
});

describe("keys issued before keyed checksums", () => {
  it("keep working: a first-format key stored before the migration is answered 200, a revoked one 401", async () => {
    expect((await from(server, address(), legacy.usable)).status).toBe(200);
    const revoked = await from(server, address(), legacy.revoked);
    expect(revoked.status).toBe(401);
    expect(revoked.body.error.code).toBe("unauthorized");
  });
});

describe("a key that cannot be valid costs no database transaction", () => {
  it("keys failing the checksum, and first-format keys with a valid CRC32 never issued or revoked before start: 401, no transaction", async () => {
    // The process has read what it recognises keys by (a request made it read it).
    expect((await from(unlogged, address(), legacy.usable)).status).toBe(200);
    const before = await transactions();
    const statuses = [];
    for (let i = 0; i < 10; i++) {
      statuses.push((await from(unlogged, address(), forgedKey(i % 2 === 0))).status);
      statuses.push((await from(unlogged, address(), legacyApiKey(i % 2 === 0))).status);
    }
    statuses.push((await from(unlogged, address(), legacy.revoked)).status);
    expect(statuses).toEqual(Array(21).fill(401));
    expect((await transactions()) - before).toBe(0);
  });

  it("a key with a valid checksum is looked up once: unknown or revoked, it is refused from memory after that", async () => {
    const org = await createTestOrg(["accounts:read"]);
    expect((await from(unlogged, address(), org.key)).status).toBe(200);
    await revokeApiKey(org.orgId, org.apiKeyId);
    const unknown = await unknownKey();
    const before = await transactions();
    // The first time each is presented it is looked up, and refused.
    expect((await from(unlogged, address(), unknown)).status).toBe(401);
    expect((await from(unlogged, address(), org.key)).status).toBe(401);
    const looked = await transactions();
    expect(looked - before).toBeGreaterThan(0);
    // After that, from any address, nothing.
    const statuses = [];
    for (let i = 0; i < 5; i++) {
      statuses.push((await from(unlogged, address(), unknown)).status);
      statuses.push((await from(unlogged, address(), org.key)).status);
    }
    expect(statuses).toEqual(Array(10).fill(401));
    expect((await transactions()) - looked).toBe(0);
  });
});

describe("a flood of bad keys from one address", () => {
  it(`200 bad-key requests from a fresh address (${ANONYMOUS_LIMIT} × 401, then 429) cost fewer than 5 database transactions, every one in the request log`, async () => {
    const ip = address();
    const before = await transactions();
    const statuses: number[] = [];
    // Ten at a time, so a busy test machine does not stretch the flood over many request-log batches (the benchmark
    // sends them one by one). What a guessing client sends: keys of the current format, and first-format keys with a
    // CRC32 anyone computes.
    for (let i = 0; i < 200; i += 10) {
      const batch = Array.from({ length: 10 }, (_, j) =>
        from(server, ip, (i + j) % 2 === 0 ? forgedKey() : legacyApiKey()),
      );
      statuses.push(...(await Promise.all(batch)).map((res) => res.status));
    }
    expect(statuses.filter((status) => status === 401)).toHaveLength(ANONYMOUS_LIMIT);
    expect(statuses.filter((status) => status === 429)).toHaveLength(200 - ANONYMOUS_LIMIT);
    // The request log's batches (one INSERT per 200 rows, else within a second for rows without an organisation) are
    // all the database saw; the last is stored by the count.
    const spent = (await transactions()) - before;
    expect(spent).toBeLessThan(5);
    const logged = await prisma().auditLog.groupBy({
      by: ["status"],
      where: { ip },
      _count: true,
      orderBy: { status: "asc" },
    });
    expect(logged.map((row) => [row.status, row._count])).toEqual([
      [401, ANONYMOUS_LIMIT],
      [429, 200 - ANONYMOUS_LIMIT],
    ]);
  });

  it("a valid key from an address whose anonymous window is full is answered 200 and counted against its own windows", async () => {
    const ip = address();
    for (let i = 0; i < ANONYMOUS_LIMIT; i++) expect((await from(unlogged, ip, forgedKey())).status).toBe(401);
    expect((await from(unlogged, ip, forgedKey())).status).toBe(429);
    // A key this process has never seen (not in its cache), sent from that address.
    const org = await createTestOrg(["accounts:read"], { limits: { perKey: 40, perOrg: 80 } });
    const fresh = await createKey(org.orgId, ["accounts:read"]);
    const first = await from(server, ip, fresh);
    expect(first.status).toBe(200);
    expect(first.headers.get("ratelimit-policy")).toBe('"key";q=40;w=60, "org";q=80;w=60');
    expect(first.headers.get("x-ratelimit-remaining")).toBe("39");
    const second = await from(server, ip, fresh);
    expect(second.status).toBe(200);
    expect(second.headers.get("x-ratelimit-remaining")).toBe("38");
    // The organisation's other key counts in the organisation's window, not in the address's.
    const other = await from(server, ip, org.key);
    expect(other.status).toBe(200);
    expect(other.headers.get("x-ratelimit-remaining")).toBe("39");
    // The address's anonymous requests are still refused.
    expect((await from(server, ip)).status).toBe(429);
  });
});
