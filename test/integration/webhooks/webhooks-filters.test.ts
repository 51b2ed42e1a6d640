// What an endpoint receives (docs/api-contract.md §6.9): wildcards by resource beside names and `*`, and the
// `changedFields` filter of `*.updated` events, checked against the resources' fields (custom fields by their
// syntax), with the events it drops counted as filtered out and never made into deliveries.
process.env.WEBHOOKS_ALLOW_LOOPBACK = "true";

import { afterAll, beforeAll, expect, it } from "vitest";
import { prisma } from "../../../server/db/transaction";
import { resourceFields } from "../../../server/webhooks/schema";
import { endpointStats, statsWindow } from "../../../server/webhooks/stats";
import { client, createTestOrg, startApi, type TestServer } from "../../helpers/api";
import { type Receiver, startReceiver } from "../../helpers/receiver";
import { fanOutPending } from "../../helpers/webhook-ops";

let server: TestServer;
let receiver: Receiver;
beforeAll(async () => {
  server = await startApi();
  receiver = await startReceiver();
});
afterAll(async () => {
  await Promise.all([server.close(), receiver.close()]);
});

it("accepts <resource>.* and checks changedFields against the subscribed resources' fields, custom fields by syntax", async () => {
  const api = client(server.url, (await createTestOrg()).key);
  const create = (body: Record<string, unknown>) => api("POST", "/webhook-endpoints", { url: receiver.url, ...body });

  const wild = await create({
    events: ["deal.*", "account.created"],
    changedFields: ["stage", "customFields.contract_tier"],
  });
  expect(wild.status).toBe(201);
  expect(wild.body.data).toMatchObject({
    events: ["deal.*", "account.created"],
    changedFields: ["stage", "customFields.contract_tier"],
  });
  expect((await create({ events: ["deals.*"] })).body.error.details).toEqual([
    { path: ["events", "0"], message: expect.stringMatching(/^unknown event; expected one of account\.created/) },
  ]);
  expect((await create({ events: ["*", "deal.*"] })).body.error.details).toEqual([
    { path: ["events"], message: '"*" cannot be combined with event names' },
  ]);
  // A field of a resource the endpoint does not subscribe to, one that never changes, and a malformed custom field.
  const refused = await create({ events: ["deal.*"], changedFields: ["hostname", "updatedAt"] });
  expect(refused.status).toBe(422);
  expect(refused.body.error.details).toEqual([
    { path: ["changedFields", "0"], message: "is not a field of deal that an update can change" },
    { path: ["changedFields", "1"], message: "is not a field of deal that an update can change" },
  ]);
  const badKey = await create({ events: ["*"], changedFields: ["customFields.Tier"] });
  expect(badKey.status).toBe(422);
  expect(badKey.body.error.details[0].path).toEqual(["changedFields", "0"]);
  const tooMany = await create({ events: ["*"], changedFields: Array.from({ length: 21 }, (_, i) => `f${i}`) });
  expect(tooMany.status).toBe(422);

  // The fields come from the resource schemas: every field of the account a GET answers, less id, the timestamps and
  // customFields, whose values are named one by one.
  const account = (await api("POST", "/accounts", { name: "Fields" })).body.data;
  expect(resourceFields("account").sort()).toEqual(
    Object.keys(account)
      .filter((field) => !["id", "createdAt", "updatedAt", "customFields"].includes(field))
      .sort(),
  );
  // With "*" every resource's fields count.
  expect((await create({ events: ["*"], changedFields: ["hostname", "stage", "name"] })).status).toBe(201);

  // Changing the subscription re-checks the filter it keeps; null removes the filter.
  const id = wild.body.data.id;
  const narrowed = await api("PATCH", `/webhook-endpoints/${id}`, { events: ["account.*"] });
  expect(narrowed.status).toBe(422);
  expect(narrowed.body.error.details[0]).toEqual({
    path: ["changedFields", "0"],
    message: "is not a field of account that an update can change",
  });
  const cleared = await api("PATCH", `/webhook-endpoints/${id}`, { events: ["account.*"], changedFields: null });
  expect(cleared.status).toBe(200);
  expect(cleared.body.data).toMatchObject({ events: ["account.*"], changedFields: null });
});

it("delivers *.updated only when a filtered field changed, creations and deletions always; dropped events make no delivery and are counted", async () => {
  const org = await createTestOrg();
  const api = client(server.url, org.key);
  const filtered = (
    await api("POST", "/webhook-endpoints", {
      url: `${receiver.url}?filtered`,
      events: ["account.*"],
      changedFields: ["industry", "lifecycleStatus"],
    })
  ).body.data;
  const everything = (await api("POST", "/webhook-endpoints", { url: `${receiver.url}?all`, events: ["*"] })).body.data;
  const deals = (await api("POST", "/webhook-endpoints", { url: `${receiver.url}?deals`, events: ["deal.*"] })).body
    .data;

  const account = (await api("POST", "/accounts", { name: "Northwind" })).body.data;
  await api("PATCH", `/accounts/${account.id}`, { name: "Northwind Dental" });
  await api("PATCH", `/accounts/${account.id}`, { domain: "northwind.example" });
  await api("PATCH", `/accounts/${account.id}`, { industry: "Healthcare", domain: "northwind.test" });
  const deal = (await api("POST", "/deals", { name: "Backup", accountId: account.id })).body.data;
  await api("PATCH", `/deals/${deal.id}`, { stage: "PROPOSAL" });
  await api("DELETE", `/accounts/${account.id}`);
  await fanOutPending(org.orgId);

  const delivered = async (endpointId: string) =>
    (
      await prisma().webhookDelivery.findMany({
        where: { endpointId },
        select: { event: { select: { name: true, changedFields: true, sequence: true } } },
      })
    )
      .sort((a, b) => Number(a.event.sequence - b.event.sequence))
      .map((row) => row.event.name);
  expect(await delivered(filtered.id)).toEqual(["account.created", "account.updated", "account.deleted"]);
  const changed = await prisma().webhookDelivery.findFirstOrThrow({
    where: { endpointId: filtered.id, event: { name: "account.updated" } },
    select: { event: { select: { changedFields: true } } },
  });
  expect(changed.event.changedFields).toEqual(["industry", "domain"]);
  expect(await delivered(everything.id)).toEqual([
    "account.created",
    "account.updated",
    "account.updated",
    "account.updated",
    "deal.created",
    "deal.stage_changed",
    "account.deleted",
  ]);
  expect(await delivered(deals.id)).toEqual(["deal.created", "deal.stage_changed"]);

  // The two name and domain updates were dropped: no delivery, two counted as filtered out, none for the others.
  const counts = await prisma().webhookFilteredCount.findMany({
    where: { endpointId: { in: [filtered.id, everything.id, deals.id] } },
  });
  expect(counts.map((row) => [row.endpointId, row.count])).toEqual([[filtered.id, 2]]);
  // Counted in the half hour of the fan-out, aligned to UTC.
  expect((counts[0]?.bucket.getTime() ?? 1) % 1_800_000).toBe(0);
  const stats = await endpointStats(org.orgId, filtered.id, statsWindow("24h"));
  expect(stats.totals).toMatchObject({ filtered: 2, pending: 3, succeeded: 0, failed: 0 });
  expect(stats.buckets.find((bucket) => bucket.start.getTime() === counts[0]?.bucket.getTime())?.filtered).toBe(2);
});

it("filters on a custom field by customFields.<key>, named before the field exists", async () => {
  const org = await createTestOrg();
  const api = client(server.url, org.key);
  const endpoint = (
    await api("POST", "/webhook-endpoints", {
      url: `${receiver.url}?custom`,
      events: ["account.updated"],
      changedFields: ["customFields.contract_tier"],
    })
  ).body.data;
  expect(endpoint.changedFields).toEqual(["customFields.contract_tier"]);
  const field = await api("POST", "/custom-fields", {
    resource: "account",
    key: "contract_tier",
    label: "Tier",
    type: "text",
  });
  expect(field.status).toBe(201);
  const account = (await api("POST", "/accounts", { name: "Tiered" })).body.data;
  await api("PATCH", `/accounts/${account.id}`, { name: "Tiered Ltd" });
  const tiered = await api("PATCH", `/accounts/${account.id}`, { customFields: { contract_tier: "gold" } });
  expect(tiered.status).toBe(200);
  await fanOutPending(org.orgId);
  const delivered = await prisma().webhookDelivery.findMany({
    where: { endpointId: endpoint.id },
    select: { event: { select: { name: true, changedFields: true } } },
  });
  expect(delivered.map((row) => row.event)).toEqual([
    { name: "account.updated", changedFields: ["customFields.contract_tier"] },
  ]);
  const counted = await prisma().webhookFilteredCount.aggregate({
    where: { endpointId: endpoint.id },
    _sum: { count: true },
  });
  expect(counted._sum.count).toBe(1);
});
