// Deals (docs/api-contract.md §2.5, §3, §4.3, §6.1): endpoints, validation, stage transitions with their events, lists,
// bulk create and organisation isolation, over real HTTP against the real database.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { prisma } from "../../../server/db/transaction";
import { client, createKey, createTestOrg, expectKeysetPaging, startApi, type TestServer } from "../../helpers/api";

let server: TestServer;
let api: ReturnType<typeof client>;
let orgId: string;
let accountId: string;
let otherAccountId: string;

type DealBody = Record<string, unknown> & { id: string; updatedAt: string; closedAt: string | null };

beforeAll(async () => {
  server = await startApi();
  const org = await createTestOrg();
  orgId = org.orgId;
  api = client(server.url, org.key);
  accountId = (await api("POST", "/accounts", { name: "Deal Account" })).body.data.id;
  otherAccountId = (await api("POST", "/accounts", { name: "Second Account" })).body.data.id;
});
afterAll(() => server.close());

async function eventsOf(org: string, dealId?: string) {
  const events = await prisma().event.findMany({
    where: { orgId: org, name: { startsWith: "deal." } },
    orderBy: [{ createdAt: "asc" }, { id: "asc" }],
  });
  return dealId ? events.filter((event) => (event.data as { id: string }).id === dealId) : events;
}

const tick = () => new Promise((resolve) => setTimeout(resolve, 5));

describe("POST /deals", () => {
  it("creates a deal with 201, defaults, the row and a deal.created event carrying the GET shape", async () => {
    const res = await api("POST", "/deals", {
      name: "  Managed services for Acme ",
      accountId,
      estimatedMrr: 1234.5,
      serviceCategory: "Managed Services",
      ownerId: "user-7",
      expectedCloseDate: "2026-12-31",
    });
    expect(res.status).toBe(201);
    expect(res.body.success).toBe(true);
    const deal = res.body.data;
    expect(deal).toEqual({
      id: expect.any(String),
      name: "Managed services for Acme",
      accountId,
      estimatedMrr: 1234.5,
      probability: 10,
      stage: "QUALIFICATION",
      type: "NEW_BUSINESS",
      serviceCategory: "Managed Services",
      ownerId: "user-7",
      expectedCloseDate: "2026-12-31",
      closedAt: null,
      customFields: {},
      createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      updatedAt: deal.createdAt,
    });
    const row = await prisma().deal.findUnique({ where: { id: deal.id } });
    expect(row).toMatchObject({ orgId, accountId, stage: "QUALIFICATION", probability: 10, closedAt: null });
    expect(row?.estimatedMrr.toFixed(2)).toBe("1234.50");
    expect(row?.expectedCloseDate?.toISOString()).toBe("2026-12-31T00:00:00.000Z");

    expect((await api("GET", `/deals/${deal.id}`)).body.data).toEqual(deal);
    const events = await eventsOf(orgId, deal.id);
    expect(events.map((event) => event.name)).toEqual(["deal.created"]);
    expect(events[0]?.data).toEqual(deal);
    expect(events[0]?.isTest).toBe(false);
  });

  it("rounds float noise to cents and accepts every field", async () => {
    const res = await api("POST", "/deals", {
      name: "Full",
      accountId,
      estimatedMrr: 0.1 + 0.2,
      probability: 0,
      stage: "NEGOTIATION",
      type: "RENEWAL",
      serviceCategory: null,
      ownerId: null,
      expectedCloseDate: null,
    });
    expect(res.status).toBe(201);
    expect(res.body.data).toMatchObject({
      estimatedMrr: 0.3,
      probability: 0,
      stage: "NEGOTIATION",
      type: "RENEWAL",
      serviceCategory: null,
      expectedCloseDate: null,
      closedAt: null,
    });
  });

  it("stamps closedAt on a deal created as CLOSED_WON and records deal.created only", async () => {
    const before = Date.now();
    const res = await api("POST", "/deals", { name: "Already won", accountId, stage: "CLOSED_WON" });
    expect(res.status).toBe(201);
    expect(Date.parse(res.body.data.closedAt)).toBeGreaterThanOrEqual(before - 1000);
    expect(res.body.data.closedAt).toBe(res.body.data.createdAt);
    expect((await eventsOf(orgId, res.body.data.id)).map((event) => event.name)).toEqual(["deal.created"]);
    const lost = await api("POST", "/deals", { name: "Already lost", accountId, stage: "CLOSED_LOST" });
    expect(lost.body.data.closedAt).not.toBeNull();
  });

  it("refuses missing, unknown, read-only and malformed fields with 422 details", async () => {
    const res = await api("POST", "/deals", {
      colour: "red",
      closedAt: "2026-01-01T00:00:00.000Z",
      estimatedMrr: "12",
      probability: 50.5,
      stage: "WON",
      type: "CHURN",
      expectedCloseDate: "2026-02-30",
    });
    expect(res.status).toBe(422);
    expect(res.body.error.code).toBe("validation_error");
    const paths = res.body.error.details.map((d: { path: string[] }) => d.path.join("."));
    expect(paths).toEqual(
      expect.arrayContaining([
        "name",
        "accountId",
        "colour",
        "closedAt",
        "estimatedMrr",
        "probability",
        "stage",
        "type",
        "expectedCloseDate",
      ]),
    );
    for (const body of [
      { name: "x", accountId, estimatedMrr: -1 },
      { name: "x", accountId, estimatedMrr: 1.005 },
      { name: "x", accountId, estimatedMrr: 10_000_000_000 },
      { name: "x", accountId, probability: 101 },
      { name: "x", accountId, probability: -1 },
      { name: "x", accountId, probability: "50" },
      { name: "x", accountId, expectedCloseDate: "2026-12-31T00:00:00Z" },
      { name: " ", accountId },
    ]) {
      const bad = await api("POST", "/deals", body);
      expect(bad.status, JSON.stringify(body)).toBe(422);
      expect(bad.body.error.details).toHaveLength(1);
    }
  });

  it("refuses an accountId that is not in the organisation with 422 and writes nothing", async () => {
    const org = await createTestOrg();
    const own = client(server.url, org.key);
    const res = await own("POST", "/deals", { name: "Orphan", accountId: "nosuchaccount123" });
    expect(res.status).toBe(422);
    expect(res.body.error.details).toEqual([
      { path: ["accountId"], message: "no account with this id in the organisation" },
    ]);
    expect(await prisma().deal.count({ where: { orgId: org.orgId } })).toBe(0);
    expect(await eventsOf(org.orgId)).toEqual([]);
  });

  it("needs deals:write (deals:read is 403) and a key", async () => {
    const reader = client(server.url, await createKey(orgId, ["deals:read"]));
    const res = await reader("POST", "/deals", { name: "Nope", accountId });
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe("insufficient_scope");
    expect((await reader("GET", "/deals")).status).toBe(200);
    expect((await client(server.url)("GET", "/deals")).status).toBe(401);
    const accountsOnly = client(server.url, await createKey(orgId, ["accounts:write"]));
    expect((await accountsOnly("GET", "/deals")).status).toBe(403);
  });
});

describe("GET /deals/{id}", () => {
  it("answers 404 for an unknown id and 400 for a malformed one", async () => {
    const missing = await api("GET", "/deals/doesnotexist123");
    expect(missing.status).toBe(404);
    expect(missing.body.error.code).toBe("not_found");
    const malformed = await api("GET", "/deals/bad%20id!");
    expect(malformed.status).toBe(400);
    expect(malformed.body.error.code).toBe("bad_request");
    expect((await api("PATCH", "/deals/doesnotexist123", { name: "x" })).status).toBe(404);
  });
});

describe("PATCH /deals/{id}: stage transitions (docs/api-contract.md §3) and their events (docs/api-contract.md §6.1)", () => {
  async function newDeal(body: Record<string, unknown> = {}): Promise<DealBody> {
    const res = await api("POST", "/deals", { name: "Pipeline", accountId, ...body });
    expect(res.status).toBe(201);
    return res.body.data;
  }
  async function patch(id: string, body: Record<string, unknown>): Promise<DealBody> {
    const res = await api("PATCH", `/deals/${id}`, body);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body.data;
  }

  it("records deal.stage_changed for a move between open stages, with the deal after the change", async () => {
    const deal = await newDeal();
    await tick();
    const moved = await patch(deal.id, { stage: "DISCOVERY", probability: 25 });
    expect(moved).toMatchObject({ stage: "DISCOVERY", probability: 25, closedAt: null });
    expect(Date.parse(moved.updatedAt)).toBeGreaterThan(Date.parse(deal.updatedAt));
    const events = await eventsOf(orgId, deal.id);
    expect(events.map((event) => event.name)).toEqual(["deal.created", "deal.stage_changed"]);
    expect(events[1]?.data).toEqual(moved);
    expect((await api("GET", `/deals/${deal.id}`)).body.data).toEqual(moved);
  });

  it("records deal.closed_won and stamps closedAt when an open deal is won", async () => {
    const deal = await newDeal({ stage: "NEGOTIATION" });
    const before = Date.now();
    const won = await patch(deal.id, { stage: "CLOSED_WON" });
    expect(won.stage).toBe("CLOSED_WON");
    expect(Date.parse(won.closedAt ?? "")).toBeGreaterThanOrEqual(before - 1000);
    expect(won.closedAt).toBe(won.updatedAt);
    const events = await eventsOf(orgId, deal.id);
    expect(events.map((event) => event.name)).toEqual(["deal.created", "deal.closed_won"]);
    expect(events[1]?.data).toEqual(won);
    const row = await prisma().deal.findUnique({ where: { id: deal.id } });
    expect(row?.closedAt?.toISOString()).toBe(won.closedAt);
  });

  it("records deal.closed_lost and stamps closedAt when an open deal is lost", async () => {
    const deal = await newDeal({ stage: "PROPOSAL" });
    const lost = await patch(deal.id, { stage: "CLOSED_LOST" });
    expect(lost.closedAt).not.toBeNull();
    const events = await eventsOf(orgId, deal.id);
    expect(events.map((event) => event.name)).toEqual(["deal.created", "deal.closed_lost"]);
    expect(events[1]?.data).toEqual(lost);
  });

  it("allows switching between outcomes (new event, closedAt re-stamped) and reopening (stage_changed, closedAt cleared)", async () => {
    const deal = await newDeal();
    const won = await patch(deal.id, { stage: "CLOSED_WON" });
    await tick();
    const lost = await patch(deal.id, { stage: "CLOSED_LOST" });
    expect(Date.parse(lost.closedAt ?? "")).toBeGreaterThan(Date.parse(won.closedAt ?? ""));
    await tick();
    const reopened = await patch(deal.id, { stage: "NEGOTIATION" });
    expect(reopened).toMatchObject({ stage: "NEGOTIATION", closedAt: null });
    expect((await prisma().deal.findUnique({ where: { id: deal.id } }))?.closedAt).toBeNull();
    const wonAgain = await patch(deal.id, { stage: "CLOSED_WON" });
    const events = await eventsOf(orgId, deal.id);
    expect(events.map((event) => event.name)).toEqual([
      "deal.created",
      "deal.closed_won",
      "deal.closed_lost",
      "deal.stage_changed",
      "deal.closed_won",
    ]);
    expect(events.map((event) => event.data)).toEqual([deal, won, lost, reopened, wonAgain]);
  });

  it("records deal.updated for other fields, and changes nothing (no updatedAt, no event) on a no-op", async () => {
    const deal = await newDeal({ estimatedMrr: 100, serviceCategory: "Backup", expectedCloseDate: "2027-01-15" });
    await tick();
    const edited = await patch(deal.id, {
      name: "Renamed",
      estimatedMrr: 250.75,
      type: "UPSELL",
      ownerId: "owner-1",
      serviceCategory: null,
      expectedCloseDate: null,
    });
    expect(edited).toMatchObject({
      name: "Renamed",
      estimatedMrr: 250.75,
      type: "UPSELL",
      ownerId: "owner-1",
      serviceCategory: null,
      expectedCloseDate: null,
      stage: "QUALIFICATION",
    });
    expect(Date.parse(edited.updatedAt)).toBeGreaterThan(Date.parse(deal.updatedAt));
    await tick();
    const noop = await patch(deal.id, {
      name: "Renamed",
      estimatedMrr: 250.75,
      stage: "QUALIFICATION",
      serviceCategory: null,
    });
    expect(noop).toEqual(edited);
    const empty = await patch(deal.id, {});
    expect(empty).toEqual(edited);
    expect((await eventsOf(orgId, deal.id)).map((event) => event.name)).toEqual(["deal.created", "deal.updated"]);

    const won = await patch(deal.id, { stage: "CLOSED_WON" });
    const again = await patch(deal.id, { stage: "CLOSED_WON" });
    expect(again).toEqual(won);
    expect((await eventsOf(orgId, deal.id)).map((event) => event.name)).toEqual([
      "deal.created",
      "deal.updated",
      "deal.closed_won",
    ]);
  });

  it("records one event when the same move arrives several times at once", async () => {
    const deal = await newDeal();
    const responses = await Promise.all(
      Array.from({ length: 5 }, () => api("PATCH", `/deals/${deal.id}`, { stage: "CLOSED_WON" })),
    );
    expect(responses.map((res) => res.status)).toEqual([200, 200, 200, 200, 200]);
    expect(new Set(responses.map((res) => res.body.data.closedAt)).size).toBe(1);
    expect((await eventsOf(orgId, deal.id)).map((event) => event.name)).toEqual(["deal.created", "deal.closed_won"]);
  });

  it("moves a deal to another account of the organisation, refuses a foreign one and the read-only closedAt", async () => {
    const deal = await newDeal();
    const moved = await patch(deal.id, { accountId: otherAccountId });
    expect(moved.accountId).toBe(otherAccountId);
    const foreign = await api("PATCH", `/deals/${deal.id}`, { accountId: "nosuchaccount123", stage: "CLOSED_WON" });
    expect(foreign.status).toBe(422);
    expect(foreign.body.error.details).toEqual([
      { path: ["accountId"], message: "no account with this id in the organisation" },
    ]);
    const readOnly = await api("PATCH", `/deals/${deal.id}`, { closedAt: null, probability: 101 });
    expect(readOnly.status).toBe(422);
    expect(readOnly.body.error.details.map((d: { path: string[] }) => d.path.join("."))).toEqual(
      expect.arrayContaining(["closedAt", "probability"]),
    );
    expect((await api("GET", `/deals/${deal.id}`)).body.data).toEqual(moved);
    expect((await eventsOf(orgId, deal.id)).map((event) => event.name)).toEqual(["deal.created", "deal.updated"]);
  });
});

describe("GET /deals", () => {
  let list: ReturnType<typeof client>;
  let acc1: string;
  let acc2: string;
  const names = (res: { body: { data: Array<{ name: string }> } }) => res.body.data.map((deal) => deal.name);

  beforeAll(async () => {
    const org = await createTestOrg();
    list = client(server.url, org.key);
    acc1 = (await list("POST", "/accounts", { name: "One" })).body.data.id;
    acc2 = (await list("POST", "/accounts", { name: "Two" })).body.data.id;
    const deals = [
      { name: "D1", accountId: acc1, estimatedMrr: 500, probability: 20, stage: "DISCOVERY", ownerId: "ann" },
      { name: "D2", accountId: acc2, estimatedMrr: 100, probability: 90, type: "RENEWAL", ownerId: "bob" },
      { name: "D3", accountId: acc1, estimatedMrr: 900, probability: 50, stage: "CLOSED_WON", ownerId: "ann" },
      { name: "D4", accountId: acc2, estimatedMrr: 100, probability: 10, stage: "DISCOVERY", type: "UPSELL" },
      { name: "D5", accountId: acc1, estimatedMrr: 0, probability: 90, type: "RENEWAL" },
    ];
    for (const deal of deals) expect((await list("POST", "/deals", deal)).status).toBe(201);
  });

  it("lists in creation order by default with the list envelope", async () => {
    const res = await list("GET", "/deals");
    expect(res.status).toBe(200);
    expect(names(res)).toEqual(["D1", "D2", "D3", "D4", "D5"]);
    expect(res.body.hasMore).toBe(false);
    expect(res.body.nextCursor).toBe(res.body.data[4].id);
  });

  it("filters by stage, accountId, ownerId and type, combined with AND", async () => {
    expect(names(await list("GET", "/deals?stage=DISCOVERY"))).toEqual(["D1", "D4"]);
    expect(names(await list("GET", `/deals?accountId=${acc1}`))).toEqual(["D1", "D3", "D5"]);
    expect(names(await list("GET", "/deals?ownerId=ann"))).toEqual(["D1", "D3"]);
    expect(names(await list("GET", "/deals?type=RENEWAL"))).toEqual(["D2", "D5"]);
    expect(names(await list("GET", `/deals?type=RENEWAL&accountId=${acc1}`))).toEqual(["D5"]);
    expect(names(await list("GET", "/deals?stage=CLOSED_WON&ownerId=bob"))).toEqual([]);
    expect((await list("GET", "/deals?stage=WON")).status).toBe(422);
    expect((await list("GET", "/deals?type=OTHER")).status).toBe(422);
    const unknown = await list("GET", "/deals?colour=red");
    expect(unknown.status).toBe(422);
    expect(unknown.body.error.details[0].path).toEqual(["colour"]);
  });

  it("sorts by estimatedMrr, probability, createdAt and updatedAt, ignoring unknown fields", async () => {
    expect(names(await list("GET", "/deals?sort=estimatedMrr:desc,createdAt:asc"))).toEqual([
      "D3",
      "D1",
      "D2",
      "D4",
      "D5",
    ]);
    expect(names(await list("GET", "/deals?sort=estimatedMrr:asc,probability:desc"))).toEqual([
      "D5",
      "D2",
      "D4",
      "D1",
      "D3",
    ]);
    expect(names(await list("GET", "/deals?sort=probability:asc,createdAt:desc"))).toEqual([
      "D4",
      "D1",
      "D3",
      "D5",
      "D2",
    ]);
    expect(names(await list("GET", "/deals?sort=createdAt:desc"))).toEqual(["D5", "D4", "D3", "D2", "D1"]);
    // Ignored (the default order applies and the answer names it), or refused when the request asks for strict.
    const ignored = await list("GET", "/deals?sort=name:desc");
    expect(names(ignored)).toEqual(names(await list("GET", "/deals")));
    expect(ignored.headers.get("sort-ignored")).toBe('"name:desc"');
    expect((await list("GET", "/deals?sort=name:desc", undefined, { Prefer: "handling=strict" })).status).toBe(422);
    const d2 = (await list("GET", "/deals?type=RENEWAL")).body.data[0];
    await list("PATCH", `/deals/${d2.id}`, { probability: 95 });
    expect(names(await list("GET", "/deals?sort=updatedAt:desc")).at(0)).toBe("D2");
    await list("PATCH", `/deals/${d2.id}`, { probability: 90 });
  });

  it("pages with limit and cursor under every sort, without gaps or repeats", async () => {
    await expectKeysetPaging(list, "/deals", [
      "",
      "estimatedMrr:asc",
      "estimatedMrr:desc",
      "probability:desc",
      "updatedAt:asc",
    ]);
    expect((await list("GET", "/deals?limit=101")).status).toBe(422);
    expect((await list("GET", "/deals?limit=0")).status).toBe(422);
    const cursor = await list("GET", "/deals?cursor=nosuchrecord");
    expect(cursor.status).toBe(400);
    expect(cursor.body.error.code).toBe("bad_request");
  });

  it("returns only deals updated after updatedAfter", async () => {
    const all = (await list("GET", "/deals")).body.data;
    const mark = new Date().toISOString();
    await tick();
    await list("PATCH", `/deals/${all[2].id}`, { stage: "NEGOTIATION" });
    const res = await list("GET", `/deals?updatedAfter=${encodeURIComponent(mark)}`);
    expect(res.body.data.map((d: { id: string }) => d.id)).toEqual([all[2].id]);
    expect(res.body.data[0]).toMatchObject({ stage: "NEGOTIATION", closedAt: null });
    expect((await list("GET", "/deals?updatedAfter=yesterday")).status).toBe(422);
  });
});

describe("POST /deals/bulk", () => {
  it("creates every item with 201, results in request order and one deal.created per deal", async () => {
    const org = await createTestOrg();
    const bulk = client(server.url, org.key);
    const acc = (await bulk("POST", "/accounts", { name: "Bulk" })).body.data.id;
    const res = await bulk("POST", "/deals/bulk", {
      deals: [
        {
          name: "B0",
          accountId: acc,
          estimatedMrr: 99.99,
          serviceCategory: "Security",
          expectedCloseDate: "2026-06-30",
        },
        { name: "B1", accountId: acc, stage: "CLOSED_WON", probability: 100, type: "UPSELL", ownerId: "o" },
        { name: "B2", accountId: acc },
      ],
    });
    expect(res.status).toBe(201);
    expect(res.body.data).toMatchObject({ created: 3, total: 3 });
    expect(res.body.data.results.map((r: { index: number }) => r.index)).toEqual([0, 1, 2]);
    const ids: string[] = res.body.data.results.map((r: { id: string }) => r.id);
    expect(new Set(ids).size).toBe(3);

    const got = await Promise.all(ids.map(async (id) => (await bulk("GET", `/deals/${id}`)).body.data));
    expect(got[0]).toMatchObject({
      name: "B0",
      estimatedMrr: 99.99,
      probability: 10,
      stage: "QUALIFICATION",
      type: "NEW_BUSINESS",
      serviceCategory: "Security",
      expectedCloseDate: "2026-06-30",
      ownerId: null,
      closedAt: null,
    });
    expect(got[0].createdAt).toBe(got[0].updatedAt);
    expect(got[1]).toMatchObject({ name: "B1", stage: "CLOSED_WON", probability: 100, type: "UPSELL", ownerId: "o" });
    expect(got[1].closedAt).toBe(got[1].createdAt);
    expect(got[2]).toMatchObject({ name: "B2", estimatedMrr: 0, serviceCategory: null, expectedCloseDate: null });

    const events = await eventsOf(org.orgId);
    expect(events.map((event) => event.name)).toEqual(["deal.created", "deal.created", "deal.created"]);
    const byId = new Map(events.map((event) => [(event.data as { id: string }).id, event.data]));
    for (const deal of got) expect(byId.get(deal.id)).toEqual(deal);

    const again = await bulk("POST", "/deals/bulk", { deals: [{ name: "B0", accountId: acc }] });
    expect(again.body.data.results[0].id).not.toBe(ids[0]);
    expect(await prisma().deal.count({ where: { orgId: org.orgId } })).toBe(4);
  });

  it("refuses unknown accounts, invalid items, an empty list and more than 500 items without writing", async () => {
    const org = await createTestOrg();
    const bulk = client(server.url, org.key);
    const acc = (await bulk("POST", "/accounts", { name: "Bulk" })).body.data.id;
    const unknown = await bulk("POST", "/deals/bulk", {
      deals: [
        { name: "ok", accountId: acc },
        { name: "no account", accountId: "nosuchaccount1" },
        { name: "ok", accountId: acc },
        { name: "other org", accountId },
      ],
    });
    expect(unknown.status).toBe(422);
    expect(unknown.body.error.details).toEqual([
      { path: ["deals", "1", "accountId"], message: "no account with this id in the organisation" },
      { path: ["deals", "3", "accountId"], message: "no account with this id in the organisation" },
    ]);
    const invalid = await bulk("POST", "/deals/bulk", {
      deals: [
        { name: "ok", accountId: acc },
        { name: "bad", accountId: acc, probability: 200, id: "x" },
      ],
    });
    expect(invalid.status).toBe(422);
    expect(invalid.body.error.details.map((d: { path: string[] }) => d.path.join("."))).toEqual(
      expect.arrayContaining(["deals.1.probability", "deals.1.id"]),
    );
    expect((await bulk("POST", "/deals/bulk", { deals: [] })).status).toBe(422);
    expect((await bulk("POST", "/deals/bulk", {})).status).toBe(422);
    const tooMany = Array.from({ length: 501 }, (_, i) => ({ name: `D${i}`, accountId: acc }));
    const res = await bulk("POST", "/deals/bulk", { deals: tooMany });
    expect(res.status).toBe(422);
    expect(res.body.error.details[0].path).toEqual(["deals"]);
    expect(await prisma().deal.count({ where: { orgId: org.orgId } })).toBe(0);
    expect(await eventsOf(org.orgId)).toEqual([]);
  });

  it("accepts exactly 500 items", async () => {
    const org = await createTestOrg();
    const bulk = client(server.url, org.key);
    const acc = (await bulk("POST", "/accounts", { name: "Bulk" })).body.data.id;
    const items = Array.from({ length: 500 }, (_, i) => ({ name: `Bulk ${i}`, accountId: acc, estimatedMrr: i }));
    const res = await bulk("POST", "/deals/bulk", { deals: items });
    expect(res.status).toBe(201);
    expect(res.body.data).toMatchObject({ created: 500, total: 500 });
    expect(await prisma().deal.count({ where: { orgId: org.orgId } })).toBe(500);
    expect(await prisma().event.count({ where: { orgId: org.orgId, name: "deal.created" } })).toBe(500);
    const last = await bulk("GET", `/deals/${res.body.data.results[499].id}`);
    expect(last.body.data).toMatchObject({ name: "Bulk 499", estimatedMrr: 499 });
  });
});

describe("test keys", () => {
  it("flags every deal event caused by a msp_test_ key", async () => {
    const org = await createTestOrg();
    const live = client(server.url, org.key);
    const acc = (await live("POST", "/accounts", { name: "Test traffic" })).body.data.id;
    const test = client(server.url, await createKey(org.orgId, ["deals:write"], true));
    const deal = (await test("POST", "/deals", { name: "T", accountId: acc })).body.data;
    await test("PATCH", `/deals/${deal.id}`, { stage: "PROPOSAL" });
    await test("PATCH", `/deals/${deal.id}`, { stage: "CLOSED_WON" });
    await test("POST", "/deals/bulk", { deals: [{ name: "TB", accountId: acc }] });
    const events = await eventsOf(org.orgId);
    expect(events.map((event) => event.name).sort()).toEqual([
      "deal.closed_won",
      "deal.created",
      "deal.created",
      "deal.stage_changed",
    ]);
    expect(events.every((event) => event.isTest)).toBe(true);
  });
});

describe("organisation isolation (docs/api-contract.md §1)", () => {
  it("gives another organisation 404 on get and patch, hides the deals, and refuses its accounts with 422", async () => {
    const a = await createTestOrg();
    const b = await createTestOrg();
    const apiA = client(server.url, a.key);
    const apiB = client(server.url, b.key);
    const accA = (await apiA("POST", "/accounts", { name: "A's" })).body.data.id;
    const deal = (await apiA("POST", "/deals", { name: "Secret", accountId: accA })).body.data;

    for (const [method, path, body] of [
      ["GET", `/deals/${deal.id}`, undefined],
      ["PATCH", `/deals/${deal.id}`, { stage: "CLOSED_LOST" }],
    ] as const) {
      const res = await apiB(method, path, body);
      expect(res.status).toBe(404);
      expect(res.body.error.code).toBe("not_found");
    }
    expect((await apiB("GET", "/deals")).body.data).toEqual([]);
    expect((await apiB("GET", `/deals?accountId=${accA}`)).body.data).toEqual([]);
    expect((await apiB("GET", `/deals?cursor=${deal.id}`)).status).toBe(400);

    const create = await apiB("POST", "/deals", { name: "Steal", accountId: accA });
    expect(create.status).toBe(422);
    expect(create.body.error.details[0]).toEqual({
      path: ["accountId"],
      message: "no account with this id in the organisation",
    });
    const accB = (await apiB("POST", "/accounts", { name: "B's" })).body.data.id;
    const own = (await apiB("POST", "/deals", { name: "Own", accountId: accB })).body.data;
    expect((await apiB("PATCH", `/deals/${own.id}`, { accountId: accA })).status).toBe(422);
    expect((await apiB("POST", "/deals/bulk", { deals: [{ name: "Steal", accountId: accA }] })).status).toBe(422);
    expect(await prisma().deal.count({ where: { orgId: b.orgId } })).toBe(1);
    expect((await apiA("GET", `/deals/${deal.id}`)).body.data).toEqual(deal);
    expect((await eventsOf(a.orgId)).map((event) => event.name)).toEqual(["deal.created"]);
  });
});
