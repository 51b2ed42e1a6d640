// A GET of one record reads its row with one SQL statement (docs/architecture.md, "Memory and speed"), while lists
// and writes read theirs in other statements: for every resource, with every field set and with the optional ones
// null, GET /{resource}/{id} answers exactly the record its list and its write returned (dates in UTC with
// milliseconds, date-only fields as dates, money as a number with its cents, enums as names).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { client, createTestOrg, startApi, type TestServer } from "../../helpers/api";

let server: TestServer;
let api: ReturnType<typeof client>;
let accountId: string;
let dealId: string;

beforeAll(async () => {
  server = await startApi();
  api = client(server.url, (await createTestOrg()).key);
  accountId = (
    await api("POST", "/accounts", {
      name: "Full Account",
      lifecycleStatus: "AT_RISK",
      industry: "Legal",
      employeeCount: 57,
      domain: "full-account.example",
      externalId: "psa-4711",
    })
  ).body.data.id;
  dealId = (
    await api("POST", "/deals", {
      name: "Full deal",
      accountId,
      estimatedMrr: 1234.56,
      serviceCategory: "Managed Services",
      ownerId: "user-7",
      expectedCloseDate: "2026-12-31",
    })
  ).body.data.id;
});
afterAll(() => server.close());

type Body = Record<string, unknown> & { id: string };

/** Creates a record, then returns what its POST, its GET and its list answered. */
async function readThreeWays(path: string, body: Record<string, unknown>, listQuery = "") {
  const created = await api("POST", path, body);
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  const record = created.body.data as Body;
  const single = await api("GET", `${path}/${record.id}`);
  expect(single.status).toBe(200);
  const list = await api("GET", `${path}?limit=100${listQuery}`);
  expect(list.status).toBe(200);
  return {
    record,
    single: single.body.data as Body,
    listed: (list.body.data as Body[]).find((r) => r.id === record.id),
  };
}

const cases: Array<[string, Record<string, unknown>, Record<string, unknown>]> = [
  [
    "/accounts",
    {
      name: "Every field",
      lifecycleStatus: "ACTIVE",
      industry: "Healthcare",
      employeeCount: 12,
      domain: "every-field.example",
      externalId: "ext-1",
    },
    { name: "Nulls" },
  ],
  [
    "/deals",
    {
      name: "Every field",
      accountId: "@account",
      estimatedMrr: 0.3,
      serviceCategory: "Backup",
      ownerId: "user-1",
      expectedCloseDate: "2027-02-28",
    },
    { name: "Nulls", accountId: "@account" },
  ],
  [
    "/devices",
    {
      rmmAgentId: "agent-every-field",
      accountId: "@account",
      hostname: "srv-01",
      deviceType: "SERVER",
      os: "Windows Server 2022",
      isOnline: false,
      isEndOfLife: true,
      patchCompliant: false,
      lastSeenAt: "2026-11-20T12:30:00.5+02:00",
    },
    { rmmAgentId: "agent-nulls", accountId: "@account", hostname: "ws-01" },
  ],
  [
    "/tasks",
    {
      title: "Every field",
      description: "All set",
      status: "IN_PROGRESS",
      priority: "URGENT",
      dueAt: "2026-12-01T09:30:00+02:00",
      assigneeId: "user-9",
      accountId: "@account",
      dealId: "@deal",
    },
    { title: "Nulls" },
  ],
  [
    "/notes",
    { objectType: "Deal", objectId: "@deal", body: "Every field" },
    { objectType: "Account", objectId: "@account", body: "x" },
  ],
  [
    "/touchpoints",
    {
      accountId: "@account",
      type: "MEETING",
      direction: "INBOUND",
      subject: "Every field",
      notes: "Notes",
      occurredAt: "2026-11-02T08:00:00.250Z",
    },
    { accountId: "@account", type: "EMAIL", direction: "OUTBOUND" },
  ],
];

/** Replaces the "@account" and "@deal" placeholders with the ids made in beforeAll. */
function withIds(body: Record<string, unknown>): Record<string, unknown> {
  const ids: Record<string, string> = { "@account": accountId, "@deal": dealId };
  return Object.fromEntries(Object.entries(body).map(([key, value]) => [key, ids[value as string] ?? value]));
}

describe("GET /{resource}/{id} answers what the list and the write answered", () => {
  for (const [path, full, sparse] of cases) {
    it(`${path}: every field set, and optional fields null`, async () => {
      for (const body of [full, sparse]) {
        const { record, single, listed } = await readThreeWays(path, withIds(body));
        expect(single).toEqual(record);
        expect(listed).toEqual(single);
      }
    });
  }

  it("money keeps its cents and a date-only field stays a date", async () => {
    const res = await api("GET", `/deals/${dealId}`);
    expect(res.body.data).toMatchObject({ estimatedMrr: 1234.56, expectedCloseDate: "2026-12-31", closedAt: null });
  });

  it("another organisation's record is 404, and so is an unknown id", async () => {
    const other = client(server.url, (await createTestOrg()).key);
    for (const path of ["/accounts", "/deals", "/devices", "/tasks", "/notes", "/touchpoints"]) {
      const list = await api("GET", `${path}?limit=1`);
      const id = (list.body.data as Body[])[0]?.id as string;
      expect((await other("GET", `${path}/${id}`)).status).toBe(404);
      expect((await api("GET", `${path}/cmissing00000000000000000000`)).status).toBe(404);
    }
  });
});
