// Webhook delivery end to end (docs/api-contract.md §6, docs/architecture.md, "Webhooks and the outbox"): changes made
// through the real API are handed to Inngest (a stand-in for its event API on 127.0.0.1), the fan-out and deliver
// functions run under @inngest/test, and a real receiver on 127.0.0.1 checks headers and signatures with the algorithm
// of docs/api-contract.md §6.4. Retries, the disable rule and timeouts call the deliver handler with the attempt
// numbers Inngest would pass (the test engine does not model them).
process.env.WEBHOOKS_ALLOW_LOOPBACK = "true";

import { InngestTestEngine } from "@inngest/test";
import { RetryAfterError } from "inngest";
import { afterAll, beforeAll, beforeEach, expect, it } from "vitest";
import { inngest } from "../../../inngest/client";
import { deliverWebhook, deliverWebhookFunction } from "../../../inngest/functions/deliver-webhook";
import { fanOutEventFunction } from "../../../inngest/functions/fan-out-event";
import { prisma } from "../../../server/db/transaction";
import { EVENT_NAMES } from "../../../server/platform/events-feed/schema";
import { fanOutEvents } from "../../../server/webhooks/deliveries";
import { createWebhookEndpoint, setWebhookEndpointEnabled } from "../../../server/webhooks/endpoints";
import { dispatchesSettled } from "../../../server/webhooks/hand-over";
import { client, createKey, createTestOrg, startApi, type TestServer } from "../../helpers/api";
import { addMember, memberIdOf } from "../../helpers/members";
import {
  type FakeInngest,
  type Receiver,
  startFakeInngest,
  startReceiver,
  verifyServiceSignature,
} from "../../helpers/receiver";

// The events of changes to records; webhook_endpoint.disabled has tests of its own (webhooks-alerts.test.ts).
const RECORD_EVENTS = EVENT_NAMES.filter((name) => name !== "webhook_endpoint.disabled");

let server: TestServer;
let fakeInngest: FakeInngest;
let receiver: Receiver;
beforeAll(async () => {
  server = await startApi();
  fakeInngest = await startFakeInngest();
  process.env.INNGEST_DEV = fakeInngest.url;
  inngest.setEnvVars({ INNGEST_DEV: fakeInngest.url });
  receiver = await startReceiver();
});
afterAll(async () => {
  await Promise.all([server.close(), fakeInngest.close(), receiver.close()]);
});
beforeEach(() => {
  receiver.reply(() => ({ status: 200, body: "ok" }));
});

/**
 * Plays Inngest: runs the fan-out function for every `crm/event.recorded` it received and the deliver function for
 * every `crm/webhook.delivery.requested`, each under a new InngestTestEngine, until nothing is left.
 */
async function drainInngest(): Promise<{ fanOuts: number; deliveries: number }> {
  await dispatchesSettled();
  let fanOuts = 0;
  let deliveries = 0;
  while (fakeInngest.events.length > 0) {
    const batch = fakeInngest.events.splice(0);
    for (const event of batch) {
      const fn = event.name === "crm/event.recorded" ? fanOutEventFunction : deliverWebhookFunction;
      const engine = new InngestTestEngine({ function: fn, events: [{ name: event.name, data: event.data }] });
      const { error } = await engine.execute();
      expect(error).toBeUndefined();
      if (fn === fanOutEventFunction) fanOuts++;
      else deliveries++;
    }
  }
  return { fanOuts, deliveries };
}

async function causeAllEvents(key: string, orgId: string) {
  const api = client(server.url, key);
  const ok = async (method: string, path: string, body?: unknown) => {
    const res = await api(method, path, body);
    expect(res.status, `${method} ${path} ${JSON.stringify(res.body)}`).toBeLessThan(300);
    return res.body.data;
  };
  const account = await ok("POST", "/accounts", { name: "Northwind Dental" });
  await ok("PATCH", `/accounts/${account.id}`, { industry: "Healthcare" });
  const contact = await ok("POST", "/contacts", { email: "ana@northwind.example", accountId: account.id });
  await ok("PATCH", `/contacts/${contact.id}`, { title: "IT lead" });
  const won = await ok("POST", "/deals", { name: "Managed backup", accountId: account.id });
  await ok("PATCH", `/deals/${won.id}`, { stage: "PROPOSAL" });
  await ok("PATCH", `/deals/${won.id}`, { stage: "CLOSED_WON" });
  const lost = await ok("POST", "/deals", { name: "SOC", accountId: account.id });
  await ok("PATCH", `/deals/${lost.id}`, { stage: "CLOSED_LOST" });
  const device = await ok("POST", "/devices", { rmmAgentId: "agent-1", accountId: account.id, hostname: "WS-001" });
  await ok("PATCH", `/devices/${device.id}`, { hostname: "WS-002" });
  await ok("PATCH", `/devices/${device.id}`, { isOnline: false });
  await ok("PATCH", `/devices/${device.id}`, { isEndOfLife: true });
  await ok("POST", "/touchpoints", { accountId: account.id, type: "CALL", direction: "OUTBOUND" });
  await ok("DELETE", `/accounts/${account.id}`);
  // The extension events of docs/api-contract.md §6.1; a second account is removed for good with its records.
  await ok("PATCH", `/deals/${won.id}`, { name: "Managed backup 2027" });
  const task = await ok("POST", "/tasks", { title: "Renewal call" });
  await ok("PATCH", `/tasks/${task.id}`, { status: "DONE" });
  await ok("DELETE", `/tasks/${task.id}`);
  const gone = await ok("POST", "/accounts", { name: "Gone Ltd" });
  await ok("POST", "/notes", { objectType: "Account", objectId: gone.id, body: "Merged into Northwind." });
  await ok("POST", "/deals", { name: "Never", accountId: gone.id });
  await ok("POST", "/touchpoints", { accountId: gone.id, type: "EMAIL", direction: "INBOUND" });
  const spare = await ok("POST", "/devices", { rmmAgentId: "agent-2", accountId: gone.id, hostname: "WS-003" });
  await ok("DELETE", `/devices/${spare.id}`);
  await ok("POST", "/devices", { rmmAgentId: "agent-3", accountId: gone.id, hostname: "WS-004" });
  await ok("DELETE", `/accounts/${gone.id}?force=true`);
  const person = await ok("POST", "/contacts", { email: "erase.me@northwind.example" });
  await ok("POST", `/contacts/${person.id}/erase`);
  const field = await ok("POST", "/custom-fields", { resource: "task", key: "effort", label: "Effort", type: "text" });
  await ok("PATCH", `/custom-fields/${field.id}`, { label: "Effort (hours)" });
  await ok("DELETE", `/custom-fields/${field.id}`);
  // A member leaving the team, removed by an owner on the team page (docs/api-contract.md §11.5).
  const owner = await addMember(orgId, "owner");
  const leaver = await addMember(orgId, "developer");
  await owner.caller.team.removeMember({ memberId: await memberIdOf(orgId, leaver.userId), revokeKeys: false });
  return { account, api, remover: owner.userId };
}

it("delivers each event of docs/api-contract.md §6.1, extensions included, to a subscribed endpoint, signed, with the documented headers", async () => {
  const org = await createTestOrg();
  const all = await createWebhookEndpoint(org.orgId, { url: `${receiver.url}?all`, events: ["*"] });
  const deals = await createWebhookEndpoint(org.orgId, {
    url: `${receiver.url}?deals`,
    events: ["deal.closed_won", "deal.closed_lost"],
  });
  // Subscribed to touchpoints only: it must get nothing else.
  await createWebhookEndpoint(org.orgId, { url: `${receiver.url}?touch`, events: ["touchpoint.created"] });
  const disabled = await createWebhookEndpoint(org.orgId, { url: `${receiver.url}?disabled`, events: ["*"] });
  await setWebhookEndpointEnabled(org.orgId, disabled.endpoint.id, false);
  const otherOrg = await createTestOrg();
  await createWebhookEndpoint(otherOrg.orgId, { url: `${receiver.url}?other`, events: ["*"] });

  const before = receiver.requests.length;
  const { remover } = await causeAllEvents(org.key, org.orgId);
  const recorded = await prisma().event.findMany({ where: { orgId: org.orgId }, orderBy: { sequence: "asc" } });
  expect(new Set(recorded.map((event) => event.name))).toEqual(new Set(RECORD_EVENTS));
  const { fanOuts, deliveries } = await drainInngest();
  expect(fanOuts).toBe(recorded.length);

  const got = receiver.requests.slice(before);
  const byTarget = (query: string) => got.filter((request) => request.path === `/hook?${query}`);
  expect(byTarget("all")).toHaveLength(recorded.length);
  expect(byTarget("deals").map((request) => request.headers["service-event"])).toEqual([
    "deal.closed_won",
    "deal.closed_lost",
  ]);
  expect(byTarget("touch").map((request) => request.headers["service-event"])).toEqual([
    "touchpoint.created",
    "touchpoint.created",
  ]);
  expect(byTarget("disabled")).toEqual([]);
  expect(byTarget("other")).toEqual([]);
  expect(deliveries).toBe(recorded.length + 4);

  const seen = new Set<string>();
  for (const request of byTarget("all")) {
    const event = recorded.find((row) => row.id === request.headers["service-event-id"]);
    expect(event).toBeDefined();
    if (!event) continue;
    seen.add(event.name);
    expect(request.method).toBe("POST");
    expect(request.headers).toMatchObject({
      "content-type": "application/json",
      "user-agent": "Service-Webhooks/1.1",
      "service-event": event.name,
      "service-event-id": event.id,
      "service-signature": expect.stringMatching(/^t=\d{10},v1=[0-9a-f]{64}$/),
      "x-msp-signature": expect.stringMatching(/^[0-9a-f]{64}$/),
      "x-msp-timestamp": expect.stringMatching(/^\d{10}$/),
    });
    expect(verifyServiceSignature(request.headers["service-signature"] as string, request.body, all.secret)).toBe(true);
    expect(verifyServiceSignature(request.headers["service-signature"] as string, `${request.body} `, all.secret)).toBe(
      false,
    );
    expect(verifyServiceSignature(request.headers["service-signature"] as string, request.body, deals.secret)).toBe(
      false,
    );
    expect(JSON.parse(request.body)).toEqual({
      id: event.id,
      event: event.name,
      sequence: Number(event.sequence),
      timestamp: event.createdAt.toISOString(),
      orgId: org.orgId,
      resource: event.name.split(".")[0],
      // Every change went through the key, but the removal of a member, made by an owner on the team page.
      actor: event.name === "member.removed" ? { type: "user", id: remover } : { type: "api_key", id: org.apiKeyId },
      data: event.data,
      ...(event.previous ? { changedFields: event.changedFields, previous: event.previous } : {}),
    });
  }
  expect([...seen].sort()).toEqual([...RECORD_EVENTS].sort());
  // Each payload carries its position in the organisation's feed: the changes were made one after the other, so the
  // sequences are 1, 2, 3… in the order of the changes, as the feed serves them.
  const sequences = byTarget("all").map((request) => JSON.parse(request.body).sequence);
  expect(sequences).toEqual(recorded.map((_, index) => index + 1));
  const feed = (await client(server.url, org.key)("GET", "/events?limit=100")).body.data;
  expect(feed.map((event: { id: string; sequence: number }) => [event.id, event.sequence])).toEqual(
    byTarget("all").map((request) => [JSON.parse(request.body).id, JSON.parse(request.body).sequence]),
  );
  // The data is the resource as GET returns it (docs/api-contract.md §6.2).
  const touchpointRequest = byTarget("all").find(
    (request) => request.headers["service-event"] === "touchpoint.created",
  );
  const touchpoint = JSON.parse(touchpointRequest?.body ?? "{}").data;
  expect((await client(server.url, org.key)("GET", `/touchpoints/${touchpoint.id}`)).body.data).toEqual(touchpoint);

  const rows = await prisma().webhookDelivery.findMany({ where: { orgId: org.orgId } });
  expect(rows.every((row) => row.status === "SUCCEEDED" && row.attemptCount === 1)).toBe(true);
  expect(await prisma().event.count({ where: { orgId: org.orgId, fannedOutAt: null } })).toBe(0);
  expect(await prisma().event.count({ where: { orgId: org.orgId, dispatchedAt: null } })).toBe(0);
});

it("never delivers events caused by a test key (docs/api-contract.md §5.6), though they are stored", async () => {
  const org = await createTestOrg();
  const testKey = await createKey(org.orgId, ["accounts:write"], true);
  await createWebhookEndpoint(org.orgId, { url: `${receiver.url}?testkey`, events: ["*"] });
  const api = client(server.url, testKey);
  const created = await api("POST", "/accounts", { name: "Test traffic" });
  expect(created.status).toBe(201);
  await api("PATCH", `/accounts/${created.body.data.id}`, { name: "Test traffic 2" });
  const events = await prisma().event.findMany({ where: { orgId: org.orgId }, orderBy: { sequence: "asc" } });
  expect(events.map((event) => [event.name, event.isTest])).toEqual([
    ["account.created", true],
    ["account.updated", true],
  ]);
  await dispatchesSettled();
  expect(fakeInngest.events.filter((event) => events.some((row) => row.id === event.data.eventId))).toEqual([]);
  // Even when fan-out is asked directly (a stray resend), a test-key event gets no delivery.
  for (const event of events) expect(await fanOutEvents([event.id])).toEqual([]);
  await drainInngest();
  expect(await prisma().webhookDelivery.count({ where: { orgId: org.orgId } })).toBe(0);
  expect(receiver.requests.filter((request) => request.path === "/hook?testkey")).toEqual([]);
});

it("fan-out is idempotent: a repeated run creates no second delivery and requests nothing twice", async () => {
  const org = await createTestOrg();
  await createWebhookEndpoint(org.orgId, { url: `${receiver.url}?idem`, events: ["account.created"] });
  await client(server.url, org.key)("POST", "/accounts", { name: "Once" });
  const [event] = await prisma().event.findMany({ where: { orgId: org.orgId } });
  if (!event) throw new Error("no event");
  await dispatchesSettled();
  fakeInngest.events.splice(0);
  const first = await fanOutEvents([event.id]);
  const second = await fanOutEvents([event.id]);
  expect(first).toHaveLength(1);
  expect(second).toEqual(first);
  // A new endpoint created after the fan-out does not get the older event on a re-run.
  await createWebhookEndpoint(org.orgId, { url: `${receiver.url}?late`, events: ["*"] });
  expect(await fanOutEvents([event.id])).toEqual(first);
  expect(await prisma().webhookDelivery.count({ where: { eventId: event.id } })).toBe(1);
  const engine = new InngestTestEngine({
    function: fanOutEventFunction,
    events: [{ name: "crm/event.recorded", data: { eventId: event.id, orgId: org.orgId } }],
  });
  const { result, ctx } = await engine.execute();
  expect(result).toEqual({ events: 1, deliveries: 1 });
  expect(ctx.step.sendEvent).toHaveBeenCalledWith("request-deliveries", [
    expect.objectContaining({
      name: "crm/webhook.delivery.requested",
      id: first[0]?.deliveryId,
      data: first[0],
    }),
  ]);
  fakeInngest.events.splice(0);
});

async function oneDelivery(url: string, events: string[] = ["account.created"]) {
  const org = await createTestOrg();
  const { endpoint, secret } = await createWebhookEndpoint(org.orgId, { url, events });
  const api = client(server.url, org.key);
  const account = (await api("POST", "/accounts", { name: "Retry me" })).body.data;
  await dispatchesSettled();
  fakeInngest.events.splice(0);
  const event = await prisma().event.findFirstOrThrow({ where: { orgId: org.orgId, name: "account.created" } });
  const [delivery] = await fanOutEvents([event.id]);
  if (!delivery) throw new Error("no delivery");
  return { org, endpoint, secret, event, delivery, api, account };
}

async function retryAfter(promise: Promise<unknown>): Promise<string> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(RetryAfterError);
  return (error as RetryAfterError).retryAfter;
}

it("retries with backoff 1 min, 5 min, 30 min, 2 h; the receiver gets the same event id each time", async () => {
  const flaky = await startReceiver();
  flaky.reply((_, index) => (index < 4 ? { status: 500, body: "down" } : { status: 200 }));
  try {
    const { delivery, event, secret, endpoint } = await oneDelivery(flaky.url);
    const context = (attempt: number) => ({ event: { data: delivery }, attempt });
    expect(await retryAfter(deliverWebhook(context(0)))).toBe("60");
    expect(await retryAfter(deliverWebhook(context(1)))).toBe("300");
    expect(await retryAfter(deliverWebhook(context(2)))).toBe("1800");
    expect(await retryAfter(deliverWebhook(context(3)))).toBe("7200");
    expect(await deliverWebhook(context(4))).toEqual({
      deliveryId: delivery.deliveryId,
      attempt: 5,
      success: true,
      responseStatus: 200,
      skipped: null,
    });
    expect(flaky.requests).toHaveLength(5);
    for (const request of flaky.requests) {
      expect(request.headers["service-event-id"]).toBe(event.id);
      expect(JSON.parse(request.body).id).toBe(event.id);
      expect(verifyServiceSignature(request.headers["service-signature"] as string, request.body, secret)).toBe(true);
    }
    const attempts = await prisma().deliveryAttempt.findMany({
      where: { deliveryId: delivery.deliveryId },
      orderBy: { attempt: "asc" },
    });
    expect(attempts.map((row) => [row.attempt, row.success, row.responseStatus, row.error, row.responseBody])).toEqual([
      [1, false, 500, "HTTP 500", "down"],
      [2, false, 500, "HTTP 500", "down"],
      [3, false, 500, "HTTP 500", "down"],
      [4, false, 500, "HTTP 500", "down"],
      [5, true, 200, null, ""],
    ]);
    expect(await prisma().webhookDelivery.findUniqueOrThrow({ where: { id: delivery.deliveryId } })).toMatchObject({
      status: "SUCCEEDED",
      attemptCount: 5,
      completedAt: expect.any(Date),
    });
    expect(await prisma().webhookEndpoint.findUniqueOrThrow({ where: { id: endpoint.id } })).toMatchObject({
      enabled: true,
      consecutiveFailures: 0,
    });
    // Inngest may run a finished delivery again (a resend): nothing more is sent.
    expect(await deliverWebhook(context(0))).toMatchObject({ skipped: "already SUCCEEDED" });
    expect(flaky.requests).toHaveLength(5);
  } finally {
    await flaky.close();
  }
});

it("disables an endpoint after 5 consecutive failed deliveries, recording the reason; a success resets the count", async () => {
  const down = await startReceiver();
  down.reply(() => ({ status: 502 }));
  try {
    const org = await createTestOrg();
    const { endpoint } = await createWebhookEndpoint(org.orgId, { url: down.url, events: ["account.created"] });
    const api = client(server.url, org.key);
    const failDelivery = async () => {
      await api("POST", "/accounts", { name: `Doomed ${Math.random()}` });
      const event = await prisma().event.findFirstOrThrow({
        where: { orgId: org.orgId, fannedOutAt: null },
        orderBy: { createdAt: "desc" },
      });
      const [delivery] = await fanOutEvents([event.id]);
      if (!delivery) throw new Error("no delivery");
      for (let attempt = 0; attempt < 4; attempt++)
        await retryAfter(deliverWebhook({ event: { data: delivery }, attempt }));
      return deliverWebhook({ event: { data: delivery }, attempt: 4 });
    };
    const state = () => prisma().webhookEndpoint.findUniqueOrThrow({ where: { id: endpoint.id } });

    for (let i = 1; i <= 3; i++) {
      expect(await failDelivery()).toMatchObject({ success: false, attempt: 5, responseStatus: 502 });
      expect(await state()).toMatchObject({ enabled: true, consecutiveFailures: i });
    }
    // One success in between: the failures before it no longer count.
    down.reply(() => ({ status: 200 }));
    await api("POST", "/accounts", { name: "Lucky" });
    const lucky = await prisma().event.findFirstOrThrow({ where: { orgId: org.orgId, fannedOutAt: null } });
    const [luckyDelivery] = await fanOutEvents([lucky.id]);
    if (!luckyDelivery) throw new Error("no delivery");
    expect(await deliverWebhook({ event: { data: luckyDelivery }, attempt: 0 })).toMatchObject({ success: true });
    expect(await state()).toMatchObject({ enabled: true, consecutiveFailures: 0 });

    down.reply(() => ({ status: 502 }));
    for (let i = 1; i <= 4; i++) await failDelivery();
    expect(await state()).toMatchObject({ enabled: true, consecutiveFailures: 4, disabledReason: null });
    await failDelivery();
    const disabled = await state();
    expect(disabled).toMatchObject({
      enabled: false,
      consecutiveFailures: 5,
      disabledAt: expect.any(Date),
      disabledReason: "5 consecutive deliveries failed after 5 attempts each (last: HTTP 502)",
    });
    const requests = down.requests.length;
    expect(requests).toBe(3 * 5 + 1 + 5 * 5);

    // Disabled: a new event gets no delivery, and a delivery still pending is closed without a request.
    await api("POST", "/accounts", { name: "Ignored" });
    const ignored = await prisma().event.findFirstOrThrow({ where: { orgId: org.orgId, fannedOutAt: null } });
    expect(await fanOutEvents([ignored.id])).toEqual([]);
    const pending = await prisma().webhookDelivery.create({
      data: { id: "whd_pendingwhiledisabled0", orgId: org.orgId, endpointId: endpoint.id, eventId: ignored.id },
    });
    expect(await deliverWebhook({ event: { data: { deliveryId: pending.id } }, attempt: 0 })).toMatchObject({
      skipped: "endpoint disabled",
    });
    expect(await prisma().webhookDelivery.findUniqueOrThrow({ where: { id: pending.id } })).toMatchObject({
      status: "FAILED",
      attemptCount: 0,
    });
    expect(down.requests).toHaveLength(requests);
  } finally {
    await down.close();
  }
});

it("410 Gone disables the endpoint at once and ends the retries", async () => {
  const gone = await startReceiver();
  gone.reply(() => ({ status: 410, body: "gone" }));
  try {
    const { delivery, endpoint } = await oneDelivery(gone.url);
    expect(await deliverWebhook({ event: { data: delivery }, attempt: 0 })).toMatchObject({
      success: false,
      responseStatus: 410,
      attempt: 1,
    });
    expect(await prisma().webhookEndpoint.findUniqueOrThrow({ where: { id: endpoint.id } })).toMatchObject({
      enabled: false,
      disabledReason: "the receiver answered 410 Gone",
      disabledAt: expect.any(Date),
    });
    expect(await prisma().webhookDelivery.findUniqueOrThrow({ where: { id: delivery.deliveryId } })).toMatchObject({
      status: "FAILED",
    });
    expect(gone.requests).toHaveLength(1);
  } finally {
    await gone.close();
  }
});

it("counts a redirect (3xx, not followed) and a timeout (10 s) as failed attempts", { timeout: 40_000 }, async () => {
  const target = await startReceiver();
  const redirecting = await startReceiver();
  redirecting.reply(() => ({ status: 302, headers: { Location: target.url } }));
  const hanging = await startReceiver();
  hanging.reply(() => "hang");
  try {
    const redirected = await oneDelivery(redirecting.url);
    expect(await retryAfter(deliverWebhook({ event: { data: redirected.delivery }, attempt: 0 }))).toBe("60");
    expect(target.requests).toEqual([]);
    const timedOut = await oneDelivery(hanging.url);
    const started = Date.now();
    expect(await retryAfter(deliverWebhook({ event: { data: timedOut.delivery }, attempt: 0 }))).toBe("60");
    expect(Date.now() - started).toBeGreaterThanOrEqual(9_900);
    expect(Date.now() - started).toBeLessThan(15_000);
    expect(hanging.requests).toHaveLength(1);
    const attempts = await prisma().deliveryAttempt.findMany({
      where: { deliveryId: { in: [redirected.delivery.deliveryId, timedOut.delivery.deliveryId] } },
      orderBy: { id: "asc" },
    });
    expect(attempts.map((row) => [row.success, row.responseStatus, row.error])).toEqual([
      [false, 302, "HTTP 302: redirects are not followed"],
      [false, null, "timed out after 10 s"],
    ]);
    expect(attempts[1]?.durationMs).toBeGreaterThanOrEqual(9_900);
  } finally {
    await Promise.all([target.close(), redirecting.close(), hanging.close()]);
  }
});

it("fans one event out to 50 endpoints and delivers all of them to a local receiver (timing printed)", async () => {
  const org = await createTestOrg();
  const secrets = new Map<string, string>();
  for (let i = 0; i < 50; i++) {
    const { endpoint, secret } = await createWebhookEndpoint(org.orgId, {
      url: `${receiver.url}?bench=${i}`,
      events: ["*"],
    });
    secrets.set(endpoint.id, secret);
  }
  await client(server.url, org.key)("POST", "/accounts", { name: "Fifty" });
  await dispatchesSettled();
  const before = receiver.requests.length;
  const started = performance.now();
  const { fanOuts, deliveries } = await drainInngest();
  const elapsed = performance.now() - started;
  expect(fanOuts).toBe(1);
  expect(deliveries).toBe(50);
  expect(receiver.requests.length - before).toBe(50);
  expect(await prisma().webhookDelivery.count({ where: { orgId: org.orgId, status: "SUCCEEDED" } })).toBe(50);
  console.log(
    `[bench] fan-out of 1 event to 50 endpoints + 50 signed deliveries to a local receiver (serial, under @inngest/test): ${elapsed.toFixed(0)} ms (${(elapsed / 50).toFixed(1)} ms per delivery)`,
  );
});
