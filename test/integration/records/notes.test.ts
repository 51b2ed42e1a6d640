// Notes (docs/api-contract.md §2.8, §4.6): notes on Accounts, Deals, Contracts and Leads of the organisation, body
// rules, get one, list filters/sort/pagination, no events, and organisation isolation.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { prisma } from "../../../server/db/transaction";
import { client, createKey, createTestOrg, startApi, type TestServer } from "../../helpers/api";

let server: TestServer;
let api: ReturnType<typeof client>;
let orgId: string;

/** One record of each type a note can be attached to, written straight to the database (no endpoints needed). */
async function makeTargets(org: string) {
  const account = await prisma().account.create({ data: { orgId: org, name: "Noted account" } });
  const deal = await prisma().deal.create({ data: { orgId: org, accountId: account.id, name: "Noted deal" } });
  const contract = await prisma().contract.create({
    data: { orgId: org, accountId: account.id, name: "Noted contract", startDate: new Date("2026-01-01") },
  });
  const lead = await prisma().lead.create({ data: { orgId: org, company: "Noted lead" } });
  return { Account: account.id, Deal: deal.id, Contract: contract.id, Lead: lead.id };
}

let targets: Awaited<ReturnType<typeof makeTargets>>;

beforeAll(async () => {
  server = await startApi();
  const org = await createTestOrg();
  orgId = org.orgId;
  api = client(server.url, org.key);
  targets = await makeTargets(orgId);
});
afterAll(() => server.close());

describe("POST /notes", () => {
  it("creates a note on each object type with 201, the row, the GET shape and note.created", async () => {
    for (const [objectType, objectId] of Object.entries(targets)) {
      const res = await api("POST", "/notes", { objectType, objectId, body: `About this ${objectType}` });
      expect(res.status).toBe(201);
      expect(res.body.data).toEqual({
        id: expect.any(String),
        objectType,
        objectId,
        body: `About this ${objectType}`,
        authorId: null,
        createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
        updatedAt: res.body.data.createdAt,
      });
      const row = await prisma().note.findUnique({ where: { id: res.body.data.id } });
      expect(row).toMatchObject({ orgId, objectType, objectId });
      const got = await api("GET", `/notes/${res.body.data.id}`);
      expect(got.status).toBe(200);
      expect(got.body.data).toEqual(res.body.data);
    }
    expect(await prisma().event.count({ where: { orgId, name: "note.created" } })).toBe(
      await prisma().note.count({ where: { orgId } }),
    );
  });

  it("stores the body as sent (up to 10,000 characters) and an optional authorId", async () => {
    const body = `  # Heading\n${"x".repeat(9_987)}\n`;
    expect(body.length).toBe(10_000);
    const res = await api("POST", "/notes", {
      objectType: "Deal",
      objectId: targets.Deal,
      body,
      authorId: "user-42",
    });
    expect(res.status).toBe(201);
    expect(res.body.data.body).toBe(body);
    expect(res.body.data.authorId).toBe("user-42");
  });

  it("refuses a blank or too long body, missing fields, unknown fields and a misspelt objectType", async () => {
    const base = { objectType: "Account", objectId: targets.Account };
    for (const body of ["", "   \n", "x".repeat(10_001)]) {
      const res = await api("POST", "/notes", { ...base, body });
      expect(res.status).toBe(422);
      expect(res.body.error.details[0].path).toEqual(["body"]);
    }
    const missing = await api("POST", "/notes", { pinned: true });
    expect(missing.status).toBe(422);
    expect(missing.body.error.details.map((d: { path: string[] }) => d.path.join(".")).sort()).toEqual([
      "body",
      "objectId",
      "objectType",
      "pinned",
    ]);
    for (const objectType of ["account", "ACCOUNT", "Contact", "Task"]) {
      const res = await api("POST", "/notes", { objectType, objectId: targets.Account, body: "x" });
      expect(res.status).toBe(422);
      expect(res.body.error.details[0].path).toEqual(["objectType"]);
    }
    const numeric = await api("POST", "/notes", { ...base, body: 12 });
    expect(numeric.status).toBe(422);
  });

  it("refuses an objectId that is not a record of objectType in the organisation, creating nothing", async () => {
    const foreign = await createTestOrg();
    const foreignTargets = await makeTargets(foreign.orgId);
    const before = await prisma().note.count({ where: { orgId } });
    const cases = [
      ["Account", targets.Deal, "account"],
      ["Deal", targets.Account, "deal"],
      ["Contract", targets.Lead, "contract"],
      ["Lead", targets.Contract, "lead"],
      ["Account", foreignTargets.Account, "account"],
      ["Deal", foreignTargets.Deal, "deal"],
      ["Contract", foreignTargets.Contract, "contract"],
      ["Lead", foreignTargets.Lead, "lead"],
      ["Lead", "nosuchlead", "lead"],
    ] as const;
    for (const [objectType, objectId, thing] of cases) {
      const res = await api("POST", "/notes", { objectType, objectId, body: "x" });
      expect(res.status, `${objectType} ${objectId}`).toBe(422);
      expect(res.body.error.code).toBe("validation_error");
      expect(res.body.error.details).toEqual([
        { path: ["objectId"], message: `no ${thing} with this id in the organisation` },
      ]);
    }
    expect(await prisma().note.count({ where: { orgId } })).toBe(before);
    expect(await prisma().note.count({ where: { orgId: foreign.orgId } })).toBe(0);
  });

  it("needs notes:write to create and notes:read to read", async () => {
    const readOnly = client(server.url, await createKey(orgId, ["notes:read"]));
    const res = await readOnly("POST", "/notes", { objectType: "Lead", objectId: targets.Lead, body: "x" });
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe("insufficient_scope");
    expect((await readOnly("GET", "/notes")).status).toBe(200);
    expect((await client(server.url, await createKey(orgId, ["accounts:write"]))("GET", "/notes")).status).toBe(403);
    const testKey = client(server.url, await createKey(orgId, ["notes:write"], true));
    expect((await testKey("POST", "/notes", { objectType: "Lead", objectId: targets.Lead, body: "t" })).status).toBe(
      201,
    );
    expect(await prisma().event.count({ where: { orgId, name: "note.created" } })).toBe(
      await prisma().note.count({ where: { orgId } }),
    );
  });
});

describe("GET /notes/{id}", () => {
  it("answers 404 for an unknown id, 400 for a malformed one, and 405 for update and delete", async () => {
    const missing = await api("GET", "/notes/doesnotexist123");
    expect(missing.status).toBe(404);
    expect(missing.body.error.code).toBe("not_found");
    expect((await api("GET", "/notes/bad%20id!")).status).toBe(400);
    expect((await api("PATCH", "/notes/doesnotexist123", { body: "x" })).status).toBe(405);
    expect((await api("DELETE", "/notes/doesnotexist123")).status).toBe(405);
  });
});

describe("GET /notes", () => {
  let list: ReturnType<typeof client>;
  let t: Awaited<ReturnType<typeof makeTargets>>;
  let otherAccount: string;
  const ids: Record<string, string> = {};
  beforeAll(async () => {
    const org = await createTestOrg();
    list = client(server.url, org.key);
    t = await makeTargets(org.orgId);
    otherAccount = (await prisma().account.create({ data: { orgId: org.orgId, name: "Other" } })).id;
    const notes = [
      ["n1", "Account", t.Account],
      ["n2", "Deal", t.Deal],
      ["n3", "Account", otherAccount],
      ["n4", "Lead", t.Lead],
      ["n5", "Account", t.Account],
      ["n6", "Contract", t.Contract],
    ] as const;
    for (const [body, objectType, objectId] of notes) {
      const res = await list("POST", "/notes", { objectType, objectId, body });
      expect(res.status).toBe(201);
      ids[body] = res.body.data.id;
    }
  });
  const bodies = (res: { body: { data: Array<{ body: string }> } }) => res.body.data.map((n) => n.body);

  it("lists in creation order by default with the list envelope", async () => {
    const res = await list("GET", "/notes");
    expect(res.status).toBe(200);
    expect(bodies(res)).toEqual(["n1", "n2", "n3", "n4", "n5", "n6"]);
    expect(res.body.hasMore).toBe(false);
    expect(res.body.nextCursor).toBe(ids.n6);
  });

  it("filters by objectType and objectId, alone and combined", async () => {
    expect(bodies(await list("GET", "/notes?objectType=Account"))).toEqual(["n1", "n3", "n5"]);
    expect(bodies(await list("GET", "/notes?objectType=Contract"))).toEqual(["n6"]);
    expect(bodies(await list("GET", `/notes?objectId=${t.Account}`))).toEqual(["n1", "n5"]);
    expect(bodies(await list("GET", `/notes?objectType=Account&objectId=${otherAccount}`))).toEqual(["n3"]);
    expect(bodies(await list("GET", `/notes?objectType=Deal&objectId=${t.Account}`))).toEqual([]);
    const bad = await list("GET", "/notes?objectType=account");
    expect(bad.status).toBe(422);
    expect(bad.body.error.details[0].path).toEqual(["objectType"]);
    expect((await list("GET", "/notes?authorId=x")).status).toBe(422);
  });

  it("sorts by createdAt and updatedAt, ignoring other fields or, when strict, refusing them", async () => {
    expect(bodies(await list("GET", "/notes?sort=createdAt:desc"))).toEqual(["n6", "n5", "n4", "n3", "n2", "n1"]);
    expect(bodies(await list("GET", "/notes?sort=updatedAt:desc"))).toEqual(["n6", "n5", "n4", "n3", "n2", "n1"]);
    expect(bodies(await list("GET", "/notes?sort=updatedAt:asc"))).toEqual(["n1", "n2", "n3", "n4", "n5", "n6"]);
    // Ignored (the default order applies and the answer names it), or refused when the request asks for strict.
    const ignored = await list("GET", "/notes?sort=body:desc");
    expect(bodies(ignored)).toEqual(bodies(await list("GET", "/notes")));
    expect(ignored.headers.get("sort-ignored")).toBe('"body:desc"');
    expect((await list("GET", "/notes?sort=body:desc", undefined, { Prefer: "handling=strict" })).status).toBe(422);
  });

  it("pages with limit and cursor, without gaps or repeats, also within a filter", async () => {
    for (const query of ["sort=createdAt:asc", "sort=createdAt:desc", "objectType=Account"]) {
      const all = (await list("GET", `/notes?limit=100&${query}`)).body.data.map((n: { id: string }) => n.id);
      const seen: string[] = [];
      let cursor = "";
      for (let page = 0; page < 10; page++) {
        const res = await list("GET", `/notes?limit=2&${query}${cursor ? `&cursor=${cursor}` : ""}`);
        expect(res.status).toBe(200);
        seen.push(...res.body.data.map((n: { id: string }) => n.id));
        if (!res.body.hasMore) break;
        cursor = res.body.nextCursor;
      }
      expect(seen).toEqual(all);
    }
    expect((await list("GET", "/notes?limit=101")).status).toBe(422);
    expect((await list("GET", "/notes?cursor=nosuchrecord")).status).toBe(400);
  });

  it("returns only notes updated after updatedAfter", async () => {
    const mark = new Date().toISOString();
    await new Promise((resolve) => setTimeout(resolve, 5));
    const fresh = await list("POST", "/notes", { objectType: "Lead", objectId: t.Lead, body: "fresh" });
    const res = await list("GET", `/notes?updatedAfter=${encodeURIComponent(mark)}`);
    expect(res.body.data.map((n: { id: string }) => n.id)).toEqual([fresh.body.data.id]);
  });
});

describe("organisation isolation (docs/api-contract.md §1)", () => {
  it("gives another organisation's key 404 on get, and never lists foreign notes", async () => {
    const a = await createTestOrg();
    const b = await createTestOrg();
    const apiA = client(server.url, a.key);
    const apiB = client(server.url, b.key);
    const mine = await makeTargets(a.orgId);
    const note = (await apiA("POST", "/notes", { objectType: "Account", objectId: mine.Account, body: "secret" })).body
      .data;
    const res = await apiB("GET", `/notes/${note.id}`);
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe("not_found");
    expect((await apiB("GET", "/notes")).body.data).toEqual([]);
    expect((await apiB("GET", `/notes?objectId=${mine.Account}`)).body.data).toEqual([]);
    expect((await apiB("GET", `/notes?cursor=${note.id}`)).status).toBe(400);
    const foreignRef = await apiB("POST", "/notes", { objectType: "Account", objectId: mine.Account, body: "x" });
    expect(foreignRef.status).toBe(422);
    expect(await prisma().note.count({ where: { orgId: b.orgId } })).toBe(0);
    expect((await apiA("GET", `/notes/${note.id}`)).body.data).toEqual(note);
  });
});
