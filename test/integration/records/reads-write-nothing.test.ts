// No GET writes a row: every GET operation of the route table, lists and single records, health scores included, leaves
// every table of the organisation as it was: same rows, and no row rewritten (PostgreSQL gives each new row version a
// new xmin). The audit log (one row per call, docs/api-contract.md §1), the usage slot its trigger marks for the
// roll-up, and the key's lastUsedAt are the call's own record, not data, and are left out.
import pg from "pg";
import { afterAll, beforeAll, expect, it } from "vitest";
import { db } from "../../../server/db/client";
import { ROUTES } from "../../../server/http/pipeline";
import { refreshHealthScores } from "../../../server/records/health/refresh";
import { client, createTestOrg, startApi, type TestServer } from "../../helpers/api";

let server: TestServer;
let pool: pg.Pool;
beforeAll(async () => {
  server = await startApi();
  pool = new pg.Pool({ connectionString: db().url, max: 2 });
});
afterAll(async () => {
  await pool.end();
  await server.close();
});

/** Rows and the newest row version of every table of the organisation (but the call's own audit, usage and key rows). */
async function tableStates(orgId: string): Promise<Record<string, { rows: number; newestVersion: string }>> {
  const tables = await pool.query<{ table: string }>(
    `SELECT table_name AS "table" FROM information_schema.columns
     WHERE table_schema = 'public' AND column_name = 'orgId' AND table_name NOT IN ('AuditLog', 'UsagePendingSlot', 'ApiKey')
     ORDER BY table_name`,
  );
  const states: Record<string, { rows: number; newestVersion: string }> = {};
  for (const { table } of tables.rows) {
    const { rows } = await pool.query<{ rows: number; newest: string | null }>(
      `SELECT count(*)::int AS "rows", max(xmin::text::bigint)::text AS "newest" FROM "${table}" WHERE "orgId" = $1`,
      [orgId],
    );
    states[table] = { rows: rows[0]?.rows ?? 0, newestVersion: rows[0]?.newest ?? "none" };
  }
  return states;
}

it("every GET of the route table, health scores included, writes no row", async () => {
  const org = await createTestOrg();
  const api = client(server.url, org.key);
  const account = (await api("POST", "/accounts", { name: "Read Only Co" })).body.data;
  const resourceIds: Record<string, string> = {
    accounts: account.id,
    "health-scores": account.id,
    contacts: (await api("POST", "/contacts", { email: "ro@example.com", accountId: account.id })).body.data.id,
    deals: (await api("POST", "/deals", { name: "Renewal", accountId: account.id, type: "RENEWAL" })).body.data.id,
    devices: (
      await api("POST", "/devices", { rmmAgentId: "ro-1", accountId: account.id, hostname: "RO-1", isOnline: false })
    ).body.data.id,
    tasks: (await api("POST", "/tasks", { title: "Overdue", accountId: account.id, dueAt: "2020-01-01T00:00:00Z" }))
      .body.data.id,
    touchpoints: (
      await api("POST", "/touchpoints", { accountId: account.id, type: "CALL", direction: "OUTBOUND", subject: "Hi" })
    ).body.data.id,
    notes: (await api("POST", "/notes", { objectType: "Account", objectId: account.id, body: "Note" })).body.data.id,
    "webhook-endpoints": (await api("POST", "/webhook-endpoints", { url: "https://hooks.invalid/ro", events: ["*"] }))
      .body.data.id,
    "custom-fields": (
      await api("POST", "/custom-fields", { resource: "account", key: "tier", label: "Tier", type: "text" })
    ).body.data.id,
  };
  // Reads that need a parameter besides search: the JSON Schema of one resource's custom fields.
  const queries: Record<string, string> = { "/custom-fields/schema": "?resource=account" };
  expect(
    (
      await api("POST", `/health-scores/${account.id}/signals`, {
        source: "nps",
        type: "low",
        severity: "HIGH",
        score: 60,
      })
    ).status,
  ).toBe(201);
  await refreshHealthScores(org.orgId);
  // A replay with nothing to send is complete when it is made, so no worker writes to it while the reads run.
  const replay = await api("POST", `/webhook-endpoints/${resourceIds["webhook-endpoints"]}/replays`, {
    since: new Date(Date.now() - 3_600_000).toISOString(),
  });
  expect(replay.status).toBe(202);
  expect(replay.body.data.status).toBe("completed");
  const ids: Record<string, string> = { ...resourceIds, events: (await api("GET", "/events")).body.data[0].id };

  const before = await tableStates(org.orgId);
  const reads = ROUTES.filter((route) => route.method === "GET" && route.procedure);
  expect(reads.length).toBeGreaterThan(15);
  for (const route of reads) {
    const filled = route.path
      .replace("{replayId}", replay.body.data.id)
      .replace(/\{[^}]+\}/g, ids[route.path.split("/")[1] ?? ""] ?? "missing");
    // Search needs its q; the typo-tolerant search runs too, since nothing is called that.
    const path =
      route.path === "/search" ? `${filled}?q=nothing+is+called+that` : `${filled}${queries[route.path] ?? ""}`;
    for (let i = 0; i < 2; i++) {
      const res = await api("GET", path);
      expect(res.status, `GET ${path}`).toBe(200);
    }
  }
  expect(await tableStates(org.orgId)).toEqual(before);
});
