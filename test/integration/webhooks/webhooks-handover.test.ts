// Hand-over of committed outbox events to Inngest and the sweeper that makes sure nothing is lost
// (docs/architecture.md, "Webhooks and the outbox"), with a stand-in for Inngest's event API on 127.0.0.1; and the
// /api/inngest route that serves the functions.
process.env.WEBHOOKS_ALLOW_LOOPBACK = "true";

import { InngestTestEngine } from "@inngest/test";
import { afterAll, beforeAll, beforeEach, expect, it } from "vitest";
import { GET, PUT } from "../../../app/api/inngest/route";
import { inngest } from "../../../inngest/client";
import { deliverWebhookFunction } from "../../../inngest/functions/deliver-webhook";
import { FAN_OUT_BATCH, fanOutEventFunction } from "../../../inngest/functions/fan-out-event";
import { purgeIdempotencyKeysFunction } from "../../../inngest/functions/purge-idempotency-keys";
import { sweepOutboxFunction } from "../../../inngest/functions/sweep-outbox";
import { functions } from "../../../inngest/index";
import { prisma } from "../../../server/db/transaction";
import { fanOutEvents } from "../../../server/webhooks/deliveries";
import { createWebhookEndpoint } from "../../../server/webhooks/endpoints";
import { dispatchesSettled } from "../../../server/webhooks/hand-over";
import { workerStatus } from "../../../server/webhooks/worker";
import { client, createKey, createTestOrg, startApi, type TestServer } from "../../helpers/api";
import {
  type FakeInngest,
  type Receiver,
  type SentEvent,
  startFakeInngest,
  startReceiver,
} from "../../helpers/receiver";

let server: TestServer;
let fakeInngest: FakeInngest;
let receiver: Receiver;

function pointInngestAt(url: string | undefined): void {
  if (url === undefined) delete process.env.INNGEST_DEV;
  else process.env.INNGEST_DEV = url;
  inngest.setEnvVars({ INNGEST_DEV: url });
}

beforeAll(async () => {
  server = await startApi();
  fakeInngest = await startFakeInngest();
  receiver = await startReceiver();
});
afterAll(async () => {
  await Promise.all([server.close(), fakeInngest.close(), receiver.close()]);
});
beforeEach(async () => {
  await dispatchesSettled();
  pointInngestAt(fakeInngest.url);
  fakeInngest.failing = false;
  fakeInngest.events.splice(0);
  fakeInngest.posts = 0;
});

/** The events the stand-in got for one organisation (the sweeper also picks up other test files' rows). */
function sentFor(orgId: string): SentEvent[] {
  return fakeInngest.events.filter((event) => event.data.orgId === orgId);
}

/** Runs fan-out and deliver for what the stand-in received for `orgId`, like Inngest would, until none is left. */
async function drainFor(orgId: string): Promise<void> {
  for (;;) {
    const batch = sentFor(orgId);
    if (batch.length === 0) return;
    for (const event of batch) fakeInngest.events.splice(fakeInngest.events.indexOf(event), 1);
    for (const event of batch) {
      const fn = event.name === "crm/event.recorded" ? fanOutEventFunction : deliverWebhookFunction;
      const { error } = await new InngestTestEngine({
        function: fn,
        events: [{ name: event.name, data: event.data }],
      }).execute();
      expect(error).toBeUndefined();
    }
  }
}

it("hands a bulk request's 500 events to Inngest after the commit in one send, and stamps dispatchedAt", async () => {
  const org = await createTestOrg();
  const accounts = Array.from({ length: 500 }, (_, i) => ({ name: `Bulk ${i}`, externalId: `b-${i}` }));
  const res = await client(server.url, org.key)("POST", "/accounts/bulk", { accounts });
  expect(res.status).toBe(200);
  await dispatchesSettled();
  expect(fakeInngest.posts).toBe(1);
  const sent = sentFor(org.orgId);
  expect(sent).toHaveLength(500);
  const events = await prisma().event.findMany({ where: { orgId: org.orgId } });
  expect(new Set(sent.map((event) => event.data.eventId))).toEqual(new Set(events.map((event) => event.id)));
  expect(sent[0]).toMatchObject({ name: "crm/event.recorded", id: sent[0]?.data.eventId });
  expect(events.every((event) => event.dispatchedAt !== null && event.fannedOutAt === null)).toBe(true);
});

it("nothing is handed over for a request that rolls back", async () => {
  const org = await createTestOrg();
  const api = client(server.url, org.key);
  await api("POST", "/accounts", { name: "One", externalId: "dup" });
  await dispatchesSettled();
  fakeInngest.events.splice(0);
  expect((await api("POST", "/accounts", { name: "Two", externalId: "dup" })).status).toBe(422);
  await dispatchesSettled();
  expect(sentFor(org.orgId)).toEqual([]);
});

it("a failed hand-over never fails the request; the sweeper sends the event again and it is delivered", async () => {
  const org = await createTestOrg();
  await createWebhookEndpoint(org.orgId, { url: `${receiver.url}?sweep`, events: ["*"] });
  fakeInngest.failing = true;
  const created = await client(server.url, org.key)("POST", "/accounts", { name: "Survivor" });
  expect(created.status).toBe(201);
  await dispatchesSettled();
  const event = await prisma().event.findFirstOrThrow({ where: { orgId: org.orgId } });
  expect(event).toMatchObject({ dispatchedAt: null, fannedOutAt: null });
  expect(sentFor(org.orgId)).toEqual([]);

  // Inngest is back. A sweep within the first minute leaves the event alone (its hand-over may still be on its way).
  fakeInngest.failing = false;
  const early = await new InngestTestEngine({ function: sweepOutboxFunction }).execute();
  expect(early.error).toBeUndefined();
  expect(sentFor(org.orgId)).toEqual([]);
  // Made the oldest row of the outbox (2 h old), so this sweep's batch includes it whatever other test files left.
  await prisma().event.update({ where: { id: event.id }, data: { createdAt: new Date(Date.now() - 2 * 3_600_000) } });
  const sweep = await new InngestTestEngine({ function: sweepOutboxFunction }).execute();
  expect(sweep.error).toBeUndefined();
  expect(sentFor(org.orgId)).toEqual([
    expect.objectContaining({ name: "crm/event.recorded", data: { eventId: event.id, orgId: org.orgId } }),
  ]);
  expect((await prisma().event.findUniqueOrThrow({ where: { id: event.id } })).dispatchedAt).not.toBeNull();
  // Claimed: the next sweep does not send it again while its fan-out may still be queued.
  await new InngestTestEngine({ function: sweepOutboxFunction }).execute();
  expect(sentFor(org.orgId)).toHaveLength(1);
  await drainFor(org.orgId);
  const delivered = receiver.requests.filter((request) => request.path === "/hook?sweep");
  expect(delivered.map((request) => request.headers["service-event-id"])).toEqual([event.id]);
  expect(delivered[0]?.headers["service-signature"]).toMatch(/^t=\d+,v1=/);
  expect((await prisma().event.findUniqueOrThrow({ where: { id: event.id } })).fannedOutAt).not.toBeNull();
});

it("the sweeper leaves alone events older than 72 hours and test-key events", async () => {
  const org = await createTestOrg();
  pointInngestAt(undefined);
  const api = client(server.url, org.key);
  await api("POST", "/accounts", { name: "Stale" });
  const testKeyApi = client(server.url, await createKey(org.orgId, ["accounts:write"], true));
  await testKeyApi("POST", "/accounts", { name: "Test traffic" });
  await dispatchesSettled();
  pointInngestAt(fakeInngest.url);
  const events = await prisma().event.findMany({ where: { orgId: org.orgId }, orderBy: { isTest: "asc" } });
  expect(events.map((event) => [event.isTest, event.dispatchedAt, event.fannedOutAt === null])).toEqual([
    [false, null, true],
    [true, null, false],
  ]);
  await prisma().event.updateMany({
    where: { orgId: org.orgId },
    data: { createdAt: new Date(Date.now() - 73 * 3_600_000) },
  });
  await prisma().event.updateMany({
    where: { orgId: org.orgId, isTest: true },
    data: { createdAt: new Date(Date.now() - 2 * 3_600_000) },
  });
  const { error } = await new InngestTestEngine({ function: sweepOutboxFunction }).execute();
  expect(error).toBeUndefined();
  expect(sentFor(org.orgId)).toEqual([]);
});

it("the sweeper requests again a delivery whose run was lost", async () => {
  const org = await createTestOrg();
  await createWebhookEndpoint(org.orgId, { url: `${receiver.url}?stuck`, events: ["account.created"] });
  await client(server.url, org.key)("POST", "/accounts", { name: "Stuck" });
  await dispatchesSettled();
  fakeInngest.events.splice(0);
  const event = await prisma().event.findFirstOrThrow({ where: { orgId: org.orgId } });
  const [delivery] = await fanOutEvents([event.id]);
  if (!delivery) throw new Error("no delivery");
  // Not lost yet: created a moment ago.
  await new InngestTestEngine({ function: sweepOutboxFunction }).execute();
  expect(sentFor(org.orgId)).toEqual([]);
  await prisma()
    .$executeRaw`UPDATE "WebhookDelivery" SET "updatedAt" = '2000-01-01' WHERE "id" = ${delivery.deliveryId}`;
  await new InngestTestEngine({ function: sweepOutboxFunction }).execute();
  expect(sentFor(org.orgId)).toEqual([
    expect.objectContaining({ name: "crm/webhook.delivery.requested", data: delivery }),
  ]);
  await drainFor(org.orgId);
  expect(receiver.requests.filter((request) => request.path === "/hook?stuck")).toHaveLength(1);
  expect(await prisma().webhookDelivery.findUniqueOrThrow({ where: { id: delivery.deliveryId } })).toMatchObject({
    status: "SUCCEEDED",
  });
});

it("without Inngest configured nothing is sent; when Inngest is unreachable the request does not wait for it", async () => {
  const org = await createTestOrg();
  const api = client(server.url, org.key);
  pointInngestAt(undefined);
  expect((await api("POST", "/accounts", { name: "Unconfigured" })).status).toBe(201);
  await dispatchesSettled();
  expect(fakeInngest.posts).toBe(0);

  // A port nobody listens on: the SDK retries for about 1.5 s, off the request.
  const closed = await startReceiver();
  const deadUrl = new URL(closed.url).origin;
  await closed.close();
  pointInngestAt(deadUrl);
  const started = performance.now();
  expect((await api("POST", "/accounts", { name: "Unreachable" })).status).toBe(201);
  const requestMs = performance.now() - started;
  const handOverStarted = performance.now();
  await dispatchesSettled();
  const handOverMs = performance.now() - handOverStarted;
  expect(requestMs).toBeLessThan(1_000);
  expect(requestMs + handOverMs).toBeGreaterThan(1_000);
  const events = await prisma().event.findMany({ where: { orgId: org.orgId } });
  expect(events.map((event) => event.dispatchedAt)).toEqual([null, null]);
});

it("GET /api/inngest in development mode introspects every function; an in-band sync lists them", async () => {
  pointInngestAt("1");
  const introspection = await GET(new Request("http://127.0.0.1:3000/api/inngest") as never, undefined);
  expect(introspection.status).toBe(200);
  expect(await introspection.json()).toMatchObject({ mode: "dev", function_count: functions.length });

  const sync = await PUT(
    new Request("http://127.0.0.1:3000/api/inngest", {
      method: "PUT",
      headers: { "Content-Type": "application/json", "X-Inngest-Sync-Kind": "in_band" },
      body: JSON.stringify({ url: "http://127.0.0.1:3000/api/inngest" }),
    }) as never,
    undefined,
  );
  expect(sync.status).toBe(200);
  const body = (await sync.json()) as {
    app_id: string;
    functions: Array<{ id: string; name: string; triggers: unknown[] }>;
  };
  expect(body.app_id).toBe("msp-crm");
  expect(body.functions.map((fn) => [fn.id, fn.triggers]).sort()).toEqual(
    [
      ["msp-crm-purge-idempotency-keys", [{ cron: "17 3 * * *" }]],
      ["msp-crm-purge-expired-events", [{ cron: "27 3 * * *" }]],
      ["msp-crm-purge-expired-sign-ins", [{ cron: "37 3 * * *" }]],
      ["msp-crm-purge-archived-custom-fields", [{ cron: "47 3 * * *" }]],
      ["msp-crm-health-refresh", [{ cron: "* * * * *" }]],
      ["msp-crm-search-reindex", [{ event: "crm/search.reindex.requested" }, { cron: "* * * * *" }]],
      ["msp-crm-usage-roll-up", [{ cron: "* * * * *" }]],
      ["msp-crm-webhook-deliver", [{ event: "crm/webhook.delivery.requested" }]],
      ["msp-crm-webhook-fan-out", [{ event: "crm/event.recorded" }]],
      ["msp-crm-webhook-replay", [{ event: "crm/webhook.replay.requested" }]],
      ["msp-crm-webhook-sweep-outbox", [{ cron: "* * * * *" }]],
    ].sort(),
  );
});

it("the daily purge deletes expired idempotency records", async () => {
  const org = await createTestOrg();
  const row = {
    orgId: org.orgId,
    apiKeyId: org.apiKeyId,
    method: "POST",
    path: "/api/v1/accounts",
    fingerprint: "f",
    status: 201,
    responseBody: "{}",
    responseHeaders: {},
    requestId: "req_x",
  };
  await prisma().idempotencyKey.createMany({
    data: [
      { ...row, key: "expired", expiresAt: new Date(Date.now() - 1_000) },
      { ...row, key: "fresh", expiresAt: new Date(Date.now() + 3_600_000) },
    ],
  });
  const { result, error } = await new InngestTestEngine({ function: purgeIdempotencyKeysFunction }).execute();
  expect(error).toBeUndefined();
  expect((result as { deleted: number }).deleted).toBeGreaterThanOrEqual(1);
  const left = await prisma().idempotencyKey.findMany({ where: { orgId: org.orgId }, select: { key: true } });
  expect(left).toEqual([{ key: "fresh" }]);
});

it("says when no worker delivers, how many events wait and what to run; the sweeper's heartbeat turns it connected", async () => {
  const org = await createTestOrg();
  pointInngestAt(undefined);
  const api = client(server.url, org.key);
  for (const name of ["Waiting A", "Waiting B", "Waiting C"]) await api("POST", "/accounts", { name });
  await dispatchesSettled();
  await prisma().workerHeartbeat.deleteMany();

  const idle = await workerStatus(org.orgId);
  expect(idle).toMatchObject({ mode: "none", connected: false, lastSeenAt: null, waiting: 3 });
  expect(idle.message).toContain("No webhook worker");
  expect(idle.message).toContain("3 events waiting");
  expect(idle.message).toContain("npm run inngest");
  expect(idle.message).toContain("INNGEST_DEV=1");

  pointInngestAt(fakeInngest.url);
  const dev = await workerStatus(org.orgId);
  expect(dev).toMatchObject({ mode: "dev", connected: false, devServerUrl: fakeInngest.url });
  expect(dev.message).toContain(`events go to ${fakeInngest.url}`);

  await prisma().event.updateMany({
    where: { orgId: org.orgId },
    data: { createdAt: new Date(Date.now() - 2 * 3_600_000) },
  });
  const { result, error } = await new InngestTestEngine({ function: sweepOutboxFunction }).execute();
  expect(error).toBeUndefined();
  expect(result).toMatchObject({ reconnected: true });
  await drainFor(org.orgId);
  const connected = await workerStatus(org.orgId);
  expect(connected).toMatchObject({ mode: "dev", connected: true, waiting: 0 });
  expect(connected.message).toContain(`delivered by the Inngest dev server at ${fakeInngest.url}`);
});

it("a backlog of 10,000 waiting events is handed over by one sweep and fanned out 100 at a time", async () => {
  const org = await createTestOrg();
  await createWebhookEndpoint(org.orgId, { url: `${receiver.url}?backlog`, events: ["account.created"] });
  // Recorded while no worker ran: 10,000 live events, older than every other test file's, never handed over.
  await prisma().$executeRaw`
    INSERT INTO "Event" ("id", "orgId", "sequence", "name", "data", "isTest", "createdAt")
    SELECT 'evt_backlog_' || ${org.orgId} || '_' || n, ${org.orgId}, n, 'account.created', '{}'::jsonb, false,
           (now() AT TIME ZONE 'UTC') - interval '71 hours' + n * interval '1 millisecond'
    FROM generate_series(1, 10000) AS n`;
  const started = performance.now();
  const { result, error } = await new InngestTestEngine({ function: sweepOutboxFunction }).execute();
  const sweepMs = performance.now() - started;
  expect(error).toBeUndefined();
  expect((result as { events: number }).events).toBeGreaterThanOrEqual(10_000);
  const sent = sentFor(org.orgId).filter((event) => event.name === "crm/event.recorded");
  expect(new Set(sent.map((event) => event.data.eventId)).size).toBe(10_000);

  const fanOutStarted = performance.now();
  let deliveries = 0;
  for (let start = 0; start < sent.length; start += FAN_OUT_BATCH) {
    const batch = sent.slice(start, start + FAN_OUT_BATCH);
    const run = await new InngestTestEngine({
      function: fanOutEventFunction,
      events: batch.map((event) => ({ name: event.name, data: event.data })) as [SentEvent, ...SentEvent[]],
    }).execute();
    expect(run.error).toBeUndefined();
    deliveries += (run.result as { deliveries: number }).deliveries;
  }
  const fanOutMs = performance.now() - fanOutStarted;
  expect(deliveries).toBe(10_000);
  expect(await workerStatus(org.orgId)).toMatchObject({ waiting: 0 });
  console.log(
    `backlog of 10,000: handed over by one sweep in ${Math.round(sweepMs)} ms; fanned out in 100 runs in ${Math.round(fanOutMs)} ms`,
  );
  fakeInngest.events.splice(0);
}, 180_000);
