// Touchpoints (docs/api-contract.md §2.9, §4.7, §6.1): logging with touchpoint.created, references checked within the
// organisation, occurredAt rules, get one, list filters/sort/pagination, and organisation isolation.
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { prisma } from "../../../server/db/transaction";
import { client, createKey, createTestOrg, expectKeysetPaging, startApi, type TestServer } from "../../helpers/api";

let server: TestServer;
let api: ReturnType<typeof client>;
let orgId: string;
let accountId: string;

beforeAll(async () => {
  server = await startApi();
  const org = await createTestOrg();
  orgId = org.orgId;
  api = client(server.url, org.key);
  accountId = (await api("POST", "/accounts", { name: "Touched" })).body.data.id;
});
afterAll(() => server.close());

/** A contact written straight to the database, so these tests do not depend on the contacts endpoints. */
async function makeContact(org: string) {
  const email = `c-${randomBytes(4).toString("hex")}@example.com`;
  return prisma().contact.create({ data: { orgId: org, email, emailKey: email } });
}

async function touchpointEvents(org: string) {
  return prisma().event.findMany({
    where: { orgId: org, name: "touchpoint.created" },
    orderBy: [{ createdAt: "asc" }, { id: "asc" }],
  });
}

describe("POST /touchpoints", () => {
  it("logs a touchpoint with 201, occurredAt defaulting to now, and records touchpoint.created with the GET shape", async () => {
    const before = Date.now();
    const res = await api("POST", "/touchpoints", {
      accountId,
      type: "EMAIL",
      direction: "OUTBOUND",
      subject: "  Renewal reminder ",
      notes: "Sent the quote.\n",
    });
    expect(res.status).toBe(201);
    expect(res.body.data).toEqual({
      id: expect.any(String),
      accountId,
      contactId: null,
      type: "EMAIL",
      direction: "OUTBOUND",
      subject: "Renewal reminder",
      notes: "Sent the quote.\n",
      occurredAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    expect(Date.parse(res.body.data.occurredAt)).toBeGreaterThanOrEqual(before - 1000);
    expect(Date.parse(res.body.data.occurredAt)).toBeLessThanOrEqual(Date.now() + 1000);
    const row = await prisma().touchpoint.findUnique({ where: { id: res.body.data.id } });
    expect(row).toMatchObject({ orgId, accountId, type: "EMAIL", direction: "OUTBOUND" });

    const got = await api("GET", `/touchpoints/${res.body.data.id}`);
    expect(got.status).toBe(200);
    expect(got.body.data).toEqual(res.body.data);
    const events = (await touchpointEvents(orgId)).filter((e) => (e.data as { id: string }).id === res.body.data.id);
    expect(events).toHaveLength(1);
    expect(events[0]?.data).toEqual(got.body.data);
    expect(events[0]?.isTest).toBe(false);
  });

  it("links a contact of the organisation, even one not linked to the account, and keeps a past occurredAt", async () => {
    const contact = await makeContact(orgId);
    const res = await api("POST", "/touchpoints", {
      accountId,
      contactId: contact.id,
      type: "QBR",
      direction: "INTERNAL",
      occurredAt: "2025-03-01T09:30:00+01:00",
    });
    expect(res.status).toBe(201);
    expect(res.body.data).toMatchObject({
      contactId: contact.id,
      type: "QBR",
      direction: "INTERNAL",
      subject: null,
      notes: null,
      occurredAt: "2025-03-01T08:30:00.000Z",
    });
    const nullContact = await api("POST", "/touchpoints", {
      accountId,
      contactId: null,
      type: "CALL",
      direction: "INBOUND",
    });
    expect(nullContact.status).toBe(201);
    expect(nullContact.body.data.contactId).toBeNull();
  });

  it("accepts occurredAt up to 5 minutes ahead and refuses it further in the future", async () => {
    const soon = new Date(Date.now() + 2 * 60_000).toISOString();
    expect(
      (await api("POST", "/touchpoints", { accountId, type: "CHAT", direction: "INBOUND", occurredAt: soon })).status,
    ).toBe(201);
    const later = new Date(Date.now() + 10 * 60_000).toISOString();
    const res = await api("POST", "/touchpoints", { accountId, type: "CHAT", direction: "INBOUND", occurredAt: later });
    expect(res.status).toBe(422);
    expect(res.body.error.details).toEqual([
      { path: ["occurredAt"], message: "must not be more than 5 minutes in the future" },
    ]);
  });

  it("refuses missing and malformed fields, unknown fields and bad enum values with 422 details", async () => {
    const res = await api("POST", "/touchpoints", { subject: "x", mood: "happy", occurredAt: "yesterday" });
    expect(res.status).toBe(422);
    const paths = res.body.error.details.map((d: { path: string[] }) => d.path.join("."));
    expect(paths).toEqual(expect.arrayContaining(["accountId", "type", "direction", "mood", "occurredAt"]));
    const enums = await api("POST", "/touchpoints", { accountId, type: "email", direction: "SIDEWAYS" });
    expect(enums.status).toBe(422);
    expect(enums.body.error.details.map((d: { path: string[] }) => d.path[0]).sort()).toEqual(["direction", "type"]);
    const long = await api("POST", "/touchpoints", {
      accountId,
      type: "CALL",
      direction: "OUTBOUND",
      subject: "s".repeat(256),
      notes: "n".repeat(10_001),
    });
    expect(long.status).toBe(422);
    expect(long.body.error.details.map((d: { path: string[] }) => d.path[0]).sort()).toEqual(["notes", "subject"]);
    const blank = await api("POST", "/touchpoints", { accountId, type: "CALL", direction: "OUTBOUND", subject: "  " });
    expect(blank.status).toBe(422);
  });

  it("refuses an account or contact that is not in the organisation, logging nothing", async () => {
    const foreign = await createTestOrg();
    const foreignApi = client(server.url, foreign.key);
    const foreignAccount = (await foreignApi("POST", "/accounts", { name: "Theirs" })).body.data.id;
    const foreignContact = await makeContact(foreign.orgId);
    const before = await prisma().touchpoint.count({ where: { orgId } });
    const eventsBefore = (await touchpointEvents(orgId)).length;

    const account = await api("POST", "/touchpoints", {
      accountId: foreignAccount,
      type: "CALL",
      direction: "OUTBOUND",
    });
    expect(account.status).toBe(422);
    expect(account.body.error.code).toBe("validation_error");
    expect(account.body.error.details).toEqual([
      { path: ["accountId"], message: "no account with this id in the organisation" },
    ]);
    const contact = await api("POST", "/touchpoints", {
      accountId,
      contactId: foreignContact.id,
      type: "CALL",
      direction: "OUTBOUND",
    });
    expect(contact.status).toBe(422);
    expect(contact.body.error.details).toEqual([
      { path: ["contactId"], message: "no contact with this id in the organisation" },
    ]);
    const both = await api("POST", "/touchpoints", {
      accountId: "nosuchaccount",
      contactId: "nosuchcontact",
      type: "CALL",
      direction: "OUTBOUND",
    });
    expect(both.body.error.details.map((d: { path: string[] }) => d.path[0])).toEqual(["accountId", "contactId"]);

    expect(await prisma().touchpoint.count({ where: { orgId } })).toBe(before);
    expect((await touchpointEvents(orgId)).length).toBe(eventsBefore);
  });

  it("needs touchpoints:write to log and touchpoints:read to read", async () => {
    const readOnly = client(server.url, await createKey(orgId, ["touchpoints:read"]));
    const res = await readOnly("POST", "/touchpoints", { accountId, type: "CALL", direction: "OUTBOUND" });
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe("insufficient_scope");
    expect((await readOnly("GET", "/touchpoints")).status).toBe(200);
    expect((await client(server.url, await createKey(orgId, ["devices:read"]))("GET", "/touchpoints")).status).toBe(
      403,
    );
  });

  it("flags touchpoint.created caused by a test key with isTest", async () => {
    const org = await createTestOrg();
    const account = (await client(server.url, org.key)("POST", "/accounts", { name: "T" })).body.data.id;
    const testKey = client(server.url, await createKey(org.orgId, ["touchpoints:write"], true));
    expect(
      (await testKey("POST", "/touchpoints", { accountId: account, type: "TICKET", direction: "INBOUND" })).status,
    ).toBe(201);
    const events = await touchpointEvents(org.orgId);
    expect(events).toHaveLength(1);
    expect(events[0]?.isTest).toBe(true);
  });
});

describe("GET /touchpoints/{id}", () => {
  it("answers 404 for an unknown id, 400 for a malformed one, and 405 for update and delete", async () => {
    const missing = await api("GET", "/touchpoints/doesnotexist123");
    expect(missing.status).toBe(404);
    expect(missing.body.error.code).toBe("not_found");
    expect((await api("GET", "/touchpoints/bad%20id!")).status).toBe(400);
    const patch = await api("PATCH", "/touchpoints/doesnotexist123", { subject: "x" });
    expect(patch.status).toBe(405);
    expect(patch.headers.get("allow")).toContain("GET");
    expect((await api("DELETE", "/touchpoints/doesnotexist123")).status).toBe(405);
  });
});

describe("GET /touchpoints", () => {
  let list: ReturnType<typeof client>;
  let accountA: string;
  let accountB: string;
  const ids: Record<string, string> = {};
  beforeAll(async () => {
    const org = await createTestOrg();
    list = client(server.url, org.key);
    accountA = (await list("POST", "/accounts", { name: "A" })).body.data.id;
    accountB = (await list("POST", "/accounts", { name: "B" })).body.data.id;
    const touchpoints = [
      { subject: "one", accountId: accountA, type: "EMAIL", occurredAt: "2026-01-03T00:00:00Z" },
      { subject: "two", accountId: accountB, type: "CALL", occurredAt: "2026-01-01T00:00:00Z" },
      { subject: "three", accountId: accountA, type: "CALL", occurredAt: "2026-01-05T00:00:00Z" },
      { subject: "four", accountId: accountB, type: "EMAIL", occurredAt: "2026-01-02T00:00:00Z" },
      { subject: "five", accountId: accountA, type: "MEETING", occurredAt: "2026-01-04T00:00:00Z" },
    ];
    for (const touchpoint of touchpoints) {
      const res = await list("POST", "/touchpoints", { direction: "OUTBOUND", ...touchpoint });
      expect(res.status).toBe(201);
      ids[touchpoint.subject] = res.body.data.id;
    }
  });
  const subjects = (res: { body: { data: Array<{ subject: string }> } }) => res.body.data.map((t) => t.subject);

  it("lists in creation order by default with the list envelope", async () => {
    const res = await list("GET", "/touchpoints");
    expect(res.status).toBe(200);
    expect(subjects(res)).toEqual(["one", "two", "three", "four", "five"]);
    expect(res.body.hasMore).toBe(false);
    expect(res.body.nextCursor).toBe(ids.five);
  });

  it("filters by accountId and type, alone and combined", async () => {
    expect(subjects(await list("GET", `/touchpoints?accountId=${accountA}`))).toEqual(["one", "three", "five"]);
    expect(subjects(await list("GET", "/touchpoints?type=EMAIL"))).toEqual(["one", "four"]);
    expect(subjects(await list("GET", `/touchpoints?type=CALL&accountId=${accountB}`))).toEqual(["two"]);
    expect(subjects(await list("GET", "/touchpoints?accountId=nosuchaccount"))).toEqual([]);
    const bad = await list("GET", "/touchpoints?type=FAX");
    expect(bad.status).toBe(422);
    expect(bad.body.error.details[0].path).toEqual(["type"]);
    expect((await list("GET", "/touchpoints?contactId=x")).status).toBe(422);
  });

  it("sorts by occurredAt, createdAt and updatedAt, ignoring other fields or, when strict, refusing them", async () => {
    expect(subjects(await list("GET", "/touchpoints?sort=occurredAt:asc"))).toEqual([
      "two",
      "four",
      "one",
      "five",
      "three",
    ]);
    expect(subjects(await list("GET", "/touchpoints?sort=occurredAt:desc"))).toEqual([
      "three",
      "five",
      "one",
      "four",
      "two",
    ]);
    expect(subjects(await list("GET", "/touchpoints?sort=createdAt:desc"))).toEqual([
      "five",
      "four",
      "three",
      "two",
      "one",
    ]);
    expect(subjects(await list("GET", "/touchpoints?sort=updatedAt:desc"))).toEqual([
      "five",
      "four",
      "three",
      "two",
      "one",
    ]);
    // Ignored (the default order applies and the answer names it), or refused when the request asks for strict.
    const ignored = await list("GET", "/touchpoints?sort=subject:asc");
    expect(subjects(ignored)).toEqual(subjects(await list("GET", "/touchpoints")));
    expect(ignored.headers.get("sort-ignored")).toBe('"subject:asc"');
    expect((await list("GET", "/touchpoints?sort=subject:asc", undefined, { Prefer: "handling=strict" })).status).toBe(
      422,
    );
  });

  it("pages with limit and cursor under every sort, without gaps or repeats", async () => {
    await expectKeysetPaging(list, "/touchpoints", ["", "occurredAt:asc", "occurredAt:desc", "updatedAt:desc"]);
    expect((await list("GET", "/touchpoints?limit=0")).status).toBe(422);
    expect((await list("GET", "/touchpoints?cursor=nosuchrecord")).status).toBe(400);
  });

  it("returns only touchpoints updated after updatedAfter", async () => {
    const mark = new Date().toISOString();
    await new Promise((resolve) => setTimeout(resolve, 5));
    const fresh = await list("POST", "/touchpoints", {
      accountId: accountB,
      type: "SITE_VISIT",
      direction: "OUTBOUND",
    });
    const res = await list("GET", `/touchpoints?updatedAfter=${encodeURIComponent(mark)}`);
    expect(res.body.data.map((t: { id: string }) => t.id)).toEqual([fresh.body.data.id]);
    expect((await list("GET", "/touchpoints?updatedAfter=2026-01-01")).status).toBe(422);
  });
});

describe("organisation isolation (docs/api-contract.md §1)", () => {
  it("gives another organisation's key 404 on get and never lists foreign touchpoints", async () => {
    const a = await createTestOrg();
    const b = await createTestOrg();
    const apiA = client(server.url, a.key);
    const apiB = client(server.url, b.key);
    const account = (await apiA("POST", "/accounts", { name: "A" })).body.data.id;
    const touchpoint = (await apiA("POST", "/touchpoints", { accountId: account, type: "CALL", direction: "INBOUND" }))
      .body.data;
    const res = await apiB("GET", `/touchpoints/${touchpoint.id}`);
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe("not_found");
    expect((await apiB("GET", "/touchpoints")).body.data).toEqual([]);
    expect((await apiB("GET", `/touchpoints?accountId=${account}`)).body.data).toEqual([]);
    expect((await apiB("GET", `/touchpoints?cursor=${touchpoint.id}`)).status).toBe(400);

    const foreignRef = await apiB("POST", "/touchpoints", { accountId: account, type: "CALL", direction: "INBOUND" });
    expect(foreignRef.status).toBe(422);
    expect(await prisma().touchpoint.count({ where: { orgId: b.orgId } })).toBe(0);
    expect(await prisma().event.count({ where: { orgId: b.orgId } })).toBe(0);
  });
});
