// MRR summary (docs/api-contract.md §2.10, §4.7): figures of a fixed set of deals against values computed by hand,
// isolation, scope.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { DealStage } from "../../../server/db/generated/client";
import { prisma } from "../../../server/db/transaction";
import { client, createKey, createTestOrg, startApi, type TestServer } from "../../helpers/api";

let server: TestServer;
beforeAll(async () => {
  server = await startApi();
});
afterAll(() => server.close());

type Lifecycle = "PROSPECT" | "ACTIVE" | "AT_RISK" | "CHURNED";

async function seed(
  orgId: string,
  accounts: Record<string, Lifecycle>,
  deals: [account: string, category: string | null, stage: DealStage, mrr: string, probability?: number][],
) {
  const ids: Record<string, string> = {};
  for (const [name, lifecycleStatus] of Object.entries(accounts)) {
    ids[name] = (await prisma().account.create({ data: { orgId, name, lifecycleStatus } })).id;
  }
  await prisma().deal.createMany({
    data: deals.map(([account, serviceCategory, stage, estimatedMrr, probability = 50], i) => ({
      orgId,
      accountId: ids[account] as string,
      name: `Deal ${i}`,
      serviceCategory,
      stage,
      estimatedMrr,
      probability,
    })),
  });
  return ids;
}

const ZERO = {
  mrr: 0,
  accounts: 0,
  deals: 0,
  weightedPipeline: 0,
  pipelineMrr: 0,
  openDeals: 0,
  churnedMrr: 0,
  churnedAccounts: 0,
  churnedDeals: 0,
};

describe("GET /mrr", () => {
  it("lists the 500 categories with the most mrr when there are more; totals still cover every deal", async () => {
    const org = await createTestOrg();
    const deals: [string, string, DealStage, string][] = Array.from({ length: 501 }, (_, i) => [
      "Acme",
      `Line ${String(i).padStart(3, "0")}`,
      "CLOSED_WON",
      String(1000 - i),
    ]);
    await seed(org.orgId, { Acme: "ACTIVE" }, deals);
    const res = await client(server.url, org.key)("GET", "/mrr");
    expect(res.status).toBe(200);
    expect(res.body.data.categories).toHaveLength(500);
    expect(res.body.data.categories[0]).toMatchObject({ serviceCategory: "Line 000", mrr: 1000 });
    expect(res.body.data.categories[499]).toMatchObject({ serviceCategory: "Line 499", mrr: 501 });
    expect(res.body.data.totals).toMatchObject({ deals: 501, mrr: ((1000 + 500) * 501) / 2 });
  });

  let api: ReturnType<typeof client>;
  let orgId: string;

  beforeAll(async () => {
    const org = await createTestOrg(["mrr:read"]);
    orgId = org.orgId;
    api = client(server.url, org.key);
    await seed(orgId, { a1: "ACTIVE", a2: "AT_RISK", a3: "CHURNED", a4: "PROSPECT" }, [
      ["a1", "Managed Services", "CLOSED_WON", "1000.50"],
      ["a1", "Managed Services", "CLOSED_WON", "499.25"],
      ["a2", "Managed Services", "CLOSED_WON", "300.00"],
      ["a2", "Security", "CLOSED_WON", "250.10"],
      ["a1", null, "CLOSED_WON", "100.00"],
      ["a2", "  ", "CLOSED_WON", "50.00"],
      ["a3", "Managed Services", "CLOSED_WON", "700.00"],
      ["a3", "Security", "CLOSED_WON", "80.00"],
      ["a4", "Security", "PROPOSAL", "1000.00", 30],
      ["a1", "Managed Services", "NEGOTIATION", "333.33", 33],
      ["a3", "Backup", "QUALIFICATION", "200.00", 10],
      ["a1", "Managed Services", "CLOSED_LOST", "5000.00", 90],
      ["a4", "Backup", "CLOSED_LOST", "900.00", 90],
      ["a4", "Lost only", "CLOSED_LOST", "900.00", 90],
    ]);
  });

  it("sums won, open and churned deals per category as computed by hand", async () => {
    const res = await api("GET", "/mrr");
    expect(res.status).toBe(200);
    expect(res.body.success).toBe(true);
    const data = res.body.data;
    expect(Math.abs(Date.parse(data.computedAt) - Date.now())).toBeLessThan(60_000);
    expect(data.categories).toEqual([
      {
        serviceCategory: "Managed Services",
        // 1000.50 + 499.25 + 300 (a3 is churned)
        mrr: 1799.75,
        accounts: 2,
        deals: 3,
        // 333.33 × 33 / 100 = 109.9989
        weightedPipeline: 110,
        pipelineMrr: 333.33,
        openDeals: 1,
        churnedMrr: 700,
        churnedAccounts: 1,
        churnedDeals: 1,
      },
      {
        serviceCategory: "Security",
        mrr: 250.1,
        accounts: 1,
        deals: 1,
        weightedPipeline: 300,
        pipelineMrr: 1000,
        openDeals: 1,
        churnedMrr: 80,
        churnedAccounts: 1,
        churnedDeals: 1,
      },
      {
        // null and blank categories
        serviceCategory: "Uncategorised",
        mrr: 150,
        accounts: 2,
        deals: 2,
        weightedPipeline: 0,
        pipelineMrr: 0,
        openDeals: 0,
        churnedMrr: 0,
        churnedAccounts: 0,
        churnedDeals: 0,
      },
      {
        // An open deal on a churned account is pipeline; the lost one counts nowhere.
        serviceCategory: "Backup",
        mrr: 0,
        accounts: 0,
        deals: 0,
        weightedPipeline: 20,
        pipelineMrr: 200,
        openDeals: 1,
        churnedMrr: 0,
        churnedAccounts: 0,
        churnedDeals: 0,
      },
    ]);
    expect(data.totals).toEqual({
      mrr: 2199.85,
      // a1 and a2: distinct across categories
      accounts: 2,
      deals: 6,
      // 109.9989 + 300 + 20 = 429.9989
      weightedPipeline: 430,
      pipelineMrr: 1533.33,
      openDeals: 3,
      churnedMrr: 780,
      churnedAccounts: 1,
      churnedDeals: 2,
    });
  });

  it("keeps cents exact and rounds the weighted pipeline once", async () => {
    const org = await createTestOrg(["mrr:read"]);
    await seed(org.orgId, { a: "ACTIVE" }, [
      ["a", "X", "CLOSED_WON", "0.10"],
      ["a", "X", "CLOSED_WON", "0.20"],
      ["a", "X", "DISCOVERY", "10.01", 50],
      ["a", "Y", "DISCOVERY", "10.01", 50],
    ]);
    const data = (await client(server.url, org.key)("GET", "/mrr")).body.data;
    // 0.1 + 0.2 is 0.3 exactly (numeric sums); 10.01 × 0.5 = 5.005 → 5.01 per category, 10.01 in total.
    expect(
      data.categories.map((c: { serviceCategory: string; mrr: number; weightedPipeline: number }) => [
        c.serviceCategory,
        c.mrr,
        c.weightedPipeline,
      ]),
    ).toEqual([
      ["X", 0.3, 5.01],
      ["Y", 0, 5.01],
    ]);
    expect(data.totals).toMatchObject({ mrr: 0.3, weightedPipeline: 10.01, pipelineMrr: 20.02 });
  });

  it("never counts another organisation's deals", async () => {
    const other = await createTestOrg(["mrr:read"]);
    await seed(other.orgId, { big: "ACTIVE" }, [["big", "Managed Services", "CLOSED_WON", "99999.99"]]);
    expect((await api("GET", "/mrr")).body.data.totals.mrr).toBe(2199.85);
    const own = (await client(server.url, other.key)("GET", "/mrr")).body.data;
    expect(own.totals).toEqual({ ...ZERO, mrr: 99999.99, accounts: 1, deals: 1 });
    expect(own.categories).toEqual([
      { serviceCategory: "Managed Services", ...ZERO, mrr: 99999.99, accounts: 1, deals: 1 },
    ]);
  });

  it("answers zeros and no categories for an organisation without deals", async () => {
    const empty = await createTestOrg(["mrr:read"]);
    const res = await client(server.url, empty.key)("GET", "/mrr");
    expect(res.status).toBe(200);
    expect(res.body.data.totals).toEqual(ZERO);
    expect(res.body.data.categories).toEqual([]);
  });

  it("needs mrr:read (admin:read reads), refuses unknown parameters", async () => {
    const noScope = await createKey(orgId, ["deals:read"]);
    const refused = await client(server.url, noScope)("GET", "/mrr");
    expect(refused.status).toBe(403);
    expect(refused.body.error.code).toBe("insufficient_scope");
    expect((await client(server.url)("GET", "/mrr")).status).toBe(401);
    const admin = await createKey(orgId, ["admin:read"]);
    expect((await client(server.url, admin)("GET", "/mrr")).body.data.totals.mrr).toBe(2199.85);
    const unknown = await api("GET", "/mrr?currency=EUR");
    expect(unknown.status).toBe(422);
    expect(unknown.body.error.details[0].path).toEqual(["currency"]);
    expect((await api("POST", "/mrr", {})).status).toBe(405);
  });
});
