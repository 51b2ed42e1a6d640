import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { prisma } from "../../../server/db/transaction";
import { client, createTestOrg, expectKeysetPaging, startApi, type TestServer } from "../../helpers/api";

let server: TestServer;
let api: ReturnType<typeof client>;
let orgId: string;

beforeAll(async () => {
  server = await startApi();
  const org = await createTestOrg();
  orgId = org.orgId;
  api = client(server.url, org.key);
});
afterAll(() => server.close());

describe("POST /accounts", () => {
  it("creates an account with 201 and the envelope", async () => {
    const res = await api("POST", "/accounts", {
      name: "Acme IT",
      industry: "Legal",
      employeeCount: 40,
      externalId: "a-1",
    });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      success: true,
      data: {
        name: "Acme IT",
        lifecycleStatus: "PROSPECT",
        industry: "Legal",
        employeeCount: 40,
        externalId: "a-1",
        domain: null,
      },
    });
    expect(res.body.requestId).toMatch(/^req_[0-9a-f]{24}$/);
    expect(res.headers.get("x-request-id")).toBe(res.body.requestId);
    expect(res.body.timestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    const row = await prisma().account.findUnique({ where: { id: res.body.data.id } });
    expect(row).toMatchObject({ orgId, name: "Acme IT", externalId: "a-1" });
  });

  it("refuses a missing name, unknown fields and wrong types with 422 details", async () => {
    const res = await api("POST", "/accounts", { industry: "x", colour: "red", employeeCount: "12" });
    expect(res.status).toBe(422);
    expect(res.body.success).toBe(false);
    expect(res.body.error.code).toBe("validation_error");
    const paths = res.body.error.details.map((d: { path: string[] }) => d.path.join("."));
    expect(paths).toEqual(expect.arrayContaining(["name", "colour", "employeeCount"]));
    for (const detail of res.body.error.details) expect(typeof detail.message).toBe("string");
  });

  it("refuses an empty name and a duplicate externalId", async () => {
    expect((await api("POST", "/accounts", { name: "  " })).status).toBe(422);
    await api("POST", "/accounts", { name: "First", externalId: "dup-1" });
    const res = await api("POST", "/accounts", { name: "Second", externalId: "dup-1" });
    expect(res.status).toBe(422);
    expect(res.body.error.details[0].path).toEqual(["externalId"]);
  });
});

describe("GET/PATCH /accounts/{id}", () => {
  it("gets, patches and leaves updatedAt alone on a no-op patch", async () => {
    const created = (await api("POST", "/accounts", { name: "Patch Me", industry: "Retail" })).body.data;
    const got = await api("GET", `/accounts/${created.id}`);
    expect(got.status).toBe(200);
    expect(got.body.data).toEqual(created);

    const patched = await api("PATCH", `/accounts/${created.id}`, {
      lifecycleStatus: "ACTIVE",
      industry: null,
      employeeCount: 12,
    });
    expect(patched.status).toBe(200);
    expect(patched.body.data).toMatchObject({
      id: created.id,
      name: "Patch Me",
      lifecycleStatus: "ACTIVE",
      industry: null,
      employeeCount: 12,
    });
    expect(Date.parse(patched.body.data.updatedAt)).toBeGreaterThan(Date.parse(created.updatedAt) - 1);

    const noop = await api("PATCH", `/accounts/${created.id}`, { lifecycleStatus: "ACTIVE" });
    expect(noop.body.data.updatedAt).toBe(patched.body.data.updatedAt);
  });

  it("answers 404 for an unknown id and 400 for a malformed one", async () => {
    const missing = await api("GET", "/accounts/doesnotexist123");
    expect(missing.status).toBe(404);
    expect(missing.body.error.code).toBe("not_found");
    const malformed = await api("GET", "/accounts/bad%20id!");
    expect(malformed.status).toBe(400);
    expect(malformed.body.error.code).toBe("bad_request");
    expect((await api("PATCH", "/accounts/doesnotexist123", { name: "x" })).status).toBe(404);
  });
});

describe("DELETE /accounts/{id}", () => {
  it("soft-deletes to CHURNED and keeps the record", async () => {
    const created = (await api("POST", "/accounts", { name: "Soft", lifecycleStatus: "ACTIVE" })).body.data;
    const res = await api("DELETE", `/accounts/${created.id}`);
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ id: created.id, lifecycleStatus: "CHURNED" });
    expect((await api("GET", `/accounts/${created.id}`)).body.data.lifecycleStatus).toBe("CHURNED");
    expect(await prisma().account.count({ where: { id: created.id } })).toBe(1);
  });

  it("hard-deletes with force=true", async () => {
    const created = (await api("POST", "/accounts", { name: "Hard" })).body.data;
    const res = await api("DELETE", `/accounts/${created.id}?force=true`);
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({ id: created.id, deleted: true });
    expect(await prisma().account.count({ where: { id: created.id } })).toBe(0);
    expect((await api("GET", `/accounts/${created.id}`)).status).toBe(404);
    expect((await api("DELETE", `/accounts/${created.id}?force=true`)).status).toBe(404);
  });

  it("refuses a force value other than true/false", async () => {
    const created = (await api("POST", "/accounts", { name: "Force?" })).body.data;
    for (const value of ["yes", "TRUE", "1", "", "true,true"]) {
      const res = await api("DELETE", `/accounts/${created.id}?force=${value}`);
      expect(res.status, value).toBe(422);
      expect(res.body.error.code).toBe("validation_error");
      expect(res.body.error.details, value).toEqual([{ path: ["force"], message: "expected true or false" }]);
    }
    expect((await api("GET", `/accounts/${created.id}`)).body.data.lifecycleStatus).toBe("PROSPECT");
  });
});

describe("GET /accounts", () => {
  let list: ReturnType<typeof client>;
  beforeAll(async () => {
    const org = await createTestOrg();
    list = client(server.url, org.key);
    const accounts = [
      { name: "Delta", industry: "Legal", employeeCount: 10, lifecycleStatus: "ACTIVE" },
      { name: "alpha", industry: "legal", employeeCount: 300, lifecycleStatus: "PROSPECT" },
      { name: "Charlie", industry: "Healthcare", employeeCount: null, lifecycleStatus: "ACTIVE" },
      { name: "Bravo", industry: "Healthcare", employeeCount: 50, lifecycleStatus: "AT_RISK" },
      { name: "Echo", industry: null, employeeCount: 10, lifecycleStatus: "CHURNED" },
    ];
    for (const account of accounts) expect((await list("POST", "/accounts", account)).status).toBe(201);
  });

  it("lists in creation order by default with the list envelope", async () => {
    const res = await list("GET", "/accounts");
    expect(res.status).toBe(200);
    expect(res.body.data.map((a: { name: string }) => a.name)).toEqual(["Delta", "alpha", "Charlie", "Bravo", "Echo"]);
    expect(res.body.hasMore).toBe(false);
    expect(res.body.nextCursor).toBe(res.body.data[4].id);
  });

  it("filters by lifecycle and industry (case-insensitive)", async () => {
    const active = await list("GET", "/accounts?lifecycle=ACTIVE");
    expect(active.body.data.map((a: { name: string }) => a.name)).toEqual(["Delta", "Charlie"]);
    const legal = await list("GET", "/accounts?industry=LEGAL");
    expect(legal.body.data.map((a: { name: string }) => a.name)).toEqual(["Delta", "alpha"]);
    const both = await list("GET", "/accounts?industry=Healthcare&lifecycle=AT_RISK");
    expect(both.body.data.map((a: { name: string }) => a.name)).toEqual(["Bravo"]);
    expect((await list("GET", "/accounts?lifecycle=GONE")).status).toBe(422);
  });

  it("matches the industry filter literally: LIKE wildcards match only themselves", async () => {
    for (const pattern of ["%", "_egal", "L%", "%25", "\\"]) {
      const res = await list("GET", `/accounts?industry=${encodeURIComponent(pattern)}`);
      expect(res.status, pattern).toBe(200);
      expect(res.body.data, pattern).toEqual([]);
    }
  });

  it("sorts by allow-listed fields, nulls last; ignores unknown fields, or refuses them when asked to be strict", async () => {
    const byName = await list("GET", "/accounts?sort=name:asc");
    expect(byName.body.data.map((a: { name: string }) => a.name)).toEqual([
      "Bravo",
      "Charlie",
      "Delta",
      "Echo",
      "alpha",
    ]);
    const bySize = await list("GET", "/accounts?sort=employeeCount:desc,name:asc");
    expect(bySize.body.data.map((a: { name: string }) => a.name)).toEqual([
      "alpha",
      "Bravo",
      "Delta",
      "Echo",
      "Charlie",
    ]);
    const names = (res: { body: { data: Array<{ name: string }> } }) => res.body.data.map((a) => a.name);
    const ignored = await list("GET", "/accounts?sort=colour:desc");
    expect(ignored.status).toBe(200);
    expect(names(ignored)).toEqual(["Delta", "alpha", "Charlie", "Bravo", "Echo"]);
    expect(ignored.headers.get("preference-applied")).toBe("handling=lenient");
    expect(ignored.headers.get("sort-ignored")).toBe('"colour:desc"');
    const partly = await list("GET", "/accounts?sort=colour:desc,name:desc");
    expect(names(partly)).toEqual(["alpha", "Echo", "Delta", "Charlie", "Bravo"]);
    expect(partly.headers.get("sort-ignored")).toBe('"colour:desc"');
    for (const sort of ["colour:desc", "colour:desc,name:desc"]) {
      const unknown = await list("GET", `/accounts?sort=${sort}`, undefined, { Prefer: "handling=strict" });
      expect(unknown.status).toBe(422);
      expect(unknown.headers.get("preference-applied")).toBe("handling=strict");
      expect(unknown.body.error.details).toEqual([
        {
          path: ["sort"],
          message:
            '"colour" is not a sort field of this list; allowed fields: name, createdAt, updatedAt, employeeCount, customFields.<key>, each as field, field:asc or field:desc',
        },
      ]);
    }
  });

  it("pages with limit and cursor under every sort, without gaps or repeats", async () => {
    await expectKeysetPaging(list, "/accounts", [
      "",
      "name:asc",
      "employeeCount:asc",
      "employeeCount:desc",
      "updatedAt:desc",
    ]);
  });

  it("refuses limit above 100 or below 1, and an unknown cursor", async () => {
    expect((await list("GET", "/accounts?limit=101")).status).toBe(422);
    expect((await list("GET", "/accounts?limit=0")).status).toBe(422);
    expect((await list("GET", "/accounts?limit=abc")).status).toBe(422);
    const cursor = await list("GET", "/accounts?cursor=nosuchrecord");
    expect(cursor.status).toBe(400);
    expect(cursor.body.error.code).toBe("bad_request");
  });

  it("returns only records updated after updatedAfter", async () => {
    const before = (await list("GET", "/accounts?limit=100")).body.data;
    const mark = new Date().toISOString();
    await new Promise((resolve) => setTimeout(resolve, 5));
    await list("PATCH", `/accounts/${before[1].id}`, { employeeCount: 301 });
    const res = await list("GET", `/accounts?updatedAfter=${encodeURIComponent(mark)}`);
    expect(res.body.data.map((a: { id: string }) => a.id)).toEqual([before[1].id]);
    expect((await list("GET", "/accounts?updatedAfter=yesterday")).status).toBe(422);
  });
});

describe("POST /accounts/bulk", () => {
  it("creates new externalIds, updates existing ones, and keeps omitted fields", async () => {
    const org = await createTestOrg();
    const bulk = client(server.url, org.key);
    const first = await bulk("POST", "/accounts/bulk", {
      accounts: [
        { name: "One", externalId: "x-1", industry: "Legal", employeeCount: 5 },
        { name: "Two", externalId: "x-2" },
        { name: "No external id" },
      ],
    });
    expect(first.status).toBe(200);
    expect(first.body.data).toMatchObject({ created: 3, updated: 0, total: 3 });
    expect(
      first.body.data.results.map((r: { externalId: string | null; action: string }) => [r.externalId, r.action]),
    ).toEqual([
      ["x-1", "created"],
      ["x-2", "created"],
      [null, "created"],
    ]);

    const second = await bulk("POST", "/accounts/bulk", {
      accounts: [
        { name: "One renamed", externalId: "x-1" },
        { name: "Three", externalId: "x-3", lifecycleStatus: "ACTIVE" },
      ],
    });
    expect(second.body.data).toMatchObject({ created: 1, updated: 1, total: 2 });
    expect(second.body.data.results[0]).toEqual({
      externalId: "x-1",
      id: first.body.data.results[0].id,
      action: "updated",
    });
    const one = await bulk("GET", `/accounts/${first.body.data.results[0].id}`);
    expect(one.body.data).toMatchObject({ name: "One renamed", industry: "Legal", employeeCount: 5 });
    expect(await prisma().account.count({ where: { orgId: org.orgId } })).toBe(4);
  });

  it("refuses more than 500 items, an empty list, invalid items and repeated externalIds without writing", async () => {
    const org = await createTestOrg();
    const bulk = client(server.url, org.key);
    const tooMany = Array.from({ length: 501 }, (_, i) => ({ name: `A${i}` }));
    const res = await bulk("POST", "/accounts/bulk", { accounts: tooMany });
    expect(res.status).toBe(422);
    expect(res.body.error.details[0].path).toEqual(["accounts"]);
    expect((await bulk("POST", "/accounts/bulk", { accounts: [] })).status).toBe(422);
    const invalid = await bulk("POST", "/accounts/bulk", { accounts: [{ name: "ok" }, { name: "" }] });
    expect(invalid.status).toBe(422);
    expect(invalid.body.error.details[0].path).toEqual(["accounts", "1", "name"]);
    const repeated = await bulk("POST", "/accounts/bulk", {
      accounts: [
        { name: "a", externalId: "r" },
        { name: "b", externalId: "r" },
      ],
    });
    expect(repeated.status).toBe(422);
    expect(repeated.body.error.details[0].path).toEqual(["accounts", "1", "externalId"]);
    expect(await prisma().account.count({ where: { orgId: org.orgId } })).toBe(0);
  });

  it("accepts exactly 500 items", async () => {
    const org = await createTestOrg();
    const bulk = client(server.url, org.key);
    const items = Array.from({ length: 500 }, (_, i) => ({ name: `Bulk ${i}`, externalId: `b-${i}` }));
    const res = await bulk("POST", "/accounts/bulk", { accounts: items });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ created: 500, updated: 0, total: 500 });
    expect(new Set(res.body.data.results.map((r: { id: string }) => r.id)).size).toBe(500);
  });
});
