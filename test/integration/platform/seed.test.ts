// `npm run admin -- seed-demo --org <slug>` fills an organisation with the demo MSP book (set-based, one transaction)
// and records each record's event as the API would, carrying the record as its GET returns it.
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, expect, it } from "vitest";
import { prisma } from "../../../server/db/transaction";
import { bringDemoBookToToday, shiftOrganisationTimes } from "../../../server/demo/today";
import { FULL_ACCESS_SCOPES } from "../../../server/platform/api-keys/scopes";
import { admin } from "../../helpers/admin";
import { client, createKey, startApi, type TestServer } from "../../helpers/api";

let server: TestServer;
beforeAll(async () => {
  server = await startApi();
});
afterAll(() => server.close());

it("seeds a realistic book once, visible through the API", { timeout: 180_000 }, async () => {
  const slug = `seed-${randomBytes(4).toString("hex")}`;
  const seed = () => admin("seed-demo", "--org", slug, "--json");
  const result = JSON.parse((await seed()).stdout);
  expect(result).toMatchObject({ accounts: 200, contacts: 1_000, deals: 400, devices: 5_000, touchpoints: 900 });
  const orgId = result.orgId as string;

  const counts = {
    accounts: await prisma().account.count({ where: { orgId } }),
    contacts: await prisma().contact.count({ where: { orgId } }),
    deals: await prisma().deal.count({ where: { orgId } }),
    devices: await prisma().device.count({ where: { orgId } }),
    contracts: await prisma().contract.count({ where: { orgId } }),
    leads: await prisma().lead.count({ where: { orgId } }),
  };
  expect(counts.accounts).toBeGreaterThanOrEqual(200);
  expect(counts.contacts).toBeGreaterThanOrEqual(1_000);
  expect(counts.deals).toBeGreaterThanOrEqual(400);
  expect(counts.devices).toBeGreaterThanOrEqual(5_000);
  expect(counts.contracts).toBeGreaterThan(0);
  expect(counts.leads).toBeGreaterThan(0);
  const stages = await prisma().deal.groupBy({ by: ["stage"], where: { orgId }, _count: true });
  expect(stages.length).toBe(6);
  const oldest = await prisma().touchpoint.findFirst({ where: { orgId }, orderBy: { occurredAt: "asc" } });
  expect(Date.now() - (oldest?.occurredAt.getTime() ?? Date.now())).toBeGreaterThan(60 * 86_400_000);
  expect(await prisma().healthSignal.count({ where: { orgId } })).toBeGreaterThan(0);
  // Recorded for the record, never for delivery: nothing of the seed waits for a webhook worker.
  const byName = await prisma().event.groupBy({ by: ["name"], where: { orgId }, _count: true });
  expect(Object.fromEntries(byName.map((group) => [group.name, group._count]))).toEqual({
    "account.created": 200,
    "contact.created": 1_000,
    "deal.created": 400,
    "device.created": 5_000,
    "task.created": 300,
    "note.created": 200,
    "touchpoint.created": 900,
  });
  expect(await prisma().event.count({ where: { orgId, fannedOutAt: null } })).toBe(0);
  expect(await prisma().healthScore.count({ where: { orgId } })).toBe(200);

  const api = client(server.url, await createKey(orgId, FULL_ACCESS_SCOPES));
  // Each event carries its record exactly as the record's GET returns it.
  for (const resource of ["accounts", "contacts", "deals", "devices", "tasks", "notes", "touchpoints"]) {
    const event = await prisma().event.findFirst({ where: { orgId, resource: resource.slice(0, -1) } });
    const record = await api("GET", `/${resource}/${event?.resourceId}`);
    expect(record.status, resource).toBe(200);
    expect(event?.data, resource).toEqual(record.body.data);
  }
  const health = await api("GET", `/health-scores?limit=5`);
  expect(health.body.data).toHaveLength(5);
  const one = await api("GET", `/health-scores/${health.body.data[0].accountId}`);
  expect(one.body.data.history.filter((point: { score: number | null }) => point.score !== null)).toHaveLength(90);
  const mrr = await api("GET", "/mrr");
  expect(mrr.body.data.totals.mrr).toBeGreaterThan(0);

  expect(JSON.parse((await seed()).stdout)).toMatchObject({ skipped: true });
  expect(await prisma().deal.count({ where: { orgId } })).toBe(counts.deals);
});

// The embedded database's demo template is seeded when the build runs; a first start long after it moves the book to
// the present, as if it had been seeded then.
it("brings a book seeded 40 days ago to today: records, dates, health history and event snapshots", {
  timeout: 180_000,
}, async () => {
  const slug = `aged-${randomBytes(4).toString("hex")}`;
  const orgId = JSON.parse((await admin("seed-demo", "--org", slug, "--json")).stdout).orgId as string;
  const snapshot = async () => {
    const [row] = await prisma().$queryRawUnsafe<
      Array<{ touched: Date; due: Date; close: Date; day: Date; days: number; snapshots: number }>
    >(
      `SELECT (SELECT max("occurredAt") FROM "Touchpoint" WHERE "orgId" = $1) AS "touched",
              (SELECT max("dueAt") FROM "Task" WHERE "orgId" = $1) AS "due",
              (SELECT max("expectedCloseDate") FROM "Deal" WHERE "orgId" = $1) AS "close",
              (SELECT max("day") FROM "HealthSnapshot" WHERE "orgId" = $1) AS "day",
              (SELECT count(DISTINCT "day")::int FROM "HealthSnapshot" WHERE "orgId" = $1) AS "days",
              (SELECT count(*)::int FROM "HealthSnapshot" WHERE "orgId" = $1) AS "snapshots"`,
      orgId,
    );
    return row as NonNullable<typeof row>;
  };
  const seeded = await snapshot();
  const [org] = await prisma().$queryRawUnsafe<Array<{ createdAt: Date }>>(
    `SELECT "createdAt" FROM "Organisation" WHERE "id" = $1`,
    orgId,
  );
  const DAY = 86_400_000;
  // As a template built 40 days ago would hold it.
  await shiftOrganisationTimes(orgId, org?.createdAt as Date, -40 * DAY);
  const aged = await snapshot();
  expect(seeded.touched.getTime() - aged.touched.getTime()).toBe(40 * DAY);
  expect(seeded.day.getTime() - aged.day.getTime()).toBe(40 * DAY);
  expect(aged.snapshots).toBe(seeded.snapshots);

  const moved = await bringDemoBookToToday(orgId);
  expect(moved).toBeGreaterThan(40 * DAY - 60_000);
  const today = await snapshot();
  // Within the time the test took between seeding and now.
  expect(Math.abs(today.touched.getTime() - seeded.touched.getTime())).toBeLessThan(60_000);
  expect(Math.abs(today.due.getTime() - seeded.due.getTime())).toBeLessThan(60_000);
  expect(today.close.getTime()).toBe(seeded.close.getTime());
  expect(today.day.getTime()).toBe(seeded.day.getTime());
  expect({ days: today.days, snapshots: today.snapshots }).toEqual({ days: seeded.days, snapshots: seeded.snapshots });
  // A second start finds it current and leaves it.
  expect(await bringDemoBookToToday(orgId)).toBe(0);

  const api = client(server.url, await createKey(orgId, FULL_ACCESS_SCOPES));
  // The events' snapshots moved with their records: each still equals the record's GET.
  for (const resource of ["accounts", "deals", "tasks", "touchpoints"]) {
    const event = await prisma().event.findFirst({ where: { orgId, resource: resource.slice(0, -1) } });
    const record = await api("GET", `/${resource}/${event?.resourceId}`);
    expect(record.status, resource).toBe(200);
    expect(event?.data, resource).toEqual(record.body.data);
  }
  const one = await api("GET", "/health-scores?limit=1");
  const history = await api("GET", `/health-scores/${one.body.data[0].accountId}`);
  expect(history.body.data.history.filter((point: { score: number | null }) => point.score !== null)).toHaveLength(90);
});
