// Real input: an RMM sync over HTTP — 5,000 devices in 10 bulk requests, then 500 of them going offline —
// checked through device counts, device.offline events and the affected accounts' health scores.
import { afterAll, beforeAll, expect, it } from "vitest";
import { prisma } from "../../../server/db/transaction";
import { client, createTestOrg, startApi, type TestServer } from "../../helpers/api";

let server: TestServer;
beforeAll(async () => {
  server = await startApi();
});
afterAll(() => server.close());

async function countPages(api: ReturnType<typeof client>, path: string): Promise<number> {
  let total = 0;
  let cursor = "";
  for (;;) {
    const res = await api("GET", `${path}&limit=100${cursor ? `&cursor=${cursor}` : ""}`);
    expect(res.status).toBe(200);
    total += res.body.data.length;
    if (!res.body.hasMore) return total;
    cursor = res.body.nextCursor;
  }
}

it("syncs 5,000 devices, takes 500 offline, and moves exactly the affected accounts' health scores", {
  timeout: 180_000,
}, async () => {
  const org = await createTestOrg();
  const api = client(server.url, org.key);
  const accounts = (
    await api("POST", "/accounts/bulk", {
      accounts: Array.from({ length: 50 }, (_, i) => ({ name: `RMM client ${i}`, externalId: `rmm-${i}` })),
    })
  ).body.data.results.map((r: { id: string }) => r.id);
  const devices = Array.from({ length: 5_000 }, (_, i) => ({
    rmmAgentId: `agent-${i}`,
    accountId: accounts[i % 50],
    hostname: `host-${i}`,
    deviceType: "Workstation",
    os: "Windows 11 Pro",
  }));

  const timings: number[] = [];
  for (let batch = 0; batch < 10; batch++) {
    const started = performance.now();
    const res = await api("POST", "/devices/bulk", { devices: devices.slice(batch * 500, batch * 500 + 500) });
    timings.push(performance.now() - started);
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ created: 500, updated: 0, total: 500 });
  }
  console.log(
    `bulk 5,000 devices: ${timings.reduce((a, b) => a + b, 0).toFixed(0)} ms in 10 requests (max ${Math.max(...timings).toFixed(0)} ms)`,
  );

  const before = new Map<string, number>();
  for (const id of accounts.slice(0, 12)) before.set(id, (await api("GET", `/health-scores/${id}`)).body.data.score);

  // Device i belongs to account i % 50: the first half of accounts 0–9's devices, 50 on each of 10 accounts.
  const offline = devices.filter((_, i) => i % 50 < 10 && i < 2_500).map((device) => ({ ...device, isOnline: false }));
  expect(offline).toHaveLength(500);
  const started = performance.now();
  const res = await api("POST", "/devices/bulk", { devices: offline });
  console.log(`bulk 500 devices going offline: ${(performance.now() - started).toFixed(0)} ms`);
  expect(res.body.data).toMatchObject({ created: 0, updated: 500, total: 500 });

  expect(await countPages(api, "/devices?isOnline=false")).toBe(500);
  expect(await countPages(api, "/devices?isOnline=true")).toBe(4_500);
  expect(await prisma().device.count({ where: { orgId: org.orgId } })).toBe(5_000);
  expect(await prisma().event.count({ where: { orgId: org.orgId, name: "device.offline" } })).toBe(500);
  expect(await prisma().event.count({ where: { orgId: org.orgId, name: "device.created" } })).toBe(5_000);

  for (const [index, id] of accounts.slice(0, 12).entries()) {
    const after = (await api("GET", `/health-scores/${id}`)).body.data;
    const devicesSignal = after.signals.find((signal: { key: string }) => signal.key === "devices");
    if (index < 10) {
      expect(after.score).toBeGreaterThan(before.get(id) as number);
      expect(devicesSignal.value).toBeGreaterThan(0);
    } else {
      expect(after.score).toBe(before.get(id));
      expect(devicesSignal.value).toBe(0);
    }
  }
});
