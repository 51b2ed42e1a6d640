// Search (docs/api-contract.md §4.17, §4.18; docs/architecture.md, "Search"): quick search across types (matching,
// ranking, paging, scopes, tenancy, read-after-write, bounds) and structured search of the lists (filter groups,
// operators, limits, paging), against the real database; and the search indexes exist and are the plan's.

import { InngestTestEngine } from "@inngest/test";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { reindexSearchFunction } from "../../../inngest/functions/reindex-search";
import { prisma } from "../../../server/db/transaction";
import { reindexSearchStep, searchReindexSettled } from "../../../server/records/search/reindex";
import { client, createKey, createTestOrg, startApi, type TestServer } from "../../helpers/api";

let server: TestServer;
beforeAll(async () => {
  server = await startApi();
});
afterAll(() => server.close());

type Api = ReturnType<typeof client>;

async function newOrg(scopes?: readonly string[]) {
  const org = await createTestOrg(scopes);
  return { ...org, api: client(server.url, org.key) };
}

async function ok(api: Api, method: string, path: string, body?: unknown) {
  const res = await api(method, path, body);
  expect(res.status, `${method} ${path} ${JSON.stringify(res.body)}`).toBeLessThan(300);
  return res.body.data;
}

const search = (api: Api, query: Record<string, string | number>) =>
  api("GET", `/search?${new URLSearchParams(Object.entries(query).map(([k, v]) => [k, String(v)]))}`);

/** The `type:label` of each result of a search. */
async function found(api: Api, q: string, extra: Record<string, string | number> = {}): Promise<string[]> {
  const res = await search(api, { q, limit: 100, ...extra });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.data.map((result: { type: string; label: string }) => `${result.type}:${result.label}`);
}

describe("GET /search", () => {
  let org: Awaited<ReturnType<typeof newOrg>>;
  let northwind: { id: string };
  beforeAll(async () => {
    org = await newOrg();
    northwind = await ok(org.api, "POST", "/accounts", {
      name: "Northwind Dental",
      domain: "northwind-dental.example",
      externalId: "PSA-4471",
    });
    await ok(org.api, "POST", "/accounts", { name: "Zürich Café Systems" });
    await ok(org.api, "POST", "/contacts", {
      email: "ann.lee@harbor-logistics.example",
      firstName: "Ann",
      lastName: "Lee",
      phone: "+1 (555) 123-4567",
    });
    await ok(org.api, "POST", "/contacts", {
      email: "renee.obrien@example.com",
      firstName: "Renée",
      lastName: "O'Brien",
    });
    await ok(org.api, "POST", "/deals", { name: "Managed backup renewal", accountId: northwind.id });
    await ok(org.api, "POST", "/devices", {
      rmmAgentId: "agent-7f3c",
      accountId: northwind.id,
      hostname: "NWD-WS-001",
    });
  });

  it("matches word prefixes of every type's identifying text, case- and accent-insensitively", async () => {
    expect(await found(org.api, "northw")).toEqual(["account:Northwind Dental"]);
    expect(await found(org.api, "NORTHWIND-DENTAL.example")).toEqual(["account:Northwind Dental"]);
    expect(await found(org.api, "psa-4471")).toEqual(["account:Northwind Dental"]);
    expect(await found(org.api, "zur caf")).toEqual(["account:Zürich Café Systems"]);
    expect(await found(org.api, "ZÜRICH")).toEqual(["account:Zürich Café Systems"]);
    expect(await found(org.api, "renee obrien")).toEqual(["contact:Renée O'Brien"]);
    expect(await found(org.api, "O'Bri")).toEqual(["contact:Renée O'Brien"]);
    expect(await found(org.api, "backup ren")).toEqual(["deal:Managed backup renewal"]);
    expect(await found(org.api, "nwd-ws")).toEqual(["device:NWD-WS-001"]);
    expect(await found(org.api, "nwdws001")).toEqual(["device:NWD-WS-001"]);
    expect(await found(org.api, "agent-7f3")).toEqual(["device:NWD-WS-001"]);
    // Every word must match as written: with one that matches nothing, only the typo-tolerant search (rank below 1)
    // finds the name.
    const [near] = (await search(org.api, { q: "northwind zzzz" })).body.data;
    expect(near).toMatchObject({ label: "Northwind Dental", rank: expect.any(Number) });
    expect(near.rank).toBeLessThan(1);
  });

  it("finds a contact by email, its domain, and phone digits written any way", async () => {
    for (const q of ["ann.lee@harbor", "harbor-logistics.example", "@harbor-logistics", "ann lee"]) {
      expect(await found(org.api, q), q).toEqual(["contact:Ann Lee"]);
    }
    for (const q of ["5551234567", "15551234567", "555-123-4567", "(555) 123", "123 4567", "+1 555"]) {
      expect(await found(org.api, q, { types: "contact" }), q).toEqual(["contact:Ann Lee"]);
    }
  });

  it("answers the documented shape and ranks an equal name, then a name starting with q, then other matches", async () => {
    const { api } = await newOrg();
    await ok(api, "POST", "/contacts", { email: "ops@acme.example", firstName: "Bo", lastName: "Dahl" });
    await ok(api, "POST", "/accounts", { name: "Big Acme Holdings" });
    await ok(api, "POST", "/accounts", { name: "Acme Dental" });
    const exact = await ok(api, "POST", "/accounts", { name: "Acme", domain: "acme.example" });
    const res = await search(api, { q: "acme" });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ success: true, hasMore: false, nextCursor: expect.any(String) });
    expect(res.body.data[0]).toEqual({
      type: "account",
      id: exact.id,
      label: "Acme",
      sublabel: "acme.example",
      rank: expect.any(Number),
    });
    expect(res.body.data.map((result: { label: string }) => result.label)).toEqual([
      "Acme",
      "Acme Dental",
      "Big Acme Holdings",
      "Bo Dahl",
    ]);
    const ranks = res.body.data.map((result: { rank: number }) => result.rank);
    expect([...ranks].sort((a, b) => b - a)).toEqual(ranks);
    expect(ranks[2]).toBeGreaterThan(ranks[3]);
  });

  it("pages through every result with cursors, without repeats or gaps, however deep", async () => {
    const { api } = await newOrg();
    const names = Array.from({ length: 23 }, (_, i) => ({ name: `Harbor ${i % 3 === 0 ? "Harbor " : ""}Site ${i}` }));
    await ok(api, "POST", "/accounts/bulk", { accounts: names });
    await ok(api, "POST", "/contacts", { email: "harbor@ops.example" });
    const all = (await search(api, { q: "harbor", limit: 100 })).body.data.map((r: { id: string }) => r.id);
    expect(all).toHaveLength(24);
    const seen: string[] = [];
    let cursor: string | undefined;
    for (let pageNo = 0; pageNo < 30; pageNo++) {
      const res = await search(api, { q: "harbor", limit: 5, ...(cursor ? { cursor } : {}) });
      expect(res.status).toBe(200);
      seen.push(...res.body.data.map((r: { id: string }) => r.id));
      if (!res.body.hasMore) break;
      cursor = res.body.nextCursor;
    }
    expect(seen).toEqual(all);
    // A cursor belongs to its search.
    const other = await search(api, { q: "harbour", cursor: cursor as string });
    expect(other.status).toBe(400);
    expect(other.body.error.code).toBe("bad_request");
    expect((await search(api, { q: "harbor", cursor: "not-a-cursor" })).status).toBe(400);
  });

  it("finds a record in the request after its write, follows changes, and forgets deleted records", async () => {
    const { api } = await newOrg();
    const device = await ok(api, "POST", "/devices", {
      rmmAgentId: "rmm-1",
      accountId: (await ok(api, "POST", "/accounts", { name: "Quayside" })).id,
      hostname: "QS-LAPTOP-17",
    });
    expect(await found(api, "qs-laptop")).toEqual(["device:QS-LAPTOP-17"]);
    await ok(api, "PATCH", `/devices/${device.id}`, { hostname: "QS-DESKTOP-02" });
    expect(await found(api, "qs-laptop")).toEqual([]);
    expect(await found(api, "qs-desk")).toEqual(["device:QS-DESKTOP-02"]);
    await ok(api, "DELETE", `/devices/${device.id}`);
    expect(await found(api, "qs-desk")).toEqual([]);
    // Bulk writes are indexed too, and an erased contact is gone from search with its data.
    await ok(api, "POST", "/contacts/bulk", { contacts: [{ email: "mia@quay.example", firstName: "Mia" }] });
    const [mia] = (await search(api, { q: "mia" })).body.data;
    expect(mia).toMatchObject({ type: "contact", label: "Mia", sublabel: "mia@quay.example" });
    await ok(api, "POST", `/contacts/${mia.id}/erase`);
    expect(await found(api, "mia")).toEqual([]);
    expect(await prisma().searchEntry.count({ where: { id: mia.id } })).toBe(0);
  });

  it("is tolerant of a typo when nothing matches as written, ranking those results below 1", async () => {
    const results = (await search(org.api, { q: "Nortwind" })).body.data;
    expect(results.map((r: { label: string }) => r.label)).toEqual(["Northwind Dental"]);
    expect(results[0].rank).toBeLessThan(1);
    expect(await found(org.api, "qqqqxxxx")).toEqual([]);
  });

  it("never shows another organisation's records", async () => {
    const other = await newOrg();
    await ok(other.api, "POST", "/accounts", { name: "Northwind Labs" });
    expect(await found(other.api, "northwind")).toEqual(["account:Northwind Labs"]);
    expect(await found(org.api, "northwind")).toEqual(["account:Northwind Dental"]);
    expect(await found(other.api, "ann lee")).toEqual([]);
  });

  it("searches only the types the key may read: 403 for a type it may not, or for a key that reads none", async () => {
    const reader = client(server.url, await createKey(org.orgId, ["contacts:read"]));
    const hits = await found(reader, "example");
    expect(hits).toEqual(expect.arrayContaining(["contact:Ann Lee", "contact:Renée O'Brien"]));
    expect(hits.every((hit) => hit.startsWith("contact:"))).toBe(true);
    const refused = await search(reader, { q: "northwind", types: "account,contact" });
    expect(refused.status).toBe(403);
    expect(refused.body.error.code).toBe("insufficient_scope");
    expect(refused.body.error.message).toContain("accounts:read");
    const none = await search(client(server.url, await createKey(org.orgId, ["tasks:read"])), { q: "northwind" });
    expect(none.status).toBe(403);
    const admin = client(server.url, await createKey(org.orgId, ["admin:read"]));
    expect(await found(admin, "northwind", { types: "account,deal" })).toEqual(["account:Northwind Dental"]);
  });

  it("refuses q empty, missing or over 200 characters, and unknown types, with 422", async () => {
    const queries: Array<Record<string, string | number>> = [
      { q: "" },
      { q: "   " },
      {},
      { q: "a".repeat(201) },
      { q: "x", types: "task" },
      { q: "x", limit: 101 },
    ];
    for (const query of queries) {
      const res = await search(org.api, query);
      expect(res.status, JSON.stringify(query)).toBe(422);
      expect(res.body.error.code).toBe("validation_error");
    }
    expect((await search(org.api, { q: "a".repeat(200) })).status).toBe(200);
  });

  it("uses its GIN indexes (the migration's, which Prisma cannot express, without pending lists) for matching and for typos", async () => {
    const indexes = await prisma().$queryRaw<Array<{ indexname: string; indexdef: string }>>`
      SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'SearchEntry' ORDER BY indexname`;
    expect(indexes.map((index) => index.indexdef)).toEqual([
      expect.stringMatching(
        /"SearchEntry_orgId_document_idx" .* USING gin \("orgId", document\) WITH \(fastupdate='?off'?\)/,
      ),
      expect.stringMatching(
        /"SearchEntry_orgId_fuzzy_idx" .* USING gin \("orgId", fuzzy (public\.)?gin_trgm_ops\) WITH \(fastupdate='?off'?\)/,
      ),
      expect.stringMatching(/"SearchEntry_pkey"/),
    ]);
    // An organisation large enough that reading all its entries costs more than the index lookup; the table is still
    // small enough in a test database that a sequential scan would win, so that is ruled out. Its word is one no other
    // test writes, so the planner's estimate of the match does not depend on what the other tests left in the table.
    const big = await newOrg();
    await ok(big.api, "POST", "/accounts/bulk", {
      accounts: [{ name: "Quillfeather Dental" }, ...Array.from({ length: 400 }, (_, i) => ({ name: `Filler ${i}` }))],
    });
    const plans = await prisma().$transaction(async (tx) => {
      // The other tests' writes are in the indexes already (no pending list): the plan right after them is the steady one.
      await tx.$executeRaw`ANALYZE "SearchEntry"`;
      await tx.$executeRaw`SET LOCAL enable_seqscan = off`;
      const explain = async (sql: string) =>
        (await tx.$queryRawUnsafe<Array<{ "QUERY PLAN": string }>>(sql)).map((row) => row["QUERY PLAN"]).join("\n");
      return [
        await explain(`EXPLAIN SELECT "id" FROM "SearchEntry" AS s
          WHERE s."orgId" = '${big.orgId}' AND s."document" @@ "search_query"('quillf')`),
        // At this size the organisation's few hundred entries are cheaper to read than the trigram lookup (the bench
        // measures the other end); without the organisation the trigram column is the only way in.
        await explain(`EXPLAIN SELECT "id" FROM "SearchEntry" AS s WHERE "search_normalise"('nortwind') <<% s."fuzzy"`),
      ];
    });
    expect(plans[0], plans[0]).toMatch(
      /Bitmap Index Scan on "SearchEntry_orgId_document_idx".*\n\s+Index Cond: \(\("orgId" = .*\) AND \(document @@/,
    );
    expect(plans[1], plans[1]).toMatch(
      /Bitmap Index Scan on "SearchEntry_orgId_fuzzy_idx".*\n\s+Index Cond: \(fuzzy %>>/,
    );
  });
});

describe("POST /{resource}/search", () => {
  let org: Awaited<ReturnType<typeof newOrg>>;
  const ids: Record<string, string> = {};
  beforeAll(async () => {
    org = await newOrg();
    const make = async (name: string, fields: Record<string, unknown>) => {
      ids[name] = (await ok(org.api, "POST", "/accounts", { name, ...fields })).id;
    };
    await make("Alpha", { lifecycleStatus: "ACTIVE", employeeCount: 40, domain: "alpha.example" });
    await make("Bravo", { lifecycleStatus: "ACTIVE", employeeCount: 120 });
    await make("Charlie", { lifecycleStatus: "AT_RISK", employeeCount: 300, domain: "charlie.example" });
    await make("Delta", { lifecycleStatus: "PROSPECT", employeeCount: 900, industry: "Healthcare" });
    await make("Echo", { lifecycleStatus: "CHURNED" });
  });

  const names = async (body: unknown, resource = "accounts") => {
    const res = await org.api("POST", `/${resource}/search`, body);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body.data.map((record: { name?: string; email?: string }) => record.name ?? record.email);
  };
  const f = (field: string, operator: string, value?: unknown) => ({ field, operator, value });

  it("matches contains in every group that names the same field, folding the field once per row", async () => {
    expect(
      await names({
        filterGroups: [
          { filters: [f("name", "contains", "ALP")] },
          { filters: [f("name", "contains", "rav"), f("lifecycleStatus", "eq", "ACTIVE")] },
          { filters: [f("name", "contains", "elt"), f("domain", "contains", "nowhere")] },
          { filters: [f("name", "contains", "cho"), f("name", "contains", "ech")] },
        ],
      }),
    ).toEqual(["Alpha", "Bravo", "Echo"]);
    // With a sort and a cursor, the shared fold keeps the keyset working.
    const body = {
      filterGroups: [{ filters: [f("name", "contains", "a")] }, { filters: [f("name", "contains", "o")] }],
      sort: "name:desc",
      limit: 2,
    };
    const first = await org.api("POST", "/accounts/search", body);
    expect(first.body.data.map((record: { name: string }) => record.name)).toEqual(["Echo", "Delta"]);
    const next = await org.api("POST", "/accounts/search", { ...body, cursor: first.body.nextCursor });
    expect(next.body.data.map((record: { name: string }) => record.name)).toEqual(["Charlie", "Bravo"]);
  });

  it("ORs groups of ANDed filters, with the list's operators and exists, notExists and between", async () => {
    expect(await names({})).toEqual(["Alpha", "Bravo", "Charlie", "Delta", "Echo"]);
    expect(
      await names({
        filterGroups: [
          { filters: [f("lifecycleStatus", "eq", "ACTIVE"), f("employeeCount", "gte", 100)] },
          { filters: [f("industry", "eq", "healthcare")] },
        ],
      }),
    ).toEqual(["Bravo", "Delta"]);
    expect(await names({ filterGroups: [{ filters: [f("domain", "exists")] }] })).toEqual(["Alpha", "Charlie"]);
    expect(await names({ filterGroups: [{ filters: [f("employeeCount", "notExists")] }] })).toEqual(["Echo"]);
    expect(await names({ filterGroups: [{ filters: [f("employeeCount", "between", [100, 300])] }] })).toEqual([
      "Bravo",
      "Charlie",
    ]);
    expect(
      await names({
        filterGroups: [{ filters: [f("lifecycleStatus", "in", ["AT_RISK", "CHURNED"])] }],
        sort: "name:desc",
      }),
    ).toEqual(["Echo", "Charlie"]);
    expect(await names({ filterGroups: [{ filters: [f("name", "contains", "LT")] }] })).toEqual(["Delta"]);
    expect(await names({ filterGroups: [{ filters: [f("domain", "ne", "alpha.example")] }] })).toEqual(["Charlie"]);
    const created = (await org.api("GET", `/accounts/${ids.Charlie}`)).body.data.createdAt;
    expect(
      await names({ filterGroups: [{ filters: [f("createdAt", "between", ["2000-01-01T00:00:00Z", created])] }] }),
    ).toEqual(["Alpha", "Bravo", "Charlie"]);
  });

  it("pages with the list's keyset cursor, without repeats or gaps, and sorts as the list does", async () => {
    const body = { filterGroups: [{ filters: [f("employeeCount", "exists")] }], sort: "employeeCount:desc" };
    const all = await names(body);
    expect(all).toEqual(["Delta", "Charlie", "Bravo", "Alpha"]);
    const seen: string[] = [];
    let cursor: string | undefined;
    for (let pageNo = 0; pageNo < 10; pageNo++) {
      const res = await org.api("POST", "/accounts/search", { ...body, limit: 1, ...(cursor ? { cursor } : {}) });
      seen.push(...res.body.data.map((record: { name: string }) => record.name));
      if (!res.body.hasMore) break;
      cursor = res.body.nextCursor;
    }
    expect(seen).toEqual(all);
  });

  it("searches every list: contacts by email, with tenancy", async () => {
    await ok(org.api, "POST", "/contacts", { email: "kim@alpha.example", lastName: "Kim" });
    await ok(org.api, "POST", "/contacts", { email: "lee@bravo.example" });
    const body = { filterGroups: [{ filters: [f("email", "contains", "@alpha.")] }] };
    expect(await names(body, "contacts")).toEqual(["kim@alpha.example"]);
    const other = await newOrg();
    const res = await other.api("POST", "/contacts/search", body);
    expect(res.body.data).toEqual([]);
  });

  it("refuses, with 422 naming the place, what a list would refuse and what exceeds the limits", async () => {
    const refused = async (body: unknown, path: string) => {
      const res = await org.api("POST", "/accounts/search", body);
      expect(res.status, JSON.stringify(body).slice(0, 200)).toBe(422);
      expect(res.body.error.code).toBe("validation_error");
      expect(res.body.error.details.map((d: { path: string[] }) => d.path.join("."))).toContain(path);
    };
    const group = { filters: [f("name", "eq", "Alpha")] };
    await refused({ filterGroups: Array(6).fill(group) }, "filterGroups");
    await refused({ filterGroups: [{ filters: Array(7).fill(f("name", "eq", "Alpha")) }] }, "filterGroups.0.filters");
    await refused({ filterGroups: [{ filters: [] }] }, "filterGroups.0.filters");
    await refused({ filterGroups: [{ filters: [f("colour", "eq", "red")] }] }, "filterGroups.0.filters.0.field");
    await refused({ filterGroups: [{ filters: [f("name", "like", "a")] }] }, "filterGroups.0.filters.0.operator");
    await refused(
      { filterGroups: [{ filters: [f("employeeCount", "contains", 4)] }] },
      "filterGroups.0.filters.0.operator",
    );
    await refused(
      { filterGroups: [{ filters: [f("name", "between", ["a", "b"])] }] },
      "filterGroups.0.filters.0.operator",
    );
    await refused({ filterGroups: [{ filters: [f("employeeCount", "gt", "50")] }] }, "filterGroups.0.filters.0.value");
    await refused(
      { filterGroups: [{ filters: [f("createdAt", "gt", "yesterday")] }] },
      "filterGroups.0.filters.0.value",
    );
    await refused(
      { filterGroups: [{ filters: [f("lifecycleStatus", "eq", "GONE")] }] },
      "filterGroups.0.filters.0.value",
    );
    await refused({ filterGroups: [{ filters: [f("name", "eq")] }] }, "filterGroups.0.filters.0.value");
    await refused({ filterGroups: [{ filters: [f("domain", "exists", true)] }] }, "filterGroups.0.filters.0.value");
    await refused(
      { filterGroups: [{ filters: [f("employeeCount", "between", [9, 1])] }] },
      "filterGroups.0.filters.0.value",
    );
    await refused(
      { filterGroups: [{ filters: [f("name", "in", Array(51).fill("x"))] }] },
      "filterGroups.0.filters.0.value",
    );
    await refused({ filterGroups: [{ filters: [f("name", "in", [])] }] }, "filterGroups.0.filters.0.value");
    // contains takes at most 100 characters, on a text field, an external key and a custom field alike.
    for (const field of ["name", "externalId", "customFields.psa_note"]) {
      await refused(
        { filterGroups: [{ filters: [f("name", "eq", "x")] }, { filters: [f(field, "contains", "a".repeat(101))] }] },
        "filterGroups.1.filters.0.value",
      );
    }
    const hundred = await org.api("POST", "/accounts/search", {
      filterGroups: [{ filters: [f("name", "contains", "a".repeat(100))] }],
    });
    expect(hundred.status, JSON.stringify(hundred.body)).toBe(200);
    await refused({ limit: 101 }, "limit");
    await refused({ filterGroups: [group], colour: "red" }, "colour");
    const long = { filterGroups: Array(5).fill({ filters: Array(6).fill(f("name", "eq", "x".repeat(250))) }) };
    await refused(long, "");
  });
});

describe("custom fields in search", () => {
  it("finds records by the values of searchable custom fields, following the fields' definitions", async () => {
    const { api } = await newOrg();
    const define = (body: Record<string, unknown>) => ok(api, "POST", "/custom-fields", { label: "F", ...body });
    const psaId = await define({ resource: "account", key: "psa_id", type: "text", searchable: true });
    await define({ resource: "account", key: "secret_note", type: "text" });
    await define({
      resource: "account",
      key: "stack",
      type: "multiSelect",
      searchable: true,
      options: [
        { value: "m365", label: "Microsoft 365" },
        { value: "sentinelone", label: "SentinelOne" },
      ],
    });
    await define({ resource: "device", key: "asset_tag", type: "text", searchable: true });
    const account = await ok(api, "POST", "/accounts", {
      name: "Harbour Freight",
      customFields: { psa_id: "CW-88231", secret_note: "quokka", stack: ["sentinelone"] },
    });
    await ok(api, "POST", "/devices", {
      rmmAgentId: "rmm-cf-1",
      accountId: account.id,
      hostname: "HF-SRV-01",
      customFields: { asset_tag: "TAG-5521" },
    });
    expect(await found(api, "cw-88231")).toEqual(["account:Harbour Freight"]);
    expect(await found(api, "sentinel")).toEqual(["account:Harbour Freight"]);
    expect(await found(api, "tag 5521")).toEqual(["device:HF-SRV-01"]);
    // A field not marked searchable is not searched.
    expect(await found(api, "quokka")).toEqual([]);
    // A match in a custom value ranks below a match in the name.
    await ok(api, "POST", "/accounts", { name: "CW-88231 Holdings" });
    expect(await found(api, "cw-88231")).toEqual(["account:CW-88231 Holdings", "account:Harbour Freight"]);

    // Changing the value re-indexes the record in the same write; clearing it forgets it.
    await ok(api, "PATCH", `/accounts/${account.id}`, { customFields: { psa_id: "CW-90000" } });
    expect(await found(api, "cw-90000")).toEqual(["account:Harbour Freight"]);
    expect(await found(api, "cw-88231")).toEqual(["account:CW-88231 Holdings"]);
    // Marking a field searchable, or no longer, re-indexes the records holding its values (after the request: without
    // a worker, in this process).
    const secret = (await api("GET", "/custom-fields?resource=account")).body.data.find(
      (field: { key: string }) => field.key === "secret_note",
    );
    await ok(api, "PATCH", `/custom-fields/${secret.id}`, { searchable: true });
    await searchReindexSettled();
    expect(await found(api, "quokka")).toEqual(["account:Harbour Freight"]);
    await ok(api, "PATCH", `/custom-fields/${psaId.id}`, { searchable: false });
    await searchReindexSettled();
    expect(await found(api, "cw-90000")).toEqual([]);
    // An archived field's values are not searched.
    await ok(api, "DELETE", `/custom-fields/${secret.id}`);
    await searchReindexSettled();
    expect(await found(api, "quokka")).toEqual([]);

    // Another organisation with the same field finds only its own records.
    const other = await newOrg();
    await ok(other.api, "POST", "/custom-fields", {
      resource: "account",
      key: "psa_id",
      label: "PSA id",
      type: "text",
      searchable: true,
    });
    expect(await found(other.api, "sentinel")).toEqual([]);
    expect(await found(other.api, "tag")).toEqual([]);
  });

  it("re-indexes a field's values in the background when searchable changes, not in the request", async () => {
    const { api, orgId } = await newOrg();
    const field = await ok(api, "POST", "/custom-fields", {
      resource: "account",
      key: "psa_ref",
      label: "PSA ref",
      type: "text",
    });
    for (const name of ["Wombat One", "Wombat Two", "Wombat Three", "Wombat Four", "Wombat Five"])
      await ok(api, "POST", "/accounts", { name, customFields: { psa_ref: `numbat-${name.split(" ")[1]}` } });
    await ok(api, "POST", "/accounts", { name: "No value" });
    const marks = () => prisma().searchReindex.findMany({ where: { orgId } });
    // With a worker configured (one that cannot be reached here), the request only marks the field.
    const dev = process.env.INNGEST_DEV;
    process.env.INNGEST_DEV = "http://127.0.0.1:9";
    try {
      await ok(api, "PATCH", `/custom-fields/${field.id}`, { searchable: true });
    } finally {
      if (dev === undefined) delete process.env.INNGEST_DEV;
      else process.env.INNGEST_DEV = dev;
    }
    expect(await found(api, "numbat")).toEqual([]);
    expect(await marks()).toEqual([
      expect.objectContaining({ resource: "account", key: "psa_ref", afterCreatedAt: null, afterId: null }),
    ]);
    // Window by window: two records a step here, each step moving the field's place on.
    expect(await reindexSearchStep(2)).toEqual({ idle: false, records: 2 });
    expect((await marks())[0]?.afterId).toEqual(expect.any(String));
    expect(await found(api, "numbat")).toHaveLength(2);
    // A change meanwhile starts the field again from its first record.
    await prisma().$executeRaw`UPDATE "CustomField" SET "searchable" = false WHERE "id" = ${field.id}`;
    await prisma().$executeRaw`UPDATE "CustomField" SET "searchable" = true WHERE "id" = ${field.id}`;
    expect((await marks())[0]?.afterId).toBeNull();
    // The Inngest function runs the steps until nothing waits.
    const { result, error } = await new InngestTestEngine({ function: reindexSearchFunction }).execute({
      events: [{ name: "crm/search.reindex.requested", data: { orgId } }],
    });
    expect(error).toBeUndefined();
    expect(result).toEqual({ steps: 1, records: 3 });
    expect(await marks()).toEqual([]);
    expect(await found(api, "numbat")).toEqual(expect.arrayContaining(["account:Wombat One", "account:Wombat Five"]));
    expect(await found(api, "numbat")).toHaveLength(5);
  });

  it("filters structured search by custom fields, with the list's operators, exists, notExists and between", async () => {
    const { api } = await newOrg();
    await ok(api, "POST", "/custom-fields", { resource: "account", key: "seats", label: "Seats", type: "number" });
    await ok(api, "POST", "/custom-fields", {
      resource: "account",
      key: "tier",
      label: "Tier",
      type: "select",
      options: [
        { value: "gold", label: "Gold" },
        { value: "silver", label: "Silver" },
      ],
    });
    await ok(api, "POST", "/custom-fields", { resource: "account", key: "managed", label: "Managed", type: "boolean" });
    await ok(api, "POST", "/accounts", { name: "A", customFields: { seats: 10, tier: "gold", managed: true } });
    await ok(api, "POST", "/accounts", { name: "B", customFields: { seats: 55, tier: "silver" } });
    await ok(api, "POST", "/accounts", { name: "C", customFields: { seats: 120 } });
    await ok(api, "POST", "/accounts", { name: "D", industry: "Legal" });
    const f = (field: string, operator: string, value?: unknown) => ({ field, operator, value });
    const names = async (filters: ReturnType<typeof f>[][], sort?: string) => {
      const res = await api("POST", "/accounts/search", {
        filterGroups: filters.map((group) => ({ filters: group })),
        ...(sort ? { sort } : {}),
      });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      return res.body.data.map((record: { name: string }) => record.name);
    };
    expect(await names([[f("customFields.tier", "eq", "gold")]])).toEqual(["A"]);
    expect(await names([[f("customFields.seats", "between", [50, 150])]], "customFields.seats:desc")).toEqual([
      "C",
      "B",
    ]);
    expect(
      await names([[f("customFields.tier", "in", ["gold", "silver"]), f("customFields.seats", "gte", 20)]]),
    ).toEqual(["B"]);
    expect(await names([[f("customFields.tier", "notExists")], [f("customFields.managed", "eq", true)]])).toEqual([
      "A",
      "C",
      "D",
    ]);
    expect(await names([[f("customFields.seats", "exists"), f("customFields.tier", "ne", "gold")]])).toEqual(["B"]);
    expect(await names([[f("customFields.seats", "lt", 11)], [f("industry", "eq", "legal")]])).toEqual(["A", "D"]);

    const refused = async (filter: ReturnType<typeof f>, place: string, message?: string) => {
      const res = await api("POST", "/accounts/search", { filterGroups: [{ filters: [f("name", "exists"), filter] }] });
      expect(res.status, JSON.stringify(filter)).toBe(422);
      expect(res.body.error.code).toBe("validation_error");
      const detail = res.body.error.details.find(
        (d: { path: string[] }) => d.path.join(".") === `filterGroups.0.filters.1.${place}`,
      );
      expect(detail, JSON.stringify(res.body.error.details)).toBeDefined();
      if (message) expect(detail.message).toContain(message);
    };
    await refused(f("customFields.colour", "eq", "red"), "field", "no custom field of accounts has the key colour");
    await refused(f("customFields.Bad-Key", "eq", "red"), "field");
    await refused(f("customFields.tier", "gt", "gold"), "operator", "a select field takes eq, ne, in");
    await refused(f("customFields.managed", "between", [true, false]), "operator");
    await refused(f("customFields.seats", "eq", "many"), "value", "must be a number");
    await refused(f("customFields.tier", "eq", "bronze"), "value", "is not an option of tier");
    await refused(f("customFields.seats", "exists", 1), "value");
    await refused(f("customFields.seats", "in", []), "value");
    await refused(f("customFields.seats", "between", [50, 10]), "value", "low at most high");
    // Custom fields of another organisation are unknown here.
    const other = await newOrg();
    const res = await other.api("POST", "/accounts/search", {
      filterGroups: [{ filters: [f("customFields.tier", "eq", "gold")] }],
    });
    expect(res.status).toBe(422);
    // Notes have no custom fields.
    const notes = await api("POST", "/notes/search", {
      filterGroups: [{ filters: [f("customFields.tier", "exists")] }],
    });
    expect(notes.status).toBe(422);
    expect(notes.body.error.details[0].path.join(".")).toBe("filterGroups.0.filters.0.field");
  });
});
