// Budgets (docs/api-contract.md §8.5; docs/architecture.md, "Budgets: what one request may cost"): PostgreSQL cancels
// a request's statement at its timeout, and nothing of it keeps running; a deadlock is retried, not answered 500; an
// organisation runs a few expensive operations at once across instances, and a budget of database time a minute,
// while another organisation is served as before.
//
// A row lock held by the test makes a request's statement wait as long as the test wants, so timings are the
// database's, not the machine's.
process.env.DB_STATEMENT_TIMEOUT_MS = "1500";

import type { ChildProcess } from "node:child_process";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { withStatementClass } from "../../../server/db/statement-budget";
import { prisma, transaction } from "../../../server/db/transaction";
import { ensureOrganisation } from "../../../server/platform/organisations";
import { client, createKey, createTestOrg, startApi, type TestServer } from "../../helpers/api";
import { spawnApiInstance } from "../../helpers/spawn-instance";

let server: TestServer;
let locker: pg.Client;
// Another connection watches: statistics read inside the locker's transaction would stay as they were at its first read.
let watcher: pg.Client;
const children: ChildProcess[] = [];

beforeAll(async () => {
  server = await startApi();
  locker = new pg.Client({ connectionString: process.env.DATABASE_URL });
  watcher = new pg.Client({ connectionString: process.env.DATABASE_URL });
  await Promise.all([locker.connect(), watcher.connect()]);
});
afterAll(async () => {
  for (const child of children) child.kill("SIGTERM");
  await Promise.all([locker.end(), watcher.end()]);
  await server.close();
});

/** A structured search: one of the expensive operations. */
const SEARCH = { filterGroups: [{ filters: [{ field: "name", operator: "contains", value: "contended" }] }] };

/** Holds a row lock on the account until `release()` (a transaction of the test's own connection). */
async function lockAccount(id: string): Promise<{ release: () => Promise<void> }> {
  await locker.query("BEGIN");
  await locker.query(`SELECT id FROM "Account" WHERE id = $1 FOR UPDATE`, [id]);
  return { release: () => locker.query("COMMIT").then(() => undefined) };
}

/** Statements of this database other than the test's own that run or wait now. */
async function runningStatements(): Promise<{ query: string; wait: string | null }[]> {
  const { rows } = await watcher.query(
    `SELECT query, wait_event_type AS wait FROM pg_stat_activity
      WHERE datname = current_database() AND state = 'active' AND pid <> pg_backend_pid() AND pid <> $1`,
    [(locker as unknown as { processID: number }).processID],
  );
  return rows;
}

/** Waits until `count` statements of the database wait on a lock (the requests that queued behind the test's). */
async function waitingOnLocks(count: number): Promise<void> {
  for (let i = 0; i < 200; i++) {
    const waiting = (await runningStatements()).filter((row) => row.wait === "Lock");
    if (waiting.length >= count) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`fewer than ${count} statements waited on the lock`);
}

describe("statement timeouts", () => {
  it("a statement past the request's budget is cancelled by the database: 503 timeout with Retry-After, the change rolled back, nothing left running", async () => {
    const { key } = await createTestOrg();
    const api = client(server.url, key);
    const account = (await api("POST", "/accounts", { name: "Locked Ltd" })).body.data;
    const lock = await lockAccount(account.id);
    try {
      const started = Date.now();
      const res = await api("PATCH", `/accounts/${account.id}`, { name: "Changed while locked" });
      expect(res.status).toBe(503);
      expect(res.body.error.code).toBe("timeout");
      expect(res.body.error.message).toContain("1.5 s per database statement");
      expect(res.headers.get("retry-after")).toBe("5");
      expect(Date.now() - started).toBeLessThan(5_000);
      // The database stopped the statement: nothing of the request waits on the lock any more.
      expect((await runningStatements()).filter((row) => row.wait === "Lock")).toEqual([]);
    } finally {
      await lock.release();
    }
    expect((await api("GET", `/accounts/${account.id}`)).body.data.name).toBe("Locked Ltd");
  });

  it("background work runs under a longer timeout, maintenance under none, a request's under DB_STATEMENT_TIMEOUT_MS, each on one core", async () => {
    const sleep = () => prisma().$queryRawUnsafe<{ slept: string }[]>("SELECT pg_sleep(1.7)::text AS slept");
    await expect(sleep()).rejects.toMatchObject({ meta: { driverAdapterError: { cause: { originalCode: "57014" } } } });
    await expect(withStatementClass("background", sleep)).resolves.toHaveLength(1);
    const timeouts = await withStatementClass("maintenance", () =>
      prisma().$queryRawUnsafe<{ statement_timeout: string }[]>("SHOW statement_timeout"),
    );
    expect(timeouts[0]?.statement_timeout).toBe("0");
    const request = await prisma().$queryRawUnsafe<{ statement_timeout: string }[]>("SHOW statement_timeout");
    expect(request[0]?.statement_timeout).toBe("1500ms");
    // One statement, one core: no parallel workers for anyone's scan.
    const parallel = await prisma().$queryRawUnsafe<{ max_parallel_workers_per_gather: string }[]>(
      "SHOW max_parallel_workers_per_gather",
    );
    expect(parallel[0]?.max_parallel_workers_per_gather).toBe("0");
  });
});

describe("deadlocks", () => {
  it("two transactions locking two rows in opposite orders both commit: the one PostgreSQL rolls back runs again", async () => {
    const { orgId } = await createTestOrg();
    const [a, b] = await Promise.all(
      ["Deadlock A", "Deadlock B"].map((name) =>
        prisma().account.create({ data: { orgId, name }, select: { id: true } }),
      ),
    );
    const ids = [a?.id as string, b?.id as string];
    for (let round = 0; round < 5; round++) {
      // Each holds its first row before either asks for its second: without a retry one of them fails with 40P01.
      let arrived = 0;
      let open!: () => void;
      const barrier = new Promise<void>((resolve) => {
        open = resolve;
      });
      const meet = async () => {
        arrived += 1;
        if (arrived === 2) open();
        await barrier;
      };
      const runs = [0, 0];
      const lockBoth = (order: string[], index: number) =>
        transaction(async (tx) => {
          runs[index] = (runs[index] ?? 0) + 1;
          await tx.$executeRawUnsafe(`UPDATE "Account" SET "employeeCount" = ${round} WHERE id = $1`, order[0]);
          if (runs[index] === 1) await meet();
          await tx.$executeRawUnsafe(`UPDATE "Account" SET "employeeCount" = ${round} WHERE id = $1`, order[1]);
        });
      await Promise.all([lockBoth(ids, 0), lockBoth([...ids].reverse(), 1)]);
      expect(runs.reduce((sum, value) => sum + value)).toBe(3);
    }
    const counts = await prisma().account.findMany({ where: { id: { in: ids } }, select: { employeeCount: true } });
    expect(counts.map((row) => row.employeeCount)).toEqual([4, 4]);
  });
});

describe("an organisation's budgets", () => {
  it("runs one expensive operation at a time on the Starter plan's 60 requests a minute, across instances; another is 429 with the reason, another organisation's is served", async () => {
    const other = await spawnApiInstance({ KV_TIMEOUT_MS: "2000" }, children);
    // The Starter plan's own limits (30 a key, 60 the organisation a minute): 1 slot, 15 s of database time a minute.
    const starter = await ensureOrganisation(`budget-${Date.now()}`, { plan: "STARTER" });
    const key = await createKey(starter.id, ["accounts:read", "accounts:write"]);
    const api = client(server.url, key);
    const account = (await api("POST", "/accounts", { name: "Contended", externalId: "contended-1" })).body.data;
    const neighbour = client(server.url, (await createTestOrg()).key);
    // Warm: the other instance's first request loads what a cold process loads, which would outlast the lock's wait.
    expect((await client(other, key)("POST", "/accounts/search", SEARCH)).status).toBe(200);
    expect((await neighbour("POST", "/accounts/search", SEARCH)).status).toBe(200);

    const lock = await lockAccount(account.id);
    let bulk: Promise<{ status: number }> | undefined;
    try {
      // A bulk write of the locked account takes the one slot and waits on the lock.
      bulk = api("POST", "/accounts/bulk", { accounts: [{ name: "Bulk", externalId: "contended-1" }] });
      await waitingOnLocks(1);
      const second = await client(other, key)("POST", "/accounts/search", SEARCH);
      expect(second.status).toBe(429);
      expect(second.body.error.code).toBe("rate_limited");
      expect(second.body.error.message).toContain("its limit of 60 requests a minute runs 1 at a time");
      expect(second.headers.get("retry-after")).toBe("1");
      // Cheap requests of the same organisation, and everything of another, are served meanwhile.
      expect((await api("GET", `/accounts/${account.id}`)).status).toBe(200);
      expect((await neighbour("POST", "/accounts/search", SEARCH)).status).toBe(200);
    } finally {
      await lock.release();
    }
    expect((await bulk)?.status).toBe(200);
    // The slot was given back.
    expect((await client(other, key)("POST", "/accounts/search", SEARCH)).status).toBe(200);
  });

  it("refuses an organisation that used its database time for now with 429 and the wait, and serves another", async () => {
    const starter = await ensureOrganisation(`dbtime-${Date.now()}`, { plan: "STARTER" });
    const api = client(server.url, await createKey(starter.id, ["accounts:read", "accounts:write"]));
    const neighbour = client(server.url, (await createTestOrg()).key);
    const account = (await api("POST", "/accounts", { name: "Costly" })).body.data;
    // The Starter plan can spend 3.75 s of database time at once (a quarter of its 15 s a minute): four PATCHes that
    // each wait 1.5 s on the lock until the database cancels them use 6 s.
    const lock = await lockAccount(account.id);
    try {
      const answers = await Promise.all(
        [0, 1, 2, 3].map((i) => api("PATCH", `/accounts/${account.id}`, { name: `Try ${i}` })),
      );
      expect(answers.map((res) => res.status)).toEqual([503, 503, 503, 503]);
    } finally {
      await lock.release();
    }
    await new Promise((resolve) => setTimeout(resolve, 600));
    const refused = await api("GET", `/accounts/${account.id}`);
    expect(refused.status).toBe(429);
    expect(refused.body.error.message).toContain("60 requests a minute allows 15 seconds of database work a minute");
    const wait = Number(refused.headers.get("retry-after"));
    expect(wait).toBeGreaterThanOrEqual(1);
    expect(wait).toBeLessThanOrEqual(10);
    expect((await neighbour("GET", "/accounts")).status).toBe(200);
    // The budget refills at 15 s a minute: after the wait the organisation is served again.
    await new Promise((resolve) => setTimeout(resolve, wait * 1000 + 300));
    expect((await api("GET", `/accounts/${account.id}`)).status).toBe(200);
  });
});
