// Real input: a PSA sync over HTTP — 5,000 accounts in 10 bulk requests, re-sent, paged, then an incremental
// fetch of exactly the 3 that changed.
import { afterAll, beforeAll, expect, it } from "vitest";
import { client, createTestOrg, startApi, type TestServer } from "../../helpers/api";

let server: TestServer;
let api: ReturnType<typeof client>;

beforeAll(async () => {
  server = await startApi();
  api = client(server.url, (await createTestOrg()).key);
});
afterAll(() => server.close());

const batches = Array.from({ length: 10 }, (_, batch) =>
  Array.from({ length: 500 }, (_, i) => {
    const n = batch * 500 + i;
    return {
      name: `Customer ${n}`,
      externalId: `psa-${n}`,
      industry: ["Legal", "Healthcare", "Retail"][n % 3],
      employeeCount: n % 400,
    };
  }),
);

it("bulk-upserts 5,000, re-sends them, pages all of them and fetches only the 3 changed", {
  timeout: 120_000,
}, async () => {
  let created = 0;
  for (const accounts of batches) {
    const res = await api("POST", "/accounts/bulk", { accounts });
    expect(res.status).toBe(200);
    created += res.body.data.created;
  }
  expect(created).toBe(5_000);

  const resend = { created: 0, updated: 0 };
  for (const accounts of batches) {
    const res = await api("POST", "/accounts/bulk", { accounts });
    resend.created += res.body.data.created;
    resend.updated += res.body.data.updated;
  }
  expect(resend).toEqual({ created: 0, updated: 5_000 });

  const ids = new Set<string>();
  let cursor: string | null = null;
  let pages = 0;
  for (;;) {
    const res = await api("GET", `/accounts?limit=100${cursor ? `&cursor=${cursor}` : ""}`);
    expect(res.status).toBe(200);
    for (const account of res.body.data) ids.add(account.id);
    pages++;
    if (!res.body.hasMore) break;
    cursor = res.body.nextCursor;
  }
  expect(ids.size).toBe(5_000);
  expect(pages).toBe(50);

  const mark = new Date().toISOString();
  await new Promise((resolve) => setTimeout(resolve, 5));
  const changed = [...ids].slice(1000, 1003);
  for (const id of changed)
    expect((await api("PATCH", `/accounts/${id}`, { lifecycleStatus: "AT_RISK" })).status).toBe(200);
  const delta = await api("GET", `/accounts?updatedAfter=${encodeURIComponent(mark)}&limit=100`);
  expect(delta.body.data.map((a: { id: string }) => a.id).sort()).toEqual([...changed].sort());
  expect(delta.body.hasMore).toBe(false);
});
