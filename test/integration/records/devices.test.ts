// Devices (docs/api-contract.md §2.6, §3, §4.4, §6.1): CRUD, list filters/sort/pagination, bulk upsert by rmmAgentId,
// the offline / end-of-life transitions with their events, and organisation isolation.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { prisma } from "../../../server/db/transaction";
import { client, createKey, createTestOrg, expectKeysetPaging, startApi, type TestServer } from "../../helpers/api";

let server: TestServer;
let api: ReturnType<typeof client>;
let orgId: string;
let accountId: string;
let otherAccountId: string;

beforeAll(async () => {
  server = await startApi();
  const org = await createTestOrg();
  orgId = org.orgId;
  api = client(server.url, org.key);
  accountId = (await api("POST", "/accounts", { name: "Device Owner" })).body.data.id;
  otherAccountId = (await api("POST", "/accounts", { name: "Second Owner" })).body.data.id;
});
afterAll(() => server.close());

/** Device events of an organisation (of one device when given), oldest first. */
async function eventsOf(org: string, deviceId?: string) {
  return prisma().event.findMany({
    where: {
      orgId: org,
      name: { startsWith: "device." },
      ...(deviceId ? { data: { path: ["id"], equals: deviceId } } : {}),
    },
    orderBy: [{ createdAt: "asc" }, { id: "asc" }],
  });
}

/** Event names of a device, sorted: events of one transaction share their timestamp. */
async function eventNames(org: string, deviceId: string) {
  return (await eventsOf(org, deviceId)).map((event) => event.name).sort();
}

let agentSeq = 0;
function agent() {
  agentSeq += 1;
  return `agent-${agentSeq}`;
}

describe("POST /devices", () => {
  it("creates a device with 201, the defaults, the row and device.created carrying the GET shape", async () => {
    const rmmAgentId = agent();
    const res = await api("POST", "/devices", { rmmAgentId, accountId, hostname: "  ws-001  ", os: "Windows 11" });
    expect(res.status).toBe(201);
    expect(res.body.success).toBe(true);
    expect(res.body.data).toEqual({
      id: expect.any(String),
      rmmAgentId,
      accountId,
      hostname: "ws-001",
      deviceType: null,
      os: "Windows 11",
      isOnline: true,
      isEndOfLife: false,
      patchCompliant: true,
      lastSeenAt: null,
      customFields: {},
      createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      updatedAt: res.body.data.createdAt,
    });
    const row = await prisma().device.findUnique({ where: { id: res.body.data.id } });
    expect(row).toMatchObject({ orgId, rmmAgentId, accountId, hostname: "ws-001" });
    const got = await api("GET", `/devices/${res.body.data.id}`);
    expect(got.status).toBe(200);
    expect(got.body.data).toEqual(res.body.data);
    const events = await eventsOf(orgId, res.body.data.id);
    expect(events.map((event) => event.name)).toEqual(["device.created"]);
    expect(events[0]?.data).toEqual(got.body.data);
    expect(events[0]?.isTest).toBe(false);
  });

  it("records only device.created for a device created offline and end-of-life, and keeps every field", async () => {
    const res = await api("POST", "/devices", {
      rmmAgentId: agent(),
      accountId,
      hostname: "old-server",
      deviceType: "SERVER",
      os: "Windows Server 2012",
      isOnline: false,
      isEndOfLife: true,
      patchCompliant: false,
      lastSeenAt: "2026-11-20T12:30:00.5+02:00",
    });
    expect(res.status).toBe(201);
    expect(res.body.data).toMatchObject({
      deviceType: "SERVER",
      isOnline: false,
      isEndOfLife: true,
      patchCompliant: false,
      lastSeenAt: "2026-11-20T10:30:00.500Z",
    });
    expect(await eventNames(orgId, res.body.data.id)).toEqual(["device.created"]);
  });

  it("refuses missing required fields, unknown fields and non-JSON types with 422 details", async () => {
    const res = await api("POST", "/devices", { os: "x", colour: "red", isOnline: "false", lastSeenAt: "yesterday" });
    expect(res.status).toBe(422);
    expect(res.body.error.code).toBe("validation_error");
    const paths = res.body.error.details.map((d: { path: string[] }) => d.path.join("."));
    expect(paths).toEqual(
      expect.arrayContaining(["rmmAgentId", "accountId", "hostname", "colour", "isOnline", "lastSeenAt"]),
    );
    const blank = await api("POST", "/devices", { rmmAgentId: "", accountId, hostname: "   " });
    expect(blank.status).toBe(422);
    expect(blank.body.error.details.map((d: { path: string[] }) => d.path[0]).sort()).toEqual([
      "hostname",
      "rmmAgentId",
    ]);
    const numeric = await api("POST", "/devices", { rmmAgentId: agent(), accountId, hostname: "h", patchCompliant: 1 });
    expect(numeric.status).toBe(422);
    expect(numeric.body.error.details[0].path).toEqual(["patchCompliant"]);
  });

  it("refuses an account that is not in the organisation and a duplicate rmmAgentId, creating nothing", async () => {
    const before = await prisma().device.count({ where: { orgId } });
    const eventsBefore = (await eventsOf(orgId)).length;
    const unknown = await api("POST", "/devices", { rmmAgentId: agent(), accountId: "nosuchaccount1", hostname: "h" });
    expect(unknown.status).toBe(422);
    expect(unknown.body.error.details).toEqual([
      { path: ["accountId"], message: "no account with this id in the organisation" },
    ]);

    const rmmAgentId = agent();
    expect((await api("POST", "/devices", { rmmAgentId, accountId, hostname: "first" })).status).toBe(201);
    const dup = await api("POST", "/devices", { rmmAgentId, accountId: otherAccountId, hostname: "second" });
    expect(dup.status).toBe(422);
    expect(dup.body.error.details[0].path).toEqual(["rmmAgentId"]);
    expect(await prisma().device.count({ where: { orgId } })).toBe(before + 1);
    expect((await eventsOf(orgId)).length).toBe(eventsBefore + 1);
  });

  it("needs devices:write (a read-only key gets 403) and devices:read to read", async () => {
    const readOnly = client(server.url, await createKey(orgId, ["devices:read"]));
    const res = await readOnly("POST", "/devices", { rmmAgentId: agent(), accountId, hostname: "h" });
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe("insufficient_scope");
    expect((await readOnly("GET", "/devices")).status).toBe(200);
    const accountsOnly = client(server.url, await createKey(orgId, ["accounts:read"]));
    expect((await accountsOnly("GET", "/devices")).status).toBe(403);
  });
});

describe("GET/PATCH/DELETE /devices/{id}", () => {
  it("patches fields, records device.updated, and a no-op patch changes nothing", async () => {
    const created = (await api("POST", "/devices", { rmmAgentId: agent(), accountId, hostname: "p1", os: "Linux" }))
      .body.data;
    const patched = await api("PATCH", `/devices/${created.id}`, {
      hostname: "p1-renamed",
      os: null,
      accountId: otherAccountId,
      patchCompliant: false,
      lastSeenAt: "2026-11-21T08:00:00Z",
    });
    expect(patched.status).toBe(200);
    expect(patched.body.data).toMatchObject({
      id: created.id,
      hostname: "p1-renamed",
      os: null,
      accountId: otherAccountId,
      patchCompliant: false,
      lastSeenAt: "2026-11-21T08:00:00.000Z",
      isOnline: true,
    });
    expect(Date.parse(patched.body.data.updatedAt)).toBeGreaterThanOrEqual(Date.parse(created.updatedAt));
    const events = await eventsOf(orgId, created.id);
    expect(events.map((event) => event.name)).toEqual(["device.created", "device.updated"]);
    expect(events[1]?.data).toEqual((await api("GET", `/devices/${created.id}`)).body.data);

    const noop = await api("PATCH", `/devices/${created.id}`, {
      hostname: "p1-renamed",
      os: null,
      lastSeenAt: "2026-11-21T09:00:00+01:00",
    });
    expect(noop.status).toBe(200);
    expect(noop.body.data).toEqual(patched.body.data);
    expect(await eventNames(orgId, created.id)).toEqual(["device.created", "device.updated"]);
    const empty = await api("PATCH", `/devices/${created.id}`, {});
    expect(empty.body.data.updatedAt).toBe(patched.body.data.updatedAt);
  });

  it("records device.updated plus device.offline when isOnline goes true → false, and nothing more after", async () => {
    const device = (await api("POST", "/devices", { rmmAgentId: agent(), accountId, hostname: "on" })).body.data;
    const offline = await api("PATCH", `/devices/${device.id}`, { isOnline: false });
    expect(offline.body.data.isOnline).toBe(false);
    expect(await eventNames(orgId, device.id)).toEqual(["device.created", "device.offline", "device.updated"]);
    const events = await eventsOf(orgId, device.id);
    for (const event of events.filter((e) => e.name !== "device.created"))
      expect(event.data).toEqual(offline.body.data);

    // Staying offline is no change; coming back online is a plain update.
    await api("PATCH", `/devices/${device.id}`, { isOnline: false });
    expect((await eventsOf(orgId, device.id)).length).toBe(3);
    await api("PATCH", `/devices/${device.id}`, { isOnline: true });
    expect(await eventNames(orgId, device.id)).toEqual([
      "device.created",
      "device.offline",
      "device.updated",
      "device.updated",
    ]);
    // A second outage is a second transition.
    await api("PATCH", `/devices/${device.id}`, { isOnline: false });
    expect((await eventNames(orgId, device.id)).filter((name) => name === "device.offline")).toHaveLength(2);
  });

  it("records one device.offline however many concurrent requests take the device offline", async () => {
    const device = (await api("POST", "/devices", { rmmAgentId: agent(), accountId, hostname: "race" })).body.data;
    const patches = Array.from({ length: 4 }, () => api("PATCH", `/devices/${device.id}`, { isOnline: false }));
    const bulks = Array.from({ length: 4 }, () =>
      api("POST", "/devices/bulk", {
        devices: [{ rmmAgentId: device.rmmAgentId, accountId, hostname: "race", isOnline: false }],
      }),
    );
    for (const res of await Promise.all([...patches, ...bulks])) expect(res.status).toBe(200);
    expect(await eventNames(orgId, device.id)).toEqual(["device.created", "device.offline", "device.updated"]);
  });

  it("records device.end_of_life when flagged end-of-life, never when unflagged, and both transitions at once", async () => {
    const device = (await api("POST", "/devices", { rmmAgentId: agent(), accountId, hostname: "eol" })).body.data;
    await api("PATCH", `/devices/${device.id}`, { isEndOfLife: true });
    expect(await eventNames(orgId, device.id)).toEqual(["device.created", "device.end_of_life", "device.updated"]);
    await api("PATCH", `/devices/${device.id}`, { isEndOfLife: false });
    expect(await eventNames(orgId, device.id)).toEqual([
      "device.created",
      "device.end_of_life",
      "device.updated",
      "device.updated",
    ]);

    const both = (await api("POST", "/devices", { rmmAgentId: agent(), accountId, hostname: "both" })).body.data;
    const res = await api("PATCH", `/devices/${both.id}`, { isOnline: false, isEndOfLife: true });
    expect(res.status).toBe(200);
    expect(await eventNames(orgId, both.id)).toEqual([
      "device.created",
      "device.end_of_life",
      "device.offline",
      "device.updated",
    ]);
  });

  it("refuses an accountId outside the organisation and a taken rmmAgentId, changing nothing", async () => {
    const foreign = await createTestOrg();
    const foreignAccount = (await client(server.url, foreign.key)("POST", "/accounts", { name: "Theirs" })).body.data;
    const taken = agent();
    await api("POST", "/devices", { rmmAgentId: taken, accountId, hostname: "taken" });
    const device = (await api("POST", "/devices", { rmmAgentId: agent(), accountId, hostname: "mine" })).body.data;

    const moved = await api("PATCH", `/devices/${device.id}`, { accountId: foreignAccount.id, hostname: "x" });
    expect(moved.status).toBe(422);
    expect(moved.body.error.details).toEqual([
      { path: ["accountId"], message: "no account with this id in the organisation" },
    ]);
    const clash = await api("PATCH", `/devices/${device.id}`, { rmmAgentId: taken });
    expect(clash.status).toBe(422);
    expect(clash.body.error.details[0].path).toEqual(["rmmAgentId"]);
    const unknownField = await api("PATCH", `/devices/${device.id}`, { serial: "123" });
    expect(unknownField.status).toBe(422);
    expect(unknownField.body.error.details[0].path).toEqual(["serial"]);
    expect((await api("GET", `/devices/${device.id}`)).body.data).toEqual(device);
    expect(await eventNames(orgId, device.id)).toEqual(["device.created"]);
  });

  it("hard-deletes with { id, deleted: true } and records device.deleted with a tombstone", async () => {
    const device = (await api("POST", "/devices", { rmmAgentId: agent(), accountId, hostname: "bye" })).body.data;
    const res = await api("DELETE", `/devices/${device.id}`);
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({ id: device.id, deleted: true });
    expect(await prisma().device.count({ where: { id: device.id } })).toBe(0);
    expect(await eventNames(orgId, device.id)).toEqual(["device.created", "device.deleted"]);
    expect((await api("GET", `/devices/${device.id}`)).status).toBe(404);
    expect((await api("DELETE", `/devices/${device.id}`)).status).toBe(404);
    expect((await api("PATCH", `/devices/${device.id}`, { hostname: "x" })).status).toBe(404);
  });

  it("answers 404 for an unknown id, 400 for a malformed one and 405 for an unsupported method", async () => {
    const missing = await api("GET", "/devices/doesnotexist123");
    expect(missing.status).toBe(404);
    expect(missing.body.error.code).toBe("not_found");
    const malformed = await api("GET", "/devices/bad%20id!");
    expect(malformed.status).toBe(400);
    expect(malformed.body.error.code).toBe("bad_request");
    const put = await api("PUT", "/devices/doesnotexist123", {});
    expect(put.status).toBe(405);
    expect(put.headers.get("allow")).toContain("PATCH");
  });
});

describe("GET /devices", () => {
  let list: ReturnType<typeof client>;
  let accountA: string;
  let accountB: string;
  const ids: Record<string, string> = {};
  beforeAll(async () => {
    const org = await createTestOrg();
    list = client(server.url, org.key);
    accountA = (await list("POST", "/accounts", { name: "A" })).body.data.id;
    accountB = (await list("POST", "/accounts", { name: "B" })).body.data.id;
    const devices = [
      {
        hostname: "delta",
        accountId: accountA,
        isOnline: true,
        isEndOfLife: false,
        lastSeenAt: "2026-11-20T10:00:00Z",
      },
      { hostname: "alpha", accountId: accountB, isOnline: false, isEndOfLife: false },
      {
        hostname: "charlie",
        accountId: accountA,
        isOnline: false,
        isEndOfLife: true,
        lastSeenAt: "2026-11-19T10:00:00Z",
      },
      { hostname: "bravo", accountId: accountB, isOnline: true, isEndOfLife: true, lastSeenAt: "2026-11-21T10:00:00Z" },
      { hostname: "echo", accountId: accountA, isOnline: true, isEndOfLife: false },
    ];
    for (const device of devices) {
      const res = await list("POST", "/devices", { rmmAgentId: `l-${device.hostname}`, ...device });
      expect(res.status).toBe(201);
      ids[device.hostname] = res.body.data.id;
    }
  });
  const names = (res: { body: { data: Array<{ hostname: string }> } }) => res.body.data.map((d) => d.hostname);

  it("lists in creation order by default with the list envelope", async () => {
    const res = await list("GET", "/devices");
    expect(res.status).toBe(200);
    expect(names(res)).toEqual(["delta", "alpha", "charlie", "bravo", "echo"]);
    expect(res.body.hasMore).toBe(false);
    expect(res.body.nextCursor).toBe(ids.echo);
  });

  it("filters by accountId, isOnline and isEndOfLife, alone and combined", async () => {
    expect(names(await list("GET", `/devices?accountId=${accountA}`))).toEqual(["delta", "charlie", "echo"]);
    expect(names(await list("GET", "/devices?isOnline=false"))).toEqual(["alpha", "charlie"]);
    expect(names(await list("GET", "/devices?isOnline=true"))).toEqual(["delta", "bravo", "echo"]);
    expect(names(await list("GET", "/devices?isEndOfLife=true"))).toEqual(["charlie", "bravo"]);
    expect(names(await list("GET", `/devices?accountId=${accountA}&isOnline=false&isEndOfLife=true`))).toEqual([
      "charlie",
    ]);
    expect(names(await list("GET", "/devices?accountId=nosuchaccount"))).toEqual([]);
    const bad = await list("GET", "/devices?isOnline=yes");
    expect(bad.status).toBe(422);
    expect(bad.body.error.details[0].path).toEqual(["isOnline"]);
    const unknown = await list("GET", "/devices?colour=red");
    expect(unknown.status).toBe(422);
    expect(unknown.body.error.details[0].path).toEqual(["colour"]);
  });

  it("sorts by hostname, lastSeenAt (nulls last), createdAt and updatedAt, ignoring unknown fields", async () => {
    expect(names(await list("GET", "/devices?sort=hostname:asc"))).toEqual([
      "alpha",
      "bravo",
      "charlie",
      "delta",
      "echo",
    ]);
    expect(names(await list("GET", "/devices?sort=hostname:desc"))).toEqual([
      "echo",
      "delta",
      "charlie",
      "bravo",
      "alpha",
    ]);
    const lastSeenAsc = names(await list("GET", "/devices?sort=lastSeenAt:asc"));
    expect(lastSeenAsc.slice(0, 3)).toEqual(["charlie", "delta", "bravo"]);
    expect(lastSeenAsc.slice(3).sort()).toEqual(["alpha", "echo"]);
    expect(names(await list("GET", "/devices?sort=lastSeenAt:desc,hostname:asc"))).toEqual([
      "bravo",
      "delta",
      "charlie",
      "alpha",
      "echo",
    ]);
    expect(names(await list("GET", "/devices?sort=createdAt:desc"))).toEqual([
      "echo",
      "bravo",
      "charlie",
      "alpha",
      "delta",
    ]);
    // Ignored (the default order applies and the answer names it), or refused when the request asks for strict.
    const ignored = await list("GET", "/devices?sort=os:desc");
    expect(names(ignored)).toEqual(names(await list("GET", "/devices")));
    expect(ignored.headers.get("sort-ignored")).toBe('"os:desc"');
    expect((await list("GET", "/devices?sort=os:desc", undefined, { Prefer: "handling=strict" })).status).toBe(422);
    await list("PATCH", `/devices/${ids.alpha}`, { os: "macOS" });
    expect(names(await list("GET", "/devices?sort=updatedAt:desc")).at(0)).toBe("alpha");
  });

  it("pages with limit and cursor under every sort, without gaps or repeats", async () => {
    await expectKeysetPaging(list, "/devices", [
      "",
      "hostname:asc",
      "lastSeenAt:asc",
      "lastSeenAt:desc",
      "updatedAt:desc",
      "createdAt:desc",
    ]);
    expect((await list("GET", "/devices?limit=101")).status).toBe(422);
    const cursor = await list("GET", "/devices?cursor=nosuchrecord");
    expect(cursor.status).toBe(400);
    expect(cursor.body.error.code).toBe("bad_request");
  });

  it("returns only devices updated after updatedAfter", async () => {
    const mark = new Date().toISOString();
    await new Promise((resolve) => setTimeout(resolve, 5));
    await list("PATCH", `/devices/${ids.charlie}`, { isOnline: true });
    const res = await list("GET", `/devices?updatedAfter=${encodeURIComponent(mark)}`);
    expect(res.body.data.map((d: { id: string }) => d.id)).toEqual([ids.charlie]);
    expect((await list("GET", "/devices?updatedAfter=yesterday")).status).toBe(422);
  });
});

describe("POST /devices/bulk", () => {
  it("creates new rmmAgentIds, updates existing ones without duplicating, and keeps omitted optional fields", async () => {
    const org = await createTestOrg();
    const bulk = client(server.url, org.key);
    const account = (await bulk("POST", "/accounts", { name: "Bulk Co" })).body.data.id;
    const account2 = (await bulk("POST", "/accounts", { name: "Bulk Two" })).body.data.id;
    const first = await bulk("POST", "/devices/bulk", {
      devices: [
        { rmmAgentId: "r-1", accountId: account, hostname: "one", os: "Windows 10", deviceType: "LAPTOP" },
        { rmmAgentId: "r-2", accountId: account, hostname: "two", isOnline: false },
      ],
    });
    expect(first.status).toBe(200);
    expect(first.body.data).toEqual({
      created: 2,
      updated: 0,
      total: 2,
      results: [
        { rmmAgentId: "r-1", id: expect.any(String), action: "created" },
        { rmmAgentId: "r-2", id: expect.any(String), action: "created" },
      ],
    });
    const [one, two] = first.body.data.results.map((r: { id: string }) => r.id);
    expect((await bulk("GET", `/devices/${two}`)).body.data).toMatchObject({
      isOnline: false,
      isEndOfLife: false,
      patchCompliant: true,
      deviceType: null,
    });

    const second = await bulk("POST", "/devices/bulk", {
      devices: [
        { rmmAgentId: "r-3", accountId: account2, hostname: "three" },
        { rmmAgentId: "r-1", accountId: account2, hostname: "one-renamed", lastSeenAt: "2026-11-21T06:00:00+01:00" },
        { rmmAgentId: "r-2", accountId: account, hostname: "two", isOnline: false },
      ],
    });
    expect(second.status).toBe(200);
    expect(second.body.data).toMatchObject({ created: 1, updated: 2, total: 3 });
    expect(second.body.data.results.slice(1)).toEqual([
      { rmmAgentId: "r-1", id: one, action: "updated" },
      { rmmAgentId: "r-2", id: two, action: "updated" },
    ]);
    const renamed = (await bulk("GET", `/devices/${one}`)).body.data;
    expect(renamed).toMatchObject({
      accountId: account2,
      hostname: "one-renamed",
      os: "Windows 10",
      deviceType: "LAPTOP",
      lastSeenAt: "2026-11-21T05:00:00.000Z",
    });
    expect(Date.parse(renamed.updatedAt)).toBeGreaterThan(Date.parse(renamed.createdAt));
    const unchanged = (await bulk("GET", `/devices/${two}`)).body.data;
    expect(unchanged.updatedAt).toBe(unchanged.createdAt);
    expect(await prisma().device.count({ where: { orgId: org.orgId } })).toBe(3);

    // null clears an optional field in bulk too.
    await bulk("POST", "/devices/bulk", {
      devices: [{ rmmAgentId: "r-1", accountId: account2, hostname: "one-renamed", os: null }],
    });
    expect((await bulk("GET", `/devices/${one}`)).body.data.os).toBeNull();
  });

  it("records device.created, device.updated only for changed devices, and the offline / end-of-life transitions", async () => {
    const org = await createTestOrg();
    const bulk = client(server.url, org.key);
    const account = (await bulk("POST", "/accounts", { name: "Evented" })).body.data.id;
    const seed = await bulk("POST", "/devices/bulk", {
      devices: [
        { rmmAgentId: "same", accountId: account, hostname: "same" },
        { rmmAgentId: "goes-offline", accountId: account, hostname: "off" },
        { rmmAgentId: "goes-eol", accountId: account, hostname: "eol" },
        { rmmAgentId: "born-offline", accountId: account, hostname: "born", isOnline: false, isEndOfLife: true },
        { rmmAgentId: "back-online", accountId: account, hostname: "back", isOnline: false },
      ],
    });
    const idOf = Object.fromEntries(
      seed.body.data.results.map((r: { rmmAgentId: string; id: string }) => [r.rmmAgentId, r.id]),
    );
    const created = await eventsOf(org.orgId);
    expect(created.map((e) => e.name)).toEqual(Array(5).fill("device.created"));
    for (const event of created) {
      expect(event.data).toEqual((await bulk("GET", `/devices/${(event.data as { id: string }).id}`)).body.data);
    }

    await bulk("POST", "/devices/bulk", {
      devices: [
        { rmmAgentId: "same", accountId: account, hostname: "same" },
        { rmmAgentId: "goes-offline", accountId: account, hostname: "off", isOnline: false },
        { rmmAgentId: "goes-eol", accountId: account, hostname: "eol", isEndOfLife: true, patchCompliant: false },
        { rmmAgentId: "born-offline", accountId: account, hostname: "born", isOnline: false, isEndOfLife: true },
        { rmmAgentId: "back-online", accountId: account, hostname: "back", isOnline: true },
      ],
    });
    expect(await eventNames(org.orgId, idOf.same)).toEqual(["device.created"]);
    expect(await eventNames(org.orgId, idOf["born-offline"])).toEqual(["device.created"]);
    expect(await eventNames(org.orgId, idOf["goes-offline"])).toEqual([
      "device.created",
      "device.offline",
      "device.updated",
    ]);
    expect(await eventNames(org.orgId, idOf["goes-eol"])).toEqual([
      "device.created",
      "device.end_of_life",
      "device.updated",
    ]);
    expect(await eventNames(org.orgId, idOf["back-online"])).toEqual(["device.created", "device.updated"]);
    const offline = (await bulk("GET", `/devices/${idOf["goes-offline"]}`)).body.data;
    for (const event of (await eventsOf(org.orgId, idOf["goes-offline"])).slice(1)) expect(event.data).toEqual(offline);
    for (const event of await eventsOf(org.orgId)) expect(event.isTest).toBe(false);
  });

  it("flags events caused by a test key with isTest", async () => {
    const org = await createTestOrg();
    const account = (await client(server.url, org.key)("POST", "/accounts", { name: "T" })).body.data.id;
    const testKey = client(server.url, await createKey(org.orgId, ["devices:write"], true));
    await testKey("POST", "/devices/bulk", { devices: [{ rmmAgentId: "t1", accountId: account, hostname: "t" }] });
    const single = await testKey("POST", "/devices", { rmmAgentId: "t2", accountId: account, hostname: "t2" });
    await testKey("PATCH", `/devices/${single.body.data.id}`, { isOnline: false });
    const events = await eventsOf(org.orgId);
    expect(events.map((event) => event.name).sort()).toEqual([
      "device.created",
      "device.created",
      "device.offline",
      "device.updated",
    ]);
    expect(events.every((event) => event.isTest)).toBe(true);
  });

  it("refuses repeated rmmAgentIds, unknown accounts, invalid items, empty and oversized requests, writing nothing", async () => {
    const org = await createTestOrg();
    const bulk = client(server.url, org.key);
    const account = (await bulk("POST", "/accounts", { name: "Strict" })).body.data.id;
    const foreign = await createTestOrg();
    const foreignAccount = (await client(server.url, foreign.key)("POST", "/accounts", { name: "F" })).body.data.id;

    const repeated = await bulk("POST", "/devices/bulk", {
      devices: [
        { rmmAgentId: "x", accountId: account, hostname: "a" },
        { rmmAgentId: "y", accountId: account, hostname: "b" },
        { rmmAgentId: "x", accountId: account, hostname: "c" },
      ],
    });
    expect(repeated.status).toBe(422);
    expect(repeated.body.error.details).toEqual([
      { path: ["devices", "2", "rmmAgentId"], message: "duplicates item 0" },
    ]);

    const unknown = await bulk("POST", "/devices/bulk", {
      devices: [
        { rmmAgentId: "x", accountId: account, hostname: "a" },
        { rmmAgentId: "y", accountId: foreignAccount, hostname: "b" },
        { rmmAgentId: "z", accountId: "nosuchaccount", hostname: "c" },
      ],
    });
    expect(unknown.status).toBe(422);
    expect(unknown.body.error.details).toEqual([
      { path: ["devices", "1", "accountId"], message: "no account with this id in the organisation" },
      { path: ["devices", "2", "accountId"], message: "no account with this id in the organisation" },
    ]);

    const invalid = await bulk("POST", "/devices/bulk", {
      devices: [
        { rmmAgentId: "x", accountId: account, hostname: "a" },
        { rmmAgentId: "y", accountId: account },
      ],
    });
    expect(invalid.status).toBe(422);
    expect(invalid.body.error.details[0].path).toEqual(["devices", "1", "hostname"]);
    expect((await bulk("POST", "/devices/bulk", { devices: [] })).status).toBe(422);
    expect((await bulk("POST", "/devices/bulk", { items: [] })).status).toBe(422);
    const tooMany = Array.from({ length: 501 }, (_, i) => ({
      rmmAgentId: `m-${i}`,
      accountId: account,
      hostname: "h",
    }));
    const big = await bulk("POST", "/devices/bulk", { devices: tooMany });
    expect(big.status).toBe(422);
    expect(big.body.error.details[0].path).toEqual(["devices"]);

    expect(await prisma().device.count({ where: { orgId: org.orgId } })).toBe(0);
    expect(await prisma().event.count({ where: { orgId: org.orgId, name: { startsWith: "device." } } })).toBe(0);
  });

  it("scales: 5,000 devices in 10 requests of 500, then 500 going offline in one request", async () => {
    const org = await createTestOrg();
    const bulk = client(server.url, org.key);
    const accounts: string[] = [];
    for (let i = 0; i < 5; i++) accounts.push((await bulk("POST", "/accounts", { name: `Fleet ${i}` })).body.data.id);
    const started = performance.now();
    for (let batch = 0; batch < 10; batch++) {
      const devices = Array.from({ length: 500 }, (_, i) => ({
        rmmAgentId: `fleet-${batch * 500 + i}`,
        accountId: accounts[i % 5],
        hostname: `host-${batch * 500 + i}`,
        os: "Windows 11",
      }));
      const res = await bulk("POST", "/devices/bulk", { devices });
      expect(res.status).toBe(200);
      expect(res.body.data).toMatchObject({ created: 500, updated: 0, total: 500 });
    }
    const offline = Array.from({ length: 500 }, (_, i) => ({
      rmmAgentId: `fleet-${i * 10}`,
      accountId: accounts[(i * 10) % 5],
      hostname: `host-${i * 10}`,
      isOnline: false,
    }));
    const res = await bulk("POST", "/devices/bulk", { devices: offline });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ created: 0, updated: 500, total: 500 });
    const elapsed = performance.now() - started;
    expect(elapsed).toBeLessThan(20_000);

    expect(await prisma().device.count({ where: { orgId: org.orgId } })).toBe(5000);
    expect(await prisma().device.count({ where: { orgId: org.orgId, isOnline: false } })).toBe(500);
    const counts = await prisma().event.groupBy({ by: ["name"], where: { orgId: org.orgId }, _count: true });
    const byName = Object.fromEntries(counts.map((c) => [c.name, c._count]));
    expect(byName).toMatchObject({ "device.created": 5000, "device.updated": 500, "device.offline": 500 });
    expect(byName["device.end_of_life"]).toBeUndefined();
    const page = await bulk("GET", "/devices?isOnline=false&limit=100");
    expect(page.body.data).toHaveLength(100);
    expect(page.body.hasMore).toBe(true);
  });
});

describe("organisation isolation (docs/api-contract.md §1)", () => {
  it("gives another organisation's key 404 on get, patch and delete, and never lists foreign devices", async () => {
    const a = await createTestOrg();
    const b = await createTestOrg();
    const apiA = client(server.url, a.key);
    const apiB = client(server.url, b.key);
    const accountA = (await apiA("POST", "/accounts", { name: "A" })).body.data.id;
    const accountB = (await apiB("POST", "/accounts", { name: "B" })).body.data.id;
    const device = (await apiA("POST", "/devices", { rmmAgentId: "shared", accountId: accountA, hostname: "secret" }))
      .body.data;

    for (const [method, path, body] of [
      ["GET", `/devices/${device.id}`, undefined],
      ["PATCH", `/devices/${device.id}`, { hostname: "hijacked" }],
      ["DELETE", `/devices/${device.id}`, undefined],
    ] as const) {
      const res = await apiB(method, path, body);
      expect(res.status).toBe(404);
      expect(res.body.error.code).toBe("not_found");
    }
    expect((await apiB("GET", "/devices")).body.data).toEqual([]);
    expect((await apiB("GET", `/devices?cursor=${device.id}`)).status).toBe(400);
    expect((await apiA("GET", `/devices/${device.id}`)).body.data).toEqual(device);

    // B cannot attach a device to A's account, singly or in bulk; nothing is created.
    const single = await apiB("POST", "/devices", { rmmAgentId: "b-1", accountId: accountA, hostname: "x" });
    expect(single.status).toBe(422);
    expect(single.body.error.details[0].path).toEqual(["accountId"]);
    const bulkForeign = await apiB("POST", "/devices/bulk", {
      devices: [{ rmmAgentId: "b-2", accountId: accountA, hostname: "x" }],
    });
    expect(bulkForeign.status).toBe(422);
    expect(await prisma().device.count({ where: { orgId: b.orgId } })).toBe(0);

    // The same rmmAgentId in another organisation is another device.
    const bulk = await apiB("POST", "/devices/bulk", {
      devices: [{ rmmAgentId: "shared", accountId: accountB, hostname: "b's own" }],
    });
    expect(bulk.body.data).toMatchObject({ created: 1, updated: 0 });
    expect(bulk.body.data.results[0].id).not.toBe(device.id);
    expect((await apiA("GET", `/devices/${device.id}`)).body.data.hostname).toBe("secret");
    expect(await eventNames(a.orgId, device.id)).toEqual(["device.created"]);
  });
});
