// Structured search's OR of filter groups (docs/api-contract.md §4.18; docs/architecture.md, "Search"): groups that an
// index each finds run as one limited query per group, united and paged by the list's keyset. The answers equal those
// of the single OR condition they replace (rows, order, cursors, tenancy, errors), and on a large organisation the
// plan reads each group through an index, never the organisation's rows.

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { prisma } from "../../../server/db/transaction";
import { ACCOUNT_FILTERS, type AccountListQuery } from "../../../server/records/accounts/schema";
import { accountListStatement } from "../../../server/records/accounts/service";
import { CURSOR_KINDS, sealCursor } from "../../../server/records/pagination";
import type { StructuredSearch } from "../../../server/records/search/schema";
import { listQueryOf } from "../../../server/records/search/structured";
import { client, createTestOrg, startApi, type TestServer } from "../../helpers/api";

let server: TestServer;
beforeAll(async () => {
  server = await startApi();
});
afterAll(() => server.close());

type Api = ReturnType<typeof client>;

async function newOrg() {
  const org = await createTestOrg();
  return { ...org, api: client(server.url, org.key) };
}

async function ok(api: Api, method: string, path: string, body?: unknown) {
  const res = await api(method, path, body);
  expect(res.status, `${method} ${path} ${JSON.stringify(res.body).slice(0, 300)}`).toBeLessThan(300);
  return res.body.data;
}

const f = (field: string, operator: string, value?: unknown) => ({ field, operator, value });

/** The requirement's groups: two of indexed columns and one of a custom field's equality. */
const GROUPS = [
  { filters: [f("lifecycleStatus", "eq", "AT_RISK"), f("employeeCount", "between", [400, 600])] },
  { filters: [f("employeeCount", "gte", 90000)] },
  { filters: [f("customFields.tier", "eq", "platinum")] },
];

/** The same groups as one OR condition in SQL: what structured search answered before it branched. */
const SINGLE_CONDITION = `(("lifecycleStatus" = 'AT_RISK' AND "employeeCount" BETWEEN 400 AND 600)
  OR "employeeCount" >= 90000 OR "customFields" @> '{"tier":"platinum"}')`;

const LIFECYCLES = ["PROSPECT", "ACTIVE", "AT_RISK", "CHURNED"] as const;

async function defineTier(api: Api) {
  await ok(api, "POST", "/custom-fields", {
    resource: "account",
    key: "tier",
    label: "Tier",
    type: "select",
    options: [
      { value: "gold", label: "Gold" },
      { value: "platinum", label: "Platinum" },
    ],
  });
}

describe("POST /accounts/search with OR groups", () => {
  let org: Awaited<ReturnType<typeof newOrg>>;
  beforeAll(async () => {
    org = await newOrg();
    await defineTier(org.api);
    // One bulk request: every account has the same createdAt, so the default order ties on it throughout. Employee
    // counts tie too (500 many times), some are missing (nulls sort last), and records match two or three groups.
    const accounts = Array.from({ length: 48 }, (_, i) => ({
      name: `Group ${String(i % 7).padStart(2, "0")}`,
      lifecycleStatus: i % 5 === 0 ? (i % 10 === 0 ? "AT_RISK" : "ACTIVE") : LIFECYCLES[i % 4],
      ...(i % 11 === 5
        ? {}
        : { employeeCount: i % 5 === 0 ? 500 : i % 9 === 0 || i % 7 === 3 ? 95_000 : 1_000 + i * 10 }),
      customFields: { tier: i % 6 === 0 || i === 5 ? "platinum" : "gold" },
    }));
    await ok(org.api, "POST", "/accounts/bulk", { accounts });
    // Another organisation's matches are never answered.
    const other = await newOrg();
    await defineTier(other.api);
    await ok(other.api, "POST", "/accounts/bulk", {
      accounts: [
        { name: "Other", lifecycleStatus: "AT_RISK", employeeCount: 500, customFields: { tier: "platinum" } },
        { name: "Other big", employeeCount: 95_000 },
      ],
    });
  });

  const oracle = async (order: string) =>
    (
      await prisma().$queryRawUnsafe<Array<{ id: string }>>(
        `SELECT "id" FROM "Account" WHERE "orgId" = $1 AND ${SINGLE_CONDITION} ORDER BY ${order}`,
        org.orgId,
      )
    ).map((row) => row.id);

  /** Every page of the search `limit` at a time; each page's cursor, and its signed form of before, continue it. */
  const pages = async (body: Record<string, unknown>, limit: number) => {
    const seen: string[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < 100; page++) {
      const request = { ...body, limit, ...(cursor ? { cursor } : {}) };
      const res = await org.api("POST", "/accounts/search", request);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      const ids = res.body.data.map((account: { id: string }) => account.id);
      if (cursor) {
        const signed = sealCursor(CURSOR_KINDS.text, Buffer.from(cursor, "utf8"));
        const again = await org.api("POST", "/accounts/search", { ...request, cursor: signed });
        expect(again.body.data.map((account: { id: string }) => account.id)).toEqual(ids);
      }
      seen.push(...ids);
      if (!res.body.hasMore) {
        expect(res.body.nextCursor === null || res.body.nextCursor === ids.at(-1)).toBe(true);
        return seen;
      }
      cursor = res.body.nextCursor as string;
      expect(cursor).toBe(ids.at(-1));
    }
    throw new Error("the search did not end");
  };

  it("answers the rows of the single OR condition, each once, in the list's order, page after page", async () => {
    const cases = [
      { sort: undefined, order: `"createdAt" ASC, "id" ASC` },
      { sort: "employeeCount:desc", order: `"employeeCount" DESC NULLS LAST, "id" DESC` },
      { sort: "name:asc", order: `"name" ASC, "id" ASC` },
      { sort: "name:desc,employeeCount", order: `"name" DESC, "employeeCount" ASC NULLS LAST, "id" DESC` },
    ];
    for (const { sort, order } of cases) {
      const expected = await oracle(order);
      // Overlapping groups: some records match two or three, and each is answered once.
      expect(expected.length).toBe(16);
      expect(new Set(expected).size).toBe(expected.length);
      const body = { filterGroups: GROUPS, ...(sort ? { sort } : {}) };
      const whole = await org.api("POST", "/accounts/search", { ...body, limit: 100 });
      expect(
        whole.body.data.map((account: { id: string }) => account.id),
        `sort=${sort}`,
      ).toEqual(expected);
      for (const limit of [1, 3, 7]) expect(await pages(body, limit), `sort=${sort} limit=${limit}`).toEqual(expected);
    }
  });

  it("answers as before when a group needs the organisation's rows, and with one group", async () => {
    const mixed = [...GROUPS, { filters: [f("name", "contains", "group 03")] }];
    const expected = (
      await prisma().$queryRawUnsafe<Array<{ id: string }>>(
        `SELECT "id" FROM "Account" WHERE "orgId" = $1 AND (${SINGLE_CONDITION} OR "name" ILIKE '%group 03%')
         ORDER BY "employeeCount" DESC NULLS LAST, "id" DESC`,
        org.orgId,
      )
    ).map((row) => row.id);
    expect(await pages({ filterGroups: mixed, sort: "employeeCount:desc" }, 4)).toEqual(expected);
    expect(await pages({ filterGroups: [GROUPS[1]] }, 2)).toEqual(
      (
        await prisma().$queryRawUnsafe<Array<{ id: string }>>(
          `SELECT "id" FROM "Account" WHERE "orgId" = $1 AND "employeeCount" >= 90000 ORDER BY "createdAt", "id"`,
          org.orgId,
        )
      ).map((row) => row.id),
    );
  });

  it("reads its own writes, and refuses what it refused before", async () => {
    const created = await ok(org.api, "POST", "/accounts", { name: "Fresh", employeeCount: 123_456 });
    const res = await org.api("POST", "/accounts/search", { filterGroups: GROUPS, sort: "employeeCount:desc" });
    expect(res.body.data[0].id).toBe(created.id);
    await ok(org.api, "DELETE", `/accounts/${created.id}?force=true`);

    const unknownField = await org.api("POST", "/accounts/search", {
      filterGroups: [GROUPS[0], { filters: [f("customFields.nothing", "eq", "x")] }],
    });
    expect(unknownField.status).toBe(422);
    expect(unknownField.body.error.code).toBe("validation_error");
    expect(unknownField.body.error.details.map((d: { path: string[] }) => d.path.join("."))).toEqual([
      "filterGroups.1.filters.0.field",
    ]);
    const badCursor = await org.api("POST", "/accounts/search", { filterGroups: GROUPS, cursor: "not a cursor!" });
    expect(badCursor.status).toBe(400);
    expect(badCursor.body.error.code).toBe("bad_request");
    const deleted = await org.api("POST", "/accounts/search", { filterGroups: GROUPS, cursor: created.id });
    expect(deleted.status).toBe(400);
  });
});

describe("POST /deals/search with OR groups", () => {
  it("answers the single OR condition's rows and pages over an enum, a number, a money amount and a reference", async () => {
    const org = await newOrg();
    const bulk = await ok(org.api, "POST", "/accounts/bulk", { accounts: [{ name: "A" }, { name: "B" }] });
    const [a, b] = bulk.results.map((result: { id: string }) => result.id);
    const stages = ["QUALIFICATION", "DISCOVERY", "PROPOSAL", "NEGOTIATION"] as const;
    await ok(org.api, "POST", "/deals/bulk", {
      deals: Array.from({ length: 36 }, (_, i) => ({
        name: `Deal ${i}`,
        accountId: i % 9 === 0 ? b : a,
        stage: stages[i % 4],
        probability: (i * 7) % 100,
        estimatedMrr: i % 5 === 0 ? 5000.5 : i % 7 === 0 ? 5000.49 : 100 + i,
      })),
    });
    const groups = [
      { filters: [f("stage", "eq", "PROPOSAL"), f("probability", "gte", 50)] },
      { filters: [f("estimatedMrr", "gte", 5000.5)] },
      { filters: [f("accountId", "eq", b)] },
    ];
    const condition = `(("stage" = 'PROPOSAL' AND "probability" >= 50) OR "estimatedMrr" >= 5000.5 OR "accountId" = $2)`;
    for (const { sort, order } of [
      { sort: undefined, order: `"createdAt" ASC, "id" ASC` },
      { sort: "estimatedMrr:desc", order: `"estimatedMrr" DESC, "id" DESC` },
    ]) {
      const expected = (
        await prisma().$queryRawUnsafe<Array<{ id: string }>>(
          `SELECT "id" FROM "Deal" WHERE "orgId" = $1 AND ${condition} ORDER BY ${order}`,
          org.orgId,
          b,
        )
      ).map((row) => row.id);
      expect(expected.length).toBeGreaterThan(10);
      const seen: string[] = [];
      let cursor: string | undefined;
      for (let page = 0; page < 50; page++) {
        const res = await org.api("POST", "/deals/search", {
          filterGroups: groups,
          limit: 4,
          ...(sort ? { sort } : {}),
          ...(cursor ? { cursor } : {}),
        });
        expect(res.status, JSON.stringify(res.body)).toBe(200);
        seen.push(...res.body.data.map((deal: { id: string }) => deal.id));
        if (!res.body.hasMore) break;
        cursor = res.body.nextCursor;
      }
      expect(seen, `sort=${sort}`).toEqual(expected);
    }
  });
});

describe("the plan of OR groups on a large organisation", () => {
  it("reads each group through an index and never scans the organisation's accounts", async () => {
    const org = await newOrg();
    await defineTier(org.api);
    // 30,000 accounts none of the groups matches, and 8 + 8 + 4 that they do; written without the search triggers,
    // which this plan does not read.
    await prisma().$transaction([
      prisma().$executeRawUnsafe(`SET LOCAL session_replication_role = replica`),
      prisma().$executeRawUnsafe(
        `INSERT INTO "Account" ("id", "orgId", "name", "lifecycleStatus", "employeeCount", "customFields", "createdAt", "updatedAt")
         SELECT 'plan_' || $1 || '_' || i, $1, 'Account ' || i,
                (ARRAY['PROSPECT','ACTIVE','AT_RISK','CHURNED']::"LifecycleStatus"[])[1 + i % 4],
                CASE WHEN i <= 8 THEN 500 WHEN i <= 16 THEN 90000 + i ELSE 1000 + (i * 37) % 50000 END,
                CASE WHEN i BETWEEN 17 AND 20 THEN '{"tier":"platinum"}' WHEN i % 10 = 0 THEN '{"tier":"gold"}'
                     ELSE '{}' END::jsonb,
                TIMESTAMP '2024-01-01' + i * INTERVAL '1 second', now()
         FROM generate_series(1, 30000) AS i`,
        org.orgId,
      ),
      prisma().$executeRawUnsafe(
        `UPDATE "Account" SET "lifecycleStatus" = 'AT_RISK' WHERE "orgId" = $1 AND "employeeCount" = 500`,
        org.orgId,
      ),
    ]);
    await prisma().$executeRawUnsafe(`ANALYZE "Account"`);

    const plan = async (body: Record<string, unknown>) => {
      const query = listQueryOf({ limit: 50, ...body } as StructuredSearch, ACCOUNT_FILTERS) as AccountListQuery;
      const statement = await accountListStatement(org.orgId, query);
      const rows = await prisma().$queryRawUnsafe<Array<{ "QUERY PLAN": string }>>(
        `EXPLAIN ${statement.sql}`,
        ...statement.values,
      );
      return rows.map((row) => row["QUERY PLAN"]).join("\n");
    };
    const through = (index: string) => new RegExp(`(Index (Only )?Scan using|Bitmap Index Scan on) "${index}"`);
    const first = await org.api("POST", "/accounts/search", { filterGroups: GROUPS, limit: 10 });
    expect(first.body.data).toHaveLength(10);
    for (const body of [
      { filterGroups: GROUPS },
      { filterGroups: GROUPS, sort: "employeeCount:desc" },
      { filterGroups: GROUPS, sort: "name" },
      { filterGroups: GROUPS, cursor: first.body.nextCursor },
    ]) {
      const text = await plan(body);
      expect(text, text).not.toMatch(/Seq Scan on "Account"/);
      expect(text, text).toMatch(through("Account_orgId_lifecycleStatus_employeeCount_id_idx"));
      expect(text, text).toMatch(through("Account_orgId_employeeCount_id_idx"));
      expect(text, text).toMatch(through("Account_customFields_idx"));
      // No branch walks the organisation's accounts in the sort's order, and the page is read back by primary key.
      expect(text, text).not.toMatch(through("Account_orgId_createdAt_id_idx"));
      expect(text, text).not.toMatch(through("Account_orgId_name_id_idx"));
      expect(text, text).toMatch(through("Account_pkey"));
    }
    // The search answers the 20 matches, as the single condition does.
    const all = await org.api("POST", "/accounts/search", { filterGroups: GROUPS, limit: 100 });
    expect(all.body.data).toHaveLength(20);
  });
});

it("looks a custom value up among the organisation's own records: another organisation's 20,000 with it are not read", async () => {
  const [mine, theirs] = [await newOrg(), await newOrg()];
  await defineTier(mine.api);
  await defineTier(theirs.api);
  await prisma().$transaction([
    prisma().$executeRawUnsafe(`SET LOCAL session_replication_role = replica`),
    prisma().$executeRawUnsafe(
      `INSERT INTO "Account" ("id", "orgId", "name", "lifecycleStatus", "customFields", "createdAt", "updatedAt")
       SELECT 'theirs_' || $1 || '_' || i, $1, 'Account ' || i, 'ACTIVE'::"LifecycleStatus", '{"tier":"platinum"}'::jsonb, now(), now()
       FROM generate_series(1, 20000) AS i
       UNION ALL
       SELECT 'mine_' || $2 || '_' || i, $2, 'Account ' || i, 'ACTIVE'::"LifecycleStatus",
              CASE WHEN i <= 4 THEN '{"tier":"platinum"}' ELSE '{"tier":"gold"}' END::jsonb, now(), now()
       FROM generate_series(1, 2000) AS i`,
      theirs.orgId,
      mine.orgId,
    ),
  ]);
  await prisma().$executeRawUnsafe(`ANALYZE "Account"`);
  const body = { limit: 50, filterGroups: [{ filters: [f("customFields.tier", "eq", "platinum")] }] };
  const statement = await accountListStatement(
    mine.orgId,
    listQueryOf(body as StructuredSearch, ACCOUNT_FILTERS) as AccountListQuery,
  );
  const [row] = await prisma().$queryRawUnsafe<Array<{ "QUERY PLAN": unknown }>>(
    `EXPLAIN (ANALYZE, FORMAT JSON) ${statement.sql}`,
    ...statement.values,
  );
  const scans: Array<{ index: string; rows: number }> = [];
  const walk = (node: Record<string, unknown>) => {
    if (typeof node["Index Name"] === "string") {
      scans.push({ index: node["Index Name"] as string, rows: node["Actual Rows"] as number });
    }
    for (const child of (node.Plans as Record<string, unknown>[] | undefined) ?? []) walk(child);
  };
  const [explained] = (row?.["QUERY PLAN"] ?? []) as Array<{ Plan: Record<string, unknown> }>;
  expect(explained).toBeDefined();
  walk(explained?.Plan ?? {});
  // The index hands over this organisation's four matches, not the other's 20,000 to be dropped by "orgId".
  expect(scans).toContainEqual({ index: "Account_customFields_idx", rows: 4 });
  const found = await mine.api("POST", "/accounts/search", body);
  expect(found.body.data.map((account: { id: string }) => account.id).sort()).toEqual(
    [1, 2, 3, 4].map((i) => `mine_${mine.orgId}_${i}`).sort(),
  );
  const listed = await mine.api("GET", "/accounts?customFields.tier=platinum");
  expect(listed.body.data).toHaveLength(4);
});
