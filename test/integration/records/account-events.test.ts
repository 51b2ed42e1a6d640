// The transactional outbox for accounts (docs/api-contract.md §3, §6.1, docs/architecture.md,
// "Webhooks and the outbox"): each change records its event with the resource exactly as GET returns it; nothing is
// recorded when nothing changed.
import { afterAll, beforeAll, expect, it } from "vitest";
import { prisma } from "../../../server/db/transaction";
import { client, createKey, createTestOrg, startApi, type TestServer } from "../../helpers/api";

let server: TestServer;
beforeAll(async () => {
  server = await startApi();
});
afterAll(() => server.close());

async function eventsOf(orgId: string) {
  return prisma().event.findMany({ where: { orgId }, orderBy: [{ createdAt: "asc" }, { id: "asc" }] });
}

it("records account.created, account.updated and account.deleted with the GET representation", async () => {
  const org = await createTestOrg();
  const api = client(server.url, org.key);
  const created = (await api("POST", "/accounts", { name: "Evented" })).body.data;
  await api("PATCH", `/accounts/${created.id}`, { industry: "Legal" });
  await api("PATCH", `/accounts/${created.id}`, { industry: "Legal" });
  const churned = (await api("DELETE", `/accounts/${created.id}`)).body.data;
  await api("DELETE", `/accounts/${created.id}`);
  const gone = (await api("GET", `/accounts/${created.id}`)).body.data;
  await api("DELETE", `/accounts/${created.id}?force=true`);

  const events = await eventsOf(org.orgId);
  expect(events.map((event) => event.name)).toEqual([
    "account.created",
    "account.updated",
    "account.deleted",
    "account.deleted",
  ]);
  expect(events[0]?.data).toEqual(created);
  expect(events[1]?.data).toMatchObject({ id: created.id, industry: "Legal" });
  expect(events[2]?.data).toEqual(churned);
  expect(gone.id).toBe(created.id);
  // A hard deletion carries the account's tombstone.
  expect(events[3]?.data).toEqual({ id: created.id, resource: "account", deleted: true, externalId: null });
  for (const event of events) {
    expect(event.id).toMatch(/^evt_\d{10}_[A-Za-z0-9_-]+$/);
    // The id's seconds and the payload's timestamp come from one clock.
    expect(Number(event.id.split("_")[1])).toBe(Math.floor(event.createdAt.getTime() / 1000));
    expect(event.isTest).toBe(false);
  }
});

it("records one event per created or changed account in a bulk upsert, flagged when a test key caused it", async () => {
  const org = await createTestOrg();
  const api = client(server.url, await createKey(org.orgId, ["accounts:write"], true));
  await api("POST", "/accounts/bulk", {
    accounts: [
      { name: "A", externalId: "a" },
      { name: "B", externalId: "b" },
    ],
  });
  await api("POST", "/accounts/bulk", {
    accounts: [
      { name: "A", externalId: "a" },
      { name: "B2", externalId: "b" },
      { name: "C", externalId: "c" },
    ],
  });
  const events = await eventsOf(org.orgId);
  const summary = events.map((event) => `${event.name}:${(event.data as { externalId: string }).externalId}`).sort();
  expect(summary).toEqual(["account.created:a", "account.created:b", "account.created:c", "account.updated:b"]);
  expect(events.every((event) => event.isTest)).toBe(true);
  const b = (await api("GET", `/accounts?limit=10`)).body.data.find(
    (account: { externalId: string }) => account.externalId === "b",
  );
  expect(events.find((event) => event.name === "account.updated")?.data).toEqual(b);
});

it("records nothing when the change fails", async () => {
  const org = await createTestOrg();
  const api = client(server.url, org.key);
  await api("POST", "/accounts", { name: "One", externalId: "same" });
  expect((await api("POST", "/accounts", { name: "Two", externalId: "same" })).status).toBe(422);
  expect((await eventsOf(org.orgId)).map((event) => event.name)).toEqual(["account.created"]);
});
