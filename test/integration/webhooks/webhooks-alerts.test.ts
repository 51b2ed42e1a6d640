// Being told when webhooks break (docs/api-contract.md §6.11): an endpoint the service disables after failures records
// `webhook_endpoint.disabled` (in the feed and delivered to subscribers) and mails the organisation's owners and admins
// once through SMTP (a local smtp-server sink), with a banner in the settings until it is enabled again; events
// waiting for the worker longer than 15 minutes do the same until the worker takes them.
process.env.WEBHOOKS_ALLOW_LOOPBACK = "true";

import { afterAll, beforeAll, beforeEach, expect, it } from "vitest";
import { prisma } from "../../../server/db/transaction";
import { checkWebhookAlerts } from "../../../server/webhooks/alerts";
import { client, createKey, startApi, type TestServer } from "../../helpers/api";
import { decoded, type MailSink, startMailSink } from "../../helpers/mail-sink";
import { orgWithRoles } from "../../helpers/members";
import { type Receiver, startReceiver } from "../../helpers/receiver";
import { attemptAll, createAccounts, fanOutPending } from "../../helpers/webhook-ops";

let sink: MailSink;
let server: TestServer;
let receiver: Receiver;

beforeAll(async () => {
  sink = await startMailSink();
  server = await startApi();
  receiver = await startReceiver();
});
afterAll(async () => {
  await Promise.all([sink.close(), server.close(), receiver.close()]);
});
beforeEach(() => {
  receiver.reply(() => ({ status: 200, body: "ok" }));
});

/** An organisation with a member of each role and a full-scope key. */
async function team() {
  const org = await orgWithRoles();
  const api = client(server.url, await createKey(org.orgId, ["webhooks:write", "accounts:write", "events:read"]));
  return { ...org, api };
}

const mailsTo = (email: string) => sink.inbox.filter((mail) => mail.to.includes(email));

it("disabling after 5 failed deliveries records webhook_endpoint.disabled, mails owners and admins once and shows a banner until enabled", async () => {
  const { orgId, members, api } = await team();
  const failing = (await api("POST", "/webhook-endpoints", { url: `${receiver.url}?broken`, events: ["account.*"] }))
    .body.data;
  const watcher = (
    await api("POST", "/webhook-endpoints", { url: `${receiver.url}?watcher`, events: ["webhook_endpoint.disabled"] })
  ).body.data;
  receiver.reply((request) => (request.path === "/hook?broken" ? { status: 502 } : { status: 200 }));
  await createAccounts(api, 5, "Doomed");
  const deliveries = await fanOutPending(orgId);
  expect(deliveries).toHaveLength(5);
  await attemptAll(deliveries, 4);

  const endpoint = (await api("GET", `/webhook-endpoints/${failing.id}`)).body.data;
  expect(endpoint).toMatchObject({ enabled: false, consecutiveFailures: 5 });
  expect(endpoint.disabledReason).toBe("5 consecutive deliveries failed after 5 attempts each (last: HTTP 502)");

  // The event of its own, in the feed: the endpoint as its GET answers with its URL's origin only (the path and query
  // may hold the receiver's credentials, and the event reaches every subscriber and every events:read key), what
  // changed and the system as actor.
  const { url, ...withoutUrl } = endpoint;
  const origin = new URL(url).origin;
  const reader = client(server.url, await createKey(orgId, ["events:read"]));
  const feed = await reader("GET", "/events?types=webhook_endpoint.disabled");
  expect(feed.body.data).toHaveLength(1);
  expect(feed.body.data[0]).toMatchObject({
    event: "webhook_endpoint.disabled",
    resource: "webhook_endpoint",
    actor: { type: "system" },
    data: { ...withoutUrl, origin },
    changedFields: ["enabled", "disabledReason", "disabledAt"],
    previous: { enabled: true, disabledReason: null, disabledAt: null },
  });
  expect(feed.body.data[0].data).not.toHaveProperty("url");
  expect(JSON.stringify(feed.body.data[0])).not.toMatch(/\/hook|broken/);
  // And delivered to the endpoint subscribed to it.
  const [toWatcher] = await fanOutPending(orgId);
  expect(toWatcher?.endpointId).toBe(watcher.id);
  await attemptAll(toWatcher ? [toWatcher] : [], 0);
  const got = receiver.requests.filter((request) => request.path === "/hook?watcher");
  expect(got).toHaveLength(1);
  expect(JSON.parse(got[0]?.body ?? "{}")).toMatchObject({
    event: "webhook_endpoint.disabled",
    data: { id: failing.id, origin },
  });
  expect(got[0]?.body).not.toMatch(/\/hook|broken/);

  // One mail, to the owner and the admin only, naming the endpoint and where to fix it.
  expect(mailsTo(members.owner.email)).toHaveLength(1);
  expect(mailsTo(members.admin.email)).toHaveLength(1);
  expect(mailsTo(members.developer.email)).toHaveLength(0);
  expect(mailsTo(members.viewer.email)).toHaveLength(0);
  const text = decoded(mailsTo(members.owner.email)[0]?.raw ?? "");
  expect(text).toContain("A webhook endpoint was disabled");
  expect(text).toContain(`${failing.id} (${origin}) was disabled: 5 consecutive deliveries failed`);
  expect(text).not.toContain("?broken");
  expect(text).toContain(`/settings/webhooks/${failing.id}`);

  // The banner: every member sees the open alert; checking again (every minute) mails nothing more.
  const alerts = await members.viewer.caller.webhooks.alerts();
  expect(alerts).toEqual([
    expect.objectContaining({
      kind: "endpoint_disabled",
      endpointId: failing.id,
      message: expect.stringContaining("was disabled"),
    }),
  ]);
  await checkWebhookAlerts();
  expect(mailsTo(members.owner.email)).toHaveLength(1);

  // Enabled again: the alert is resolved and the banner goes.
  await api("PATCH", `/webhook-endpoints/${failing.id}`, { enabled: true });
  expect(await members.viewer.caller.webhooks.alerts()).toEqual([]);
  const row = await prisma().webhookAlert.findFirstOrThrow({ where: { orgId, endpointId: failing.id } });
  expect(row).toMatchObject({ resolvedAt: expect.any(Date), mailResult: "sent", openKey: null });
});

it("a 410 Gone disables at once, with its event and its one mail", async () => {
  const { orgId, members, api } = await team();
  const gone = (await api("POST", "/webhook-endpoints", { url: `${receiver.url}?gone`, events: ["*"] })).body.data;
  receiver.reply(() => ({ status: 410 }));
  await createAccounts(api, 2, "Gone");
  await attemptAll(await fanOutPending(orgId), 0);
  expect((await api("GET", `/webhook-endpoints/${gone.id}`)).body.data).toMatchObject({
    enabled: false,
    disabledReason: "the receiver answered 410 Gone",
  });
  expect((await api("GET", "/events?types=webhook_endpoint.disabled")).body.data).toHaveLength(1);
  expect(mailsTo(members.owner.email)).toHaveLength(1);
  expect(decoded(mailsTo(members.admin.email)[0]?.raw ?? "")).toContain("the receiver answered 410 Gone");
});

it("events waiting for the worker over 15 minutes open one alert and one mail, resolved once they are taken", async () => {
  const { orgId, members, api } = await team();
  await api("POST", "/webhook-endpoints", { url: `${receiver.url}?late`, events: ["*"] });
  await createAccounts(api, 2, "Waiting");
  // Under 15 minutes: nothing yet.
  await checkWebhookAlerts();
  expect(await members.owner.caller.webhooks.alerts()).toEqual([]);
  // Recorded 20 minutes ago and still not fanned out.
  await prisma().$executeRaw`
    UPDATE "Event" SET "createdAt" = "createdAt" - interval '20 minutes' WHERE "orgId" = ${orgId}`;
  const first = await checkWebhookAlerts();
  expect(first.opened).toBeGreaterThanOrEqual(1);
  const [alert] = await members.admin.caller.webhooks.alerts();
  expect(alert).toMatchObject({ kind: "worker_backlog", endpointId: null });
  expect(alert?.message).toMatch(
    /^Webhook events have been waiting for the worker for 20 minutes \(2 older than 15 minutes\)/,
  );
  expect(mailsTo(members.owner.email)).toHaveLength(1);
  expect(decoded(mailsTo(members.owner.email)[0]?.raw ?? "")).toContain("Webhook events are waiting for the worker");
  // Checked again by another process: still one alert, still one mail.
  await Promise.all([checkWebhookAlerts(), checkWebhookAlerts()]);
  expect(await prisma().webhookAlert.count({ where: { orgId } })).toBe(1);
  expect(mailsTo(members.owner.email)).toHaveLength(1);
  // The worker takes them: resolved, the banner goes.
  await fanOutPending(orgId);
  await checkWebhookAlerts();
  expect(await members.owner.caller.webhooks.alerts()).toEqual([]);
  expect(await prisma().webhookAlert.findFirstOrThrow({ where: { orgId } })).toMatchObject({
    resolvedAt: expect.any(Date),
  });
});
