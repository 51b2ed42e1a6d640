// Contacts (docs/api-contract.md §2.4, §4.2, §6.1): CRUD, account relationships, list filters/sort/pagination, bulk
// upsert matched on email case-insensitively, events in the outbox, and organisation isolation.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { prisma } from "../../../server/db/transaction";
import { client, createKey, createTestOrg, expectKeysetPaging, startApi, type TestServer } from "../../helpers/api";

let server: TestServer;
beforeAll(async () => {
  server = await startApi();
});
afterAll(() => server.close());

type Api = ReturnType<typeof client>;

async function newOrg(options: { isTest?: boolean } = {}) {
  const org = await createTestOrg(undefined, options);
  return { ...org, api: client(server.url, org.key) };
}

async function account(api: Api, name: string): Promise<string> {
  const res = await api("POST", "/accounts", { name });
  expect(res.status).toBe(201);
  return res.body.data.id;
}

async function eventsOf(orgId: string) {
  return prisma().event.findMany({ where: { orgId }, orderBy: [{ createdAt: "asc" }, { id: "asc" }] });
}

async function contactEvents(orgId: string) {
  return (await eventsOf(orgId)).filter((event) => event.name.startsWith("contact."));
}

function paths(res: { body: { error: { details: { path: string[] }[] } } }): string[] {
  return res.body.error.details.map((detail) => detail.path.join("."));
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("POST /contacts", () => {
  it("creates a contact with 201, the envelope, email stored trimmed as spelled and no relationships", async () => {
    const { api, orgId } = await newOrg();
    const res = await api("POST", "/contacts", {
      email: "  Ann.Lee@Example.COM ",
      firstName: " Ann ",
      lastName: "Lee",
      title: "IT Manager",
      phone: "+44 20 7123 4567",
    });
    expect(res.status).toBe(201);
    expect(res.body.success).toBe(true);
    expect(res.headers.get("x-request-id")).toBe(res.body.requestId);
    expect(res.body.data).toEqual({
      id: expect.any(String),
      email: "Ann.Lee@Example.COM",
      firstName: "Ann",
      lastName: "Lee",
      title: "IT Manager",
      phone: "+44 20 7123 4567",
      accounts: [],
      customFields: {},
      createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      updatedAt: res.body.data.createdAt,
    });
    const row = await prisma().contact.findUnique({ where: { id: res.body.data.id } });
    expect(row).toMatchObject({ orgId, email: "Ann.Lee@Example.COM", emailKey: "ann.lee@example.com" });
  });

  it("links the contact to an account with role and isPrimary, defaulting to null and false", async () => {
    const { api, orgId } = await newOrg();
    const accountId = await account(api, "Northwind");
    const primary = await api("POST", "/contacts", { email: "p@nw.test", accountId, role: "Billing", isPrimary: true });
    expect(primary.status).toBe(201);
    expect(primary.body.data.accounts).toEqual([
      { accountId, accountName: "Northwind", role: "Billing", isPrimary: true },
    ]);
    const plain = await api("POST", "/contacts", { email: "q@nw.test", accountId });
    expect(plain.body.data.accounts).toEqual([{ accountId, accountName: "Northwind", role: null, isPrimary: false }]);
    const links = await prisma().contactAccount.findMany({ where: { accountId }, orderBy: { isPrimary: "desc" } });
    expect(links).toMatchObject([
      { orgId, contactId: primary.body.data.id, role: "Billing", isPrimary: true },
      { orgId, contactId: plain.body.data.id, role: null, isPrimary: false },
    ]);
  });

  it("refuses missing or malformed email, unknown fields, wrong types and role without accountId (422)", async () => {
    const { api, orgId } = await newOrg();
    const missing = await api("POST", "/contacts", { firstName: "x", colour: "red" });
    expect(missing.status).toBe(422);
    expect(missing.body.error.code).toBe("validation_error");
    expect(paths(missing)).toEqual(expect.arrayContaining(["email", "colour"]));
    for (const email of ["not-an-email", "", "a@b", 42]) {
      const res = await api("POST", "/contacts", { email });
      expect(res.status, String(email)).toBe(422);
      expect(paths(res)).toEqual(["email"]);
    }
    expect(paths(await api("POST", "/contacts", { email: "a@b.test", firstName: "  " }))).toEqual(["firstName"]);
    expect(paths(await api("POST", "/contacts", { email: "a@b.test", phone: "1".repeat(51) }))).toEqual(["phone"]);
    const accountId = await account(api, "A");
    const stringBool = await api("POST", "/contacts", { email: "a@b.test", accountId, isPrimary: "true" });
    expect(paths(stringBool)).toEqual(["isPrimary"]);
    const orphan = await api("POST", "/contacts", { email: "a@b.test", role: "Billing", isPrimary: false });
    expect(orphan.status).toBe(422);
    expect(paths(orphan)).toEqual(["role", "isPrimary"]);
    expect(await prisma().contact.count({ where: { orgId } })).toBe(0);
  });

  it("refuses an email already used in the organisation, compared case-insensitively, on path email", async () => {
    const { api, orgId } = await newOrg();
    expect((await api("POST", "/contacts", { email: "dup@example.com" })).status).toBe(201);
    const res = await api("POST", "/contacts", { email: " DUP@Example.com" });
    expect(res.status).toBe(422);
    expect(res.body.error.code).toBe("validation_error");
    expect(res.body.error.details).toEqual([{ path: ["email"], message: expect.any(String) }]);
    expect(await prisma().contact.count({ where: { orgId } })).toBe(1);
    expect((await contactEvents(orgId)).length).toBe(1);
  });

  it("refuses an accountId that names no account of the organisation, creating nothing", async () => {
    const { api, orgId } = await newOrg();
    const other = await newOrg();
    const foreign = await account(other.api, "Foreign");
    for (const accountId of [foreign, "nosuchaccount"]) {
      const res = await api("POST", "/contacts", { email: "x@y.test", accountId });
      expect(res.status).toBe(422);
      expect(res.body.error.details).toEqual([
        { path: ["accountId"], message: "no account with this id in the organisation" },
      ]);
    }
    expect(await prisma().contact.count({ where: { orgId } })).toBe(0);
    expect(await prisma().contactAccount.count({ where: { accountId: foreign } })).toBe(0);
    expect(await eventsOf(orgId)).toEqual([]);
  });
});

describe("GET /contacts/{id}", () => {
  it("returns the contact with its relationships: primary first, then by account name, names kept current", async () => {
    const { api } = await newOrg();
    const zulu = await account(api, "Zulu");
    const alpha = await account(api, "Alpha");
    const mike = await account(api, "Mike");
    const created = (await api("POST", "/contacts", { email: "order@test.dev" })).body.data;
    const patched = await api("PATCH", `/contacts/${created.id}`, {
      accounts: [{ accountId: zulu }, { accountId: mike, isPrimary: true, role: "Owner" }, { accountId: alpha }],
    });
    expect(patched.status).toBe(200);
    const got = await api("GET", `/contacts/${created.id}`);
    expect(got.status).toBe(200);
    expect(got.body.data).toEqual(patched.body.data);
    expect(got.body.data.accounts).toEqual([
      { accountId: mike, accountName: "Mike", role: "Owner", isPrimary: true },
      { accountId: alpha, accountName: "Alpha", role: null, isPrimary: false },
      { accountId: zulu, accountName: "Zulu", role: null, isPrimary: false },
    ]);
    await api("PATCH", `/accounts/${alpha}`, { name: "Aardvark" });
    const renamed = await api("GET", `/contacts/${created.id}`);
    expect(renamed.body.data.accounts[1]).toMatchObject({ accountId: alpha, accountName: "Aardvark" });
    expect(renamed.body.data.updatedAt).toBe(got.body.data.updatedAt);
  });

  it("answers 404 for an unknown id and 400 for a malformed one", async () => {
    const { api } = await newOrg();
    const missing = await api("GET", "/contacts/doesnotexist123");
    expect(missing.status).toBe(404);
    expect(missing.body.error.code).toBe("not_found");
    const malformed = await api("GET", "/contacts/bad%20id!");
    expect(malformed.status).toBe(400);
    expect(malformed.body.error.code).toBe("bad_request");
  });

  it("drops the relationship of a hard-deleted account and records contact.updated", async () => {
    const { api, orgId } = await newOrg();
    const gone = await account(api, "Gone");
    const kept = await account(api, "Kept");
    const contact = (await api("POST", "/contacts", { email: "c@d.test", accountId: gone, isPrimary: true })).body.data;
    await api("PATCH", `/contacts/${contact.id}`, {
      accounts: [{ accountId: gone, isPrimary: true }, { accountId: kept }],
    });
    const before = (await contactEvents(orgId)).length;
    expect((await api("DELETE", `/accounts/${gone}?force=true`)).status).toBe(200);
    const got = await api("GET", `/contacts/${contact.id}`);
    expect(got.body.data.accounts).toEqual([{ accountId: kept, accountName: "Kept", role: null, isPrimary: false }]);
    expect((await contactEvents(orgId)).length).toBe(before + 1);
  });
});

describe("PATCH /contacts/{id}", () => {
  it("updates scalar fields, null clears, moves updatedAt and records contact.updated with the GET body", async () => {
    const { api, orgId } = await newOrg();
    const created = (await api("POST", "/contacts", { email: "p@q.test", firstName: "Pat", title: "CTO" })).body.data;
    await sleep(5);
    const res = await api("PATCH", `/contacts/${created.id}`, { lastName: "Quinn", title: null, phone: "555-0100" });
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({
      ...created,
      lastName: "Quinn",
      title: null,
      phone: "555-0100",
      updatedAt: expect.any(String),
    });
    expect(Date.parse(res.body.data.updatedAt)).toBeGreaterThan(Date.parse(created.updatedAt));
    const got = (await api("GET", `/contacts/${created.id}`)).body.data;
    expect(got).toEqual(res.body.data);
    const events = await contactEvents(orgId);
    expect(events.map((event) => event.name)).toEqual(["contact.created", "contact.updated"]);
    expect(events[0]?.data).toEqual(created);
    expect(events[1]?.data).toEqual(got);
    expect(events.every((event) => !event.isTest)).toBe(true);
  });

  it("changes nothing (no updatedAt move, no event) when nothing changes, relationships included", async () => {
    const { api, orgId } = await newOrg();
    const accountId = await account(api, "Same");
    const created = (
      await api("POST", "/contacts", { email: "Same@Test.dev", firstName: "S", accountId, role: "Tech" })
    ).body.data;
    await sleep(5);
    const noop = await api("PATCH", `/contacts/${created.id}`, {
      email: "Same@Test.dev",
      firstName: "S",
      accounts: [{ accountId, role: "Tech" }],
    });
    expect(noop.status).toBe(200);
    expect(noop.body.data).toEqual(created);
    expect((await api("PATCH", `/contacts/${created.id}`, {})).body.data).toEqual(created);
    expect((await contactEvents(orgId)).map((event) => event.name)).toEqual(["contact.created"]);
  });

  it("changes the email spelling, and refuses an email used by another contact (case-insensitively)", async () => {
    const { api, orgId } = await newOrg();
    const a = (await api("POST", "/contacts", { email: "a@case.test" })).body.data;
    await api("POST", "/contacts", { email: "b@case.test" });
    const respelled = await api("PATCH", `/contacts/${a.id}`, { email: "A@Case.test" });
    expect(respelled.status).toBe(200);
    expect(respelled.body.data.email).toBe("A@Case.test");
    expect(await prisma().contact.findUnique({ where: { id: a.id } })).toMatchObject({ emailKey: "a@case.test" });
    const clash = await api("PATCH", `/contacts/${a.id}`, { email: "B@CASE.test", firstName: "X" });
    expect(clash.status).toBe(422);
    expect(clash.body.error.details).toEqual([{ path: ["email"], message: expect.any(String) }]);
    expect((await api("GET", `/contacts/${a.id}`)).body.data).toMatchObject({ email: "A@Case.test", firstName: null });
    expect((await contactEvents(orgId)).map((event) => event.name)).toEqual([
      "contact.created",
      "contact.created",
      "contact.updated",
    ]);
  });

  it("replaces the relationships with accounts: adds, re-roles, moves the primary, removes; [] removes all", async () => {
    const { api, orgId } = await newOrg();
    const one = await account(api, "One");
    const two = await account(api, "Two");
    const three = await account(api, "Three");
    const created = (await api("POST", "/contacts", { email: "r@s.test", accountId: one, isPrimary: true })).body.data;

    await sleep(5);
    const moved = await api("PATCH", `/contacts/${created.id}`, {
      accounts: [
        { accountId: one, role: "Billing" },
        { accountId: two, isPrimary: true },
      ],
    });
    expect(moved.status).toBe(200);
    expect(moved.body.data.accounts).toEqual([
      { accountId: two, accountName: "Two", role: null, isPrimary: true },
      { accountId: one, accountName: "One", role: "Billing", isPrimary: false },
    ]);
    expect(Date.parse(moved.body.data.updatedAt)).toBeGreaterThan(Date.parse(created.updatedAt));

    const swapped = await api("PATCH", `/contacts/${created.id}`, { accounts: [{ accountId: three }] });
    expect(swapped.body.data.accounts).toEqual([
      { accountId: three, accountName: "Three", role: null, isPrimary: false },
    ]);
    const emptied = await api("PATCH", `/contacts/${created.id}`, { accounts: [] });
    expect(emptied.body.data.accounts).toEqual([]);
    expect(await prisma().contactAccount.count({ where: { contactId: created.id } })).toBe(0);

    const events = await contactEvents(orgId);
    expect(events.map((event) => event.name)).toEqual([
      "contact.created",
      "contact.updated",
      "contact.updated",
      "contact.updated",
    ]);
    expect(events[1]?.data).toEqual(moved.body.data);
    expect(events[3]?.data).toEqual(emptied.body.data);
    expect(events[3]?.data).toEqual((await api("GET", `/contacts/${created.id}`)).body.data);
  });

  it("refuses repeated accounts, two primaries and unknown accounts without changing anything", async () => {
    const { api, orgId } = await newOrg();
    const other = await newOrg();
    const mine = await account(api, "Mine");
    const foreign = await account(other.api, "Theirs");
    const created = (await api("POST", "/contacts", { email: "v@w.test", accountId: mine })).body.data;

    const repeated = await api("PATCH", `/contacts/${created.id}`, {
      accounts: [{ accountId: mine }, { accountId: mine }],
    });
    expect(repeated.status).toBe(422);
    expect(paths(repeated)).toEqual(["accounts.1.accountId"]);

    const second = await account(api, "Second");
    const primaries = await api("PATCH", `/contacts/${created.id}`, {
      accounts: [
        { accountId: mine, isPrimary: true },
        { accountId: second, isPrimary: true },
      ],
    });
    expect(paths(primaries)).toEqual(["accounts.1.isPrimary"]);

    const refused = await api("PATCH", `/contacts/${created.id}`, {
      firstName: "Changed",
      accounts: [{ accountId: mine }, { accountId: foreign }, { accountId: "nosuchaccount" }],
    });
    expect(refused.status).toBe(422);
    expect(refused.body.error.details).toEqual([
      { path: ["accounts", "1", "accountId"], message: "no account with this id in the organisation" },
      { path: ["accounts", "2", "accountId"], message: "no account with this id in the organisation" },
    ]);
    expect((await api("GET", `/contacts/${created.id}`)).body.data).toEqual(created);
    expect(await prisma().contactAccount.count({ where: { accountId: foreign } })).toBe(0);
    expect((await contactEvents(orgId)).length).toBe(1);

    const tooMany = Array.from({ length: 101 }, (_, i) => ({ accountId: `acc${i}` }));
    expect(paths(await api("PATCH", `/contacts/${created.id}`, { accounts: tooMany }))).toEqual(["accounts"]);
    expect(paths(await api("PATCH", `/contacts/${created.id}`, { email: null, nickname: "x" }))).toEqual([
      "email",
      "nickname",
    ]);
  });

  it("answers 404 for an unknown contact", async () => {
    const { api } = await newOrg();
    const res = await api("PATCH", "/contacts/doesnotexist123", { firstName: "x" });
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe("not_found");
  });
});

describe("GET /contacts", () => {
  let list: Api;
  let ids: Record<string, string>;
  let acme: string;
  let globex: string;
  let foreignAccount: string;

  beforeAll(async () => {
    const org = await newOrg();
    list = org.api;
    acme = await account(list, "Acme");
    globex = await account(list, "Globex");
    foreignAccount = await account((await newOrg()).api, "Elsewhere");
    const contacts = [
      { email: "delta@x.test", lastName: "Young", accountId: acme },
      { email: "Alpha@x.test", lastName: "baker", accountId: globex },
      { email: "charlie@x.test", lastName: null, accountId: acme, isPrimary: true },
      { email: "bravo@x.test", lastName: "Adams" },
      { email: "echo@x.test", lastName: "Young" },
    ];
    ids = {};
    for (const contact of contacts) {
      const res = await list("POST", "/contacts", contact);
      expect(res.status).toBe(201);
      ids[contact.email.toLowerCase().split("@")[0] as string] = res.body.data.id;
    }
  });

  const names = (res: { body: { data: { email: string }[] } }) =>
    res.body.data.map((contact) => contact.email.toLowerCase().split("@")[0]);

  it("lists in creation order by default, each item with its relationships as GET returns it", async () => {
    const res = await list("GET", "/contacts");
    expect(res.status).toBe(200);
    expect(res.body.success).toBe(true);
    expect(names(res)).toEqual(["delta", "alpha", "charlie", "bravo", "echo"]);
    expect(res.body.hasMore).toBe(false);
    expect(res.body.nextCursor).toBe(res.body.data[4].id);
    expect(res.body.data[2].accounts).toEqual([{ accountId: acme, accountName: "Acme", role: null, isPrimary: true }]);
    for (const item of res.body.data) expect((await list("GET", `/contacts/${item.id}`)).body.data).toEqual(item);
  });

  it("filters by accountId (related contacts; unknown or foreign account gives an empty list) and by email", async () => {
    expect(names(await list("GET", `/contacts?accountId=${acme}`))).toEqual(["delta", "charlie"]);
    expect(names(await list("GET", `/contacts?accountId=${globex}`))).toEqual(["alpha"]);
    const foreign = await list("GET", `/contacts?accountId=${foreignAccount}`);
    expect(foreign.status).toBe(200);
    expect(foreign.body.data).toEqual([]);
    expect((await list("GET", "/contacts?accountId=nosuchaccount")).body.data).toEqual([]);
    expect((await list("GET", "/contacts?accountId=bad%20id")).status).toBe(422);

    expect(names(await list("GET", "/contacts?email=ALPHA%40X.TEST"))).toEqual(["alpha"]);
    expect(names(await list("GET", "/contacts?email=alpha%40x.test"))).toEqual(["alpha"]);
    expect((await list("GET", "/contacts?email=alpha")).body.data).toEqual([]);
    expect(names(await list("GET", `/contacts?email=charlie%40x.test&accountId=${acme}`))).toEqual(["charlie"]);
    expect((await list("GET", `/contacts?email=charlie%40x.test&accountId=${globex}`)).body.data).toEqual([]);
    expect(paths(await list("GET", "/contacts?colour=red"))).toEqual(["colour"]);
  });

  it("sorts by email (case-insensitive), lastName (nulls last), createdAt and updatedAt; ignores unknown fields, or refuses them when strict", async () => {
    expect(names(await list("GET", "/contacts?sort=email:asc"))).toEqual([
      "alpha",
      "bravo",
      "charlie",
      "delta",
      "echo",
    ]);
    expect(names(await list("GET", "/contacts?sort=email:desc"))).toEqual([
      "echo",
      "delta",
      "charlie",
      "bravo",
      "alpha",
    ]);
    expect(names(await list("GET", "/contacts?sort=lastName:asc,email:desc"))).toEqual([
      "bravo",
      "echo",
      "delta",
      "alpha",
      "charlie",
    ]);
    expect(names(await list("GET", "/contacts?sort=lastName:desc,email:asc"))).toEqual([
      "alpha",
      "delta",
      "echo",
      "bravo",
      "charlie",
    ]);
    expect(names(await list("GET", "/contacts?sort=createdAt:desc"))).toEqual([
      "echo",
      "bravo",
      "charlie",
      "alpha",
      "delta",
    ]);
    const byDefault = names(await list("GET", "/contacts"));
    for (const sort of ["colour:desc,emailKey:desc", "emailKey:asc"]) {
      const ignored = await list("GET", `/contacts?sort=${sort}`);
      expect(names(ignored), sort).toEqual(byDefault);
      expect(ignored.headers.get("sort-ignored"), sort).toBe(
        sort
          .split(",")
          .map((pair) => `"${pair}"`)
          .join(", "),
      );
    }
    expect(names(await list("GET", "/contacts?sort=colour:asc,email:desc"))).toEqual(
      names(await list("GET", "/contacts?sort=email:desc")),
    );
    for (const sort of ["colour:desc,emailKey:desc", "colour:asc,email:desc", "emailKey:asc"]) {
      const unknown = await list("GET", `/contacts?sort=${sort}`, undefined, { Prefer: "handling=strict" });
      expect(unknown.status, sort).toBe(422);
      expect(unknown.body.error.details[0].message).toContain("allowed fields: createdAt, updatedAt, email, lastName");
    }
  });

  it("pages with limit and cursor under every sort, without gaps or repeats", async () => {
    expect((await list("GET", "/contacts?limit=100")).body.data).toHaveLength(5);
    await expectKeysetPaging(list, "/contacts", [
      "",
      "email:asc",
      "email:desc",
      "lastName:asc",
      "lastName:desc",
      "updatedAt:desc",
    ]);
  });

  it("refuses limit outside 1..100 and an unknown cursor", async () => {
    expect((await list("GET", "/contacts?limit=101")).status).toBe(422);
    expect((await list("GET", "/contacts?limit=0")).status).toBe(422);
    const cursor = await list("GET", "/contacts?cursor=nosuchrecord");
    expect(cursor.status).toBe(400);
    expect(cursor.body.error.code).toBe("bad_request");
  });

  it("returns only contacts updated after updatedAfter, relationship changes included", async () => {
    const mark = new Date().toISOString();
    await sleep(5);
    expect((await list("GET", `/contacts?updatedAfter=${encodeURIComponent(mark)}`)).body.data).toEqual([]);
    await list("PATCH", `/contacts/${ids.bravo}`, { phone: "1234" });
    await list("PATCH", `/contacts/${ids.echo}`, { accounts: [{ accountId: globex }] });
    const res = await list("GET", `/contacts?updatedAfter=${encodeURIComponent(mark)}`);
    expect(names(res)).toEqual(["bravo", "echo"]);
    expect(names(await list("GET", `/contacts?accountId=${globex}`))).toEqual(["alpha", "echo"]);
    expect((await list("GET", "/contacts?updatedAfter=yesterday")).status).toBe(422);
  });
});

describe("POST /contacts/bulk", () => {
  it("creates new emails, updates existing ones matched case-insensitively, and keeps omitted fields", async () => {
    const { api, orgId } = await newOrg();
    const first = await api("POST", "/contacts/bulk", {
      contacts: [
        { email: "one@bulk.test", firstName: "One", title: "CEO" },
        { email: "two@bulk.test", phone: "1" },
      ],
    });
    expect(first.status).toBe(200);
    expect(first.body.data).toEqual({
      created: 2,
      updated: 0,
      total: 2,
      results: [
        { email: "one@bulk.test", id: expect.any(String), action: "created" },
        { email: "two@bulk.test", id: expect.any(String), action: "created" },
      ],
    });
    const [one, two] = first.body.data.results.map((r: { id: string }) => r.id);

    await sleep(5);
    const second = await api("POST", "/contacts/bulk", {
      contacts: [
        { email: " ONE@Bulk.test ", lastName: "Uno", title: null },
        { email: "three@bulk.test" },
        { email: "two@bulk.test", phone: "1" },
      ],
    });
    expect(second.status).toBe(200);
    expect(second.body.data).toMatchObject({ created: 1, updated: 2, total: 3 });
    expect(second.body.data.results).toEqual([
      { email: "ONE@Bulk.test", id: one, action: "updated" },
      { email: "three@bulk.test", id: expect.any(String), action: "created" },
      { email: "two@bulk.test", id: two, action: "updated" },
    ]);
    const got = (await api("GET", `/contacts/${one}`)).body.data;
    expect(got).toMatchObject({ email: "ONE@Bulk.test", firstName: "One", lastName: "Uno", title: null });
    const unchanged = await prisma().contact.findUniqueOrThrow({ where: { id: two } });
    const created = await prisma().contact.findUniqueOrThrow({ where: { id: one } });
    expect(unchanged.updatedAt.getTime()).toBe(unchanged.createdAt.getTime());
    expect(created.updatedAt.getTime()).toBeGreaterThan(created.createdAt.getTime());
    expect(await prisma().contact.count({ where: { orgId } })).toBe(3);

    // Events of one request share their timestamp, so they are compared as a set.
    const events = await contactEvents(orgId);
    expect(events.map((event) => `${event.name}:${(event.data as { email: string }).email}`).sort()).toEqual([
      "contact.created:one@bulk.test",
      "contact.created:three@bulk.test",
      "contact.created:two@bulk.test",
      "contact.updated:ONE@Bulk.test",
    ]);
    expect(events.find((event) => event.name === "contact.updated")?.data).toEqual(got);
  });

  it("adds missing relationships, adjusts existing ones, moves the primary and never removes any", async () => {
    const { api, orgId } = await newOrg();
    const a = await account(api, "Account A");
    const b = await account(api, "Account B");
    const contact = (await api("POST", "/contacts", { email: "rel@bulk.test", accountId: a, isPrimary: true })).body
      .data;

    const added = await api("POST", "/contacts/bulk", {
      contacts: [
        { email: "REL@bulk.test", accountId: b, role: "Billing", isPrimary: true },
        { email: "new@bulk.test", accountId: a, role: "Tech" },
      ],
    });
    expect(added.status).toBe(200);
    expect(added.body.data).toMatchObject({ created: 1, updated: 1 });
    const rel = (await api("GET", `/contacts/${contact.id}`)).body.data;
    expect(rel.email).toBe("REL@bulk.test");
    expect(rel.accounts).toEqual([
      { accountId: b, accountName: "Account B", role: "Billing", isPrimary: true },
      { accountId: a, accountName: "Account A", role: null, isPrimary: false },
    ]);
    const fresh = (await api("GET", `/contacts/${added.body.data.results[1].id}`)).body.data;
    expect(fresh.accounts).toEqual([{ accountId: a, accountName: "Account A", role: "Tech", isPrimary: false }]);

    // Relationship-only change: a role on an existing link; the link to B stays.
    const before = rel.updatedAt;
    await sleep(5);
    const rerole = await api("POST", "/contacts/bulk", {
      contacts: [{ email: "REL@bulk.test", accountId: a, role: "CFO" }],
    });
    expect(rerole.body.data).toMatchObject({ created: 0, updated: 1 });
    const after = (await api("GET", `/contacts/${contact.id}`)).body.data;
    expect(after.accounts).toEqual([
      { accountId: b, accountName: "Account B", role: "Billing", isPrimary: true },
      { accountId: a, accountName: "Account A", role: "CFO", isPrimary: false },
    ]);
    expect(Date.parse(after.updatedAt)).toBeGreaterThan(Date.parse(before));

    // Re-sending the same thing changes nothing: counted as updated, no event, updatedAt kept.
    const count = (await contactEvents(orgId)).length;
    const same = await api("POST", "/contacts/bulk", {
      contacts: [{ email: "REL@bulk.test", accountId: a, role: "CFO" }],
    });
    expect(same.body.data).toMatchObject({ created: 0, updated: 1, total: 1 });
    expect((await api("GET", `/contacts/${contact.id}`)).body.data).toEqual(after);
    expect((await contactEvents(orgId)).length).toBe(count);

    const events = await contactEvents(orgId);
    const payloads = (name: string) => events.filter((event) => event.name === name).map((event) => event.data);
    expect(events).toHaveLength(4);
    expect(payloads("contact.created")).toEqual([contact, fresh]);
    expect(payloads("contact.updated")).toEqual([rel, after]);
  });

  it("refuses emails repeated case-insensitively, foreign accounts and invalid items, writing nothing", async () => {
    const { api, orgId } = await newOrg();
    const other = await newOrg();
    const mine = await account(api, "Mine");
    const foreign = await account(other.api, "Theirs");

    const repeated = await api("POST", "/contacts/bulk", {
      contacts: [{ email: "r@x.test" }, { email: "s@x.test" }, { email: "R@X.test" }],
    });
    expect(repeated.status).toBe(422);
    expect(repeated.body.error.details).toEqual([{ path: ["contacts", "2", "email"], message: "duplicates item 0" }]);

    const refs = await api("POST", "/contacts/bulk", {
      contacts: [
        { email: "a@x.test", accountId: mine },
        { email: "b@x.test", accountId: foreign },
        { email: "c@x.test", accountId: "nosuchaccount" },
      ],
    });
    expect(refs.status).toBe(422);
    expect(refs.body.error.details).toEqual([
      { path: ["contacts", "1", "accountId"], message: "no account with this id in the organisation" },
      { path: ["contacts", "2", "accountId"], message: "no account with this id in the organisation" },
    ]);

    const invalid = await api("POST", "/contacts/bulk", {
      contacts: [{ email: "ok@x.test" }, { email: "bad" }, { email: "d@x.test", role: "x" }],
    });
    expect(paths(invalid)).toEqual(["contacts.1.email", "contacts.2.role"]);
    expect((await api("POST", "/contacts/bulk", { contacts: [] })).status).toBe(422);
    const tooMany = Array.from({ length: 501 }, (_, i) => ({ email: `u${i}@x.test` }));
    expect(paths(await api("POST", "/contacts/bulk", { contacts: tooMany }))).toEqual(["contacts"]);
    expect(paths(await api("POST", "/contacts/bulk", { contacts: [{ email: "e@x.test" }], extra: 1 }))).toEqual([
      "extra",
    ]);

    expect(await prisma().contact.count({ where: { orgId } })).toBe(0);
    expect(await prisma().contactAccount.count({ where: { accountId: { in: [mine, foreign] } } })).toBe(0);
    expect(await contactEvents(orgId)).toEqual([]);
  });

  it("accepts exactly 500 items, with relationships, in one request", async () => {
    const { api, orgId } = await newOrg();
    const accountId = await account(api, "Big");
    const items = Array.from({ length: 500 }, (_, i) => ({
      email: `c${i}@big.test`,
      firstName: `C${i}`,
      ...(i % 2 === 0 ? { accountId } : {}),
    }));
    const res = await api("POST", "/contacts/bulk", { contacts: items });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ created: 500, updated: 0, total: 500 });
    expect(new Set(res.body.data.results.map((r: { id: string }) => r.id)).size).toBe(500);
    expect(await prisma().contactAccount.count({ where: { orgId, accountId } })).toBe(250);
    expect((await contactEvents(orgId)).length).toBe(500);
    const again = await api("POST", "/contacts/bulk", { contacts: items });
    expect(again.body.data).toMatchObject({ created: 0, updated: 500, total: 500 });
    expect((await contactEvents(orgId)).length).toBe(500);
  });
});

describe("at most 100 account relationships per contact (the bound its accounts array is documented with)", () => {
  it("bulk refuses the item that would add a 101st relationship, writing nothing; partial mode refuses that item only", async () => {
    const { api, orgId } = await newOrg();
    const created = await api("POST", "/accounts/bulk", {
      accounts: Array.from({ length: 101 }, (_, i) => ({ name: `Site ${i}` })),
    });
    const ids: string[] = created.body.data.results.map((result: { id: string }) => result.id);
    const contact = await api("POST", "/contacts", { email: "busy@many.test" });
    const full = await api("PATCH", `/contacts/${contact.body.data.id}`, {
      accounts: ids.slice(0, 100).map((accountId) => ({ accountId })),
    });
    expect(full.status).toBe(200);
    expect(full.body.data.accounts).toHaveLength(100);
    const eventsBefore = (await contactEvents(orgId)).length;

    const items = [
      { email: "other@many.test", accountId: ids[100] },
      { email: "busy@many.test", accountId: ids[100] },
    ];
    const refused = await api("POST", "/contacts/bulk", { contacts: items });
    expect(refused.status).toBe(422);
    expect(refused.body.error.details).toEqual([
      { path: ["contacts", "1", "accountId"], message: "would give the contact more than 100 account relationships" },
    ]);
    expect(await prisma().contactAccount.count({ where: { orgId, contactId: contact.body.data.id } })).toBe(100);
    expect(await prisma().contact.count({ where: { orgId, email: "other@many.test" } })).toBe(0);
    expect((await contactEvents(orgId)).length).toBe(eventsBefore);

    const partial = await api("POST", "/contacts/bulk?mode=partial", { contacts: items });
    expect(partial.status).toBe(207);
    expect(partial.body.data.results.map((result: { status: string }) => result.status)).toEqual(["created", "error"]);
    expect(partial.body.data.results[1].error.details).toEqual([
      { path: ["accountId"], message: "would give the contact more than 100 account relationships" },
    ]);
    expect((await api("GET", `/contacts/${contact.body.data.id}`)).body.data.accounts).toHaveLength(100);
  });
});

describe("events from a test key", () => {
  it("flags contact.created and contact.updated with isTest", async () => {
    const { orgId } = await newOrg();
    const api = client(server.url, await createKey(orgId, ["contacts:write", "accounts:write"], true));
    const created = (await api("POST", "/contacts", { email: "t@k.test" })).body.data;
    await api("PATCH", `/contacts/${created.id}`, { firstName: "Test" });
    await api("POST", "/contacts/bulk", { contacts: [{ email: "T@K.test", lastName: "Key" }, { email: "u@k.test" }] });
    const events = await contactEvents(orgId);
    expect(events.map((event) => `${event.name}:${(event.data as { email: string }).email}`).sort()).toEqual([
      "contact.created:t@k.test",
      "contact.created:u@k.test",
      "contact.updated:T@K.test",
      "contact.updated:t@k.test",
    ]);
    expect(events.every((event) => event.isTest)).toBe(true);
  });
});

describe("scopes (docs/api-contract.md §5)", () => {
  it("needs contacts:read to read and contacts:write to write", async () => {
    const org = await newOrg();
    const contact = (await org.api("POST", "/contacts", { email: "s@scope.test" })).body.data;
    const reader = client(server.url, await createKey(org.orgId, ["contacts:read"]));
    expect((await reader("GET", "/contacts")).status).toBe(200);
    expect((await reader("GET", `/contacts/${contact.id}`)).status).toBe(200);
    for (const [method, path, body] of [
      ["POST", "/contacts", { email: "n@scope.test" }],
      ["PATCH", `/contacts/${contact.id}`, { firstName: "x" }],
      ["POST", "/contacts/bulk", { contacts: [{ email: "n@scope.test" }] }],
    ] as const) {
      const res = await reader(method, path, body);
      expect(res.status).toBe(403);
      expect(res.body.error.message).toContain("contacts:write");
    }
    const accountsOnly = client(server.url, await createKey(org.orgId, ["accounts:write"]));
    expect((await accountsOnly("GET", "/contacts")).status).toBe(403);
    const admin = client(server.url, await createKey(org.orgId, ["admin:read"]));
    expect((await admin("GET", `/contacts/${contact.id}`)).status).toBe(200);
    expect((await client(server.url)("GET", "/contacts")).status).toBe(401);
  });
});

describe("organisation isolation (docs/api-contract.md §1)", () => {
  it("gives another organisation 404 on get and patch, hides its contacts and keeps emails per organisation", async () => {
    const a = await newOrg();
    const b = await newOrg();
    const accountA = await account(a.api, "A's account");
    const contact = (await a.api("POST", "/contacts", { email: "shared@iso.test", accountId: accountA })).body.data;

    for (const [method, path, body] of [
      ["GET", `/contacts/${contact.id}`, undefined],
      ["PATCH", `/contacts/${contact.id}`, { firstName: "Hijacked" }],
      ["PATCH", `/contacts/${contact.id}`, { accounts: [] }],
    ] as const) {
      const res = await b.api(method, path, body);
      expect(res.status).toBe(404);
      expect(res.body.error.code).toBe("not_found");
    }
    expect((await b.api("GET", `/contacts?cursor=${contact.id}`)).status).toBe(400);
    expect((await b.api("GET", "/contacts")).body.data).toEqual([]);
    expect((await b.api("GET", "/contacts?email=shared%40iso.test")).body.data).toEqual([]);
    expect((await b.api("GET", `/contacts?accountId=${accountA}`)).body.data).toEqual([]);

    const own = await b.api("POST", "/contacts", { email: "SHARED@iso.test" });
    expect(own.status).toBe(201);
    const bulk = await b.api("POST", "/contacts/bulk", { contacts: [{ email: "shared@ISO.test", firstName: "B" }] });
    expect(bulk.body.data.results).toEqual([{ email: "shared@ISO.test", id: own.body.data.id, action: "updated" }]);

    const refused = await b.api("POST", "/contacts/bulk", {
      contacts: [{ email: "new@iso.test", accountId: accountA }],
    });
    expect(refused.status).toBe(422);
    expect(await prisma().contact.count({ where: { orgId: b.orgId } })).toBe(1);
    expect(
      (await b.api("PATCH", `/contacts/${own.body.data.id}`, { accounts: [{ accountId: accountA }] })).status,
    ).toBe(422);
    expect(await prisma().contactAccount.count({ where: { accountId: accountA } })).toBe(1);

    expect((await a.api("GET", `/contacts/${contact.id}`)).body.data).toEqual(contact);
    expect((await contactEvents(a.orgId)).map((event) => event.name)).toEqual(["contact.created"]);
  });
});
