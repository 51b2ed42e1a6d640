// Replays through the API (docs/api-contract.md §6.10): the dry-run count, what "failed" and "missing" take, the
// refusals (over 10,000 matches, a running replay, a disabled endpoint, a since before the retention), cancelling, and
// the run itself under @inngest/test against a real receiver on 127.0.0.1: signed with the current secret, marked as a
// replay in the attempt log, never counted towards disabling the endpoint, and audited.
process.env.WEBHOOKS_ALLOW_LOOPBACK = "true";

import { InngestTestEngine } from "@inngest/test";
import { afterAll, beforeAll, beforeEach, expect, it } from "vitest";
import { inngest } from "../../../inngest/client";
import { replayWebhooksFunction } from "../../../inngest/functions/replay-webhooks";
import { sweepOutboxFunction } from "../../../inngest/functions/sweep-outbox";
import { prisma } from "../../../server/db/transaction";
import { redeliver } from "../../../server/webhooks/deliveries";
import { rotateWebhookSecret } from "../../../server/webhooks/endpoints";
import { sendReplayStep } from "../../../server/webhooks/replays";
import { client, createKey, createTestOrg, startApi, type TestServer } from "../../helpers/api";
import { orgWithRoles } from "../../helpers/members";
import {
  type FakeInngest,
  type Receiver,
  startFakeInngest,
  startReceiver,
  verifyServiceSignature,
} from "../../helpers/receiver";
import { attemptAll, createAccounts, deliveryStates, fanOutPending } from "../../helpers/webhook-ops";

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

const HOUR = 3_600_000;
const sinceAnHourAgo = () => new Date(Date.now() - HOUR).toISOString();

/** An organisation, an endpoint on the receiver (under `tag`) and `failed` deliveries that failed all their attempts. */
async function endpointWithFailures(tag: string, failed: number, events: string[] = ["*"]) {
  const org = await createTestOrg();
  const api = client(server.url, org.key);
  const created = await api("POST", "/webhook-endpoints", { url: `${receiver.url}?${tag}`, events });
  expect(created.status).toBe(201);
  receiver.reply(() => ({ status: 500, body: "down" }));
  await createAccounts(api, failed, tag);
  const deliveries = await fanOutPending(org.orgId);
  await attemptAll(deliveries, 4);
  receiver.reply(() => ({ status: 200, body: "ok" }));
  return { org, api, endpoint: created.body.data as { id: string; secret: string }, deliveries };
}

/** Plays Inngest for one replay: the requested run under a new InngestTestEngine (its steps run for real). */
async function runReplay(replayId: string, times = 1) {
  const requested = fakeInngest.events.filter(
    (event) => event.name === "crm/webhook.replay.requested" && event.data.replayId === replayId,
  );
  expect(requested).toHaveLength(times);
  const engine = new InngestTestEngine({
    function: replayWebhooksFunction,
    events: [{ name: "crm/webhook.replay.requested", data: requested[0]?.data ?? {} }],
  });
  const { result, error } = await engine.execute();
  expect(error).toBeUndefined();
  return result as { done: boolean; sent: number; status: string };
}

const received = (tag: string) => receiver.requests.filter((request) => request.path === `/hook?${tag}`);

it("counts with a dry run (200), then replays what failed (202) once per event, signed with the current secret, marked as a replay, without counting against the endpoint", async () => {
  const { org, api, endpoint, deliveries } = await endpointWithFailures("replay", 3);
  expect(await prisma().webhookEndpoint.findUniqueOrThrow({ where: { id: endpoint.id } })).toMatchObject({
    enabled: true,
    consecutiveFailures: 3,
  });
  const path = `/webhook-endpoints/${endpoint.id}/replays`;
  const dry = await api("POST", path, { since: sinceAnHourAgo(), dryRun: true });
  expect(dry.status).toBe(200);
  expect(dry.body.data).toEqual({
    dryRun: true,
    matched: 3,
    since: expect.any(String),
    until: expect.any(String),
  });
  expect(await prisma().webhookReplay.count({ where: { endpointId: endpoint.id } })).toBe(0);

  const { secret } = await rotateWebhookSecret(org.orgId, endpoint.id);
  receiver.reply(() => ({ status: 503, body: "still down" }));
  const before = received("replay").length;
  const started = await api("POST", path, { since: sinceAnHourAgo() });
  expect(started.status).toBe(202);
  expect(started.body.data).toMatchObject({
    id: expect.stringMatching(/^whr_[0-9a-f]{24}$/),
    endpointId: endpoint.id,
    status: "running",
    statuses: ["failed"],
    events: null,
    matched: 3,
    sent: 0,
    succeeded: 0,
    finishedAt: null,
  });
  const replayId = started.body.data.id as string;
  expect(await runReplay(replayId)).toMatchObject({ done: true, sent: 3, status: "completed" });

  // One request per failed delivery, oldest event first, each signed with the secret current when it was sent.
  const sent = received("replay").slice(before);
  const eventIds = (
    await prisma().webhookDelivery.findMany({
      where: { id: { in: deliveries.map((d) => d.deliveryId) } },
      select: { eventId: true, event: { select: { sequence: true } } },
    })
  )
    .sort((a, b) => Number(a.event.sequence - b.event.sequence))
    .map((row) => row.eventId);
  expect(sent.map((request) => request.headers["service-event-id"])).toEqual(eventIds);
  for (const request of sent)
    expect(verifyServiceSignature(request.headers["service-signature"] as string, request.body, secret)).toBe(true);

  // The receiver still failed: the replay's failures do not count towards disabling the endpoint.
  expect(await prisma().webhookEndpoint.findUniqueOrThrow({ where: { id: endpoint.id } })).toMatchObject({
    enabled: true,
    consecutiveFailures: 3,
  });
  const replay = await api("GET", `${path}/${replayId}`);
  expect(replay.body.data).toMatchObject({ status: "completed", matched: 3, sent: 3, succeeded: 0 });
  expect(replay.body.data.finishedAt).toEqual(expect.any(String));

  // The attempt log marks them as the replay's.
  const log = await api("GET", `/webhook-endpoints/${endpoint.id}/deliveries?limit=10`);
  const replayed = log.body.data.filter((attempt: { trigger: string }) => attempt.trigger === "replay");
  expect(replayed).toHaveLength(3);
  for (const attempt of replayed) expect(attempt).toMatchObject({ replayId, success: false, attempt: 2 });
  expect(log.body.data.filter((attempt: { trigger: string }) => attempt.trigger === "scheduled")).toHaveLength(3);

  // Listed, newest first; and in the settings audit trail with the key as actor.
  const listed = await api("GET", path);
  expect(listed.body.data.map((row: { id: string }) => row.id)).toEqual([replayId]);
  const audit = await prisma().settingsAuditEntry.findMany({
    where: { orgId: org.orgId, action: "webhookReplay.started" },
  });
  expect(audit).toHaveLength(1);
  expect(audit[0]).toMatchObject({
    actorUserId: null,
    actorApiKeyId: org.apiKeyId,
    actorEmail: expect.stringMatching(/^API key msp_live_\w+… "test"$/),
    target: `endpoint ${receiver.url}?replay`,
    details: expect.objectContaining({ replayId, matched: 3, statuses: "failed" }),
  });

  // Now the receiver is back: replaying again sends the same three and they succeed; a third replay finds nothing.
  receiver.reply(() => ({ status: 200, body: "ok" }));
  const again = await api("POST", path, { since: sinceAnHourAgo() });
  expect(again.body.data.matched).toBe(3);
  expect(await runReplay(again.body.data.id)).toMatchObject({ done: true, sent: 3, status: "completed" });
  expect(await deliveryStates(endpoint.id)).toEqual({ SUCCEEDED: 3 });
  expect(await prisma().webhookEndpoint.findUniqueOrThrow({ where: { id: endpoint.id } })).toMatchObject({
    consecutiveFailures: 0,
  });
  const none = await api("POST", path, { since: sinceAnHourAgo() });
  expect(none.status).toBe(202);
  expect(none.body.data).toMatchObject({ matched: 0, sent: 0, status: "completed" });
});

it("failed means failed with no later success: a delivery redelivered successfully is not replayed", async () => {
  const { org, api, endpoint, deliveries } = await endpointWithFailures("later", 2);
  const [first] = deliveries;
  if (!first) throw new Error("no delivery");
  expect((await redeliver(org.orgId, first.deliveryId)).success).toBe(true);
  const dry = await api("POST", `/webhook-endpoints/${endpoint.id}/replays`, { since: sinceAnHourAgo(), dryRun: true });
  expect(dry.body.data.matched).toBe(1);
  // The window and the events filter narrow it further.
  const later = await api("POST", `/webhook-endpoints/${endpoint.id}/replays`, {
    since: new Date(Date.now() + 1_000).toISOString(),
    until: new Date(Date.now() + 60_000).toISOString(),
    dryRun: true,
  });
  expect(later.body.data.matched).toBe(0);
  const deals = await api("POST", `/webhook-endpoints/${endpoint.id}/replays`, {
    since: sinceAnHourAgo(),
    events: ["deal.*"],
    dryRun: true,
  });
  expect(deals.body.data.matched).toBe(0);
  const accounts = await api("POST", `/webhook-endpoints/${endpoint.id}/replays`, {
    since: sinceAnHourAgo(),
    events: ["account.created"],
    dryRun: true,
  });
  expect(accounts.body.data.matched).toBe(1);
});

it("missing sends the events of the time the endpoint was disabled, which failed alone leaves out", async () => {
  const org = await createTestOrg();
  const api = client(server.url, org.key);
  const endpoint = (await api("POST", "/webhook-endpoints", { url: `${receiver.url}?missing`, events: ["account.*"] }))
    .body.data;
  await api("PATCH", `/webhook-endpoints/${endpoint.id}`, { enabled: false });
  const ids = await createAccounts(api, 2, "Missed");
  await api("POST", "/deals", { name: "Not subscribed", accountId: ids[0] });
  expect(await fanOutPending(org.orgId)).toEqual([]);
  await api("PATCH", `/webhook-endpoints/${endpoint.id}`, { enabled: true });
  const path = `/webhook-endpoints/${endpoint.id}/replays`;
  const failedOnly = await api("POST", path, { since: sinceAnHourAgo(), dryRun: true });
  expect(failedOnly.body.data.matched).toBe(0);
  const dry = await api("POST", path, { since: sinceAnHourAgo(), statuses: ["failed", "missing"], dryRun: true });
  expect(dry.body.data.matched).toBe(2);

  const started = await api("POST", path, { since: sinceAnHourAgo(), statuses: ["failed", "missing"] });
  expect(started.status).toBe(202);
  expect(await runReplay(started.body.data.id)).toMatchObject({ done: true, sent: 2 });
  const got = received("missing");
  expect(got.map((request) => JSON.parse(request.body).data.id)).toEqual(ids);
  expect(got.every((request) => request.headers["service-event"] === "account.created")).toBe(true);
  // Each now has its delivery, succeeded: nothing is missing any more.
  expect(await deliveryStates(endpoint.id)).toEqual({ SUCCEEDED: 2 });
  const after = await api("POST", path, { since: sinceAnHourAgo(), statuses: ["failed", "missing"], dryRun: true });
  expect(after.body.data.matched).toBe(0);
});

it("the settings' count names the failed test deliveries a replay leaves out, so a window of only those is explained", async () => {
  const { orgId, members } = await orgWithRoles();
  const { caller } = members.developer;
  const { endpoint } = await caller.webhooks.create({ url: `${receiver.url}?tests`, events: ["*"] });
  receiver.reply(() => ({ status: 500, body: "down" }));
  expect(await caller.webhooks.sendTest({ id: endpoint.id })).toMatchObject({ success: false, responseStatus: 500 });
  expect(await caller.webhooks.sendTest({ id: endpoint.id })).toMatchObject({ success: false, responseStatus: 500 });
  const window = { id: endpoint.id, since: sinceAnHourAgo() };
  expect(await caller.webhooks.replayCount(window)).toMatchObject({ dryRun: true, matched: 0, testFailed: 2 });

  // A live failure is what a replay sends; the test ones are still named beside it.
  const key = await createKey(orgId, ["accounts:write"]);
  await createAccounts(client(server.url, key), 1, "live");
  await attemptAll(await fanOutPending(orgId), 4);
  expect(await caller.webhooks.replayCount(window)).toMatchObject({ matched: 1, testFailed: 2 });
  // Only events it never got: failed test deliveries are not the question.
  expect(await caller.webhooks.replayCount({ ...window, statuses: ["missing"] })).toMatchObject({ testFailed: 0 });
});

it("refuses a replay of a disabled endpoint and a second while one runs (409), and since before the retention (422); cancel stops it", async () => {
  const { org, api, endpoint } = await endpointWithFailures("refuse", 2);
  const path = `/webhook-endpoints/${endpoint.id}/replays`;
  const old = await api("POST", path, { since: new Date(Date.now() - 31 * 24 * HOUR).toISOString() });
  expect(old.status).toBe(422);
  expect(old.body.error.details).toEqual([
    { path: ["since"], message: expect.stringMatching(/^must be within the events' retention of 30 days/) },
  ]);
  const reversed = await api("POST", path, {
    since: sinceAnHourAgo(),
    until: new Date(Date.now() - 2 * HOUR).toISOString(),
  });
  expect(reversed.status).toBe(422);
  expect(reversed.body.error.details[0].path).toEqual(["until"]);

  // A test key sends no webhooks: it may count, not replay.
  const testKey = client(server.url, await createKey(org.orgId, ["webhooks:write"], true));
  expect((await testKey("POST", path, { since: sinceAnHourAgo(), dryRun: true })).body.data.matched).toBe(2);
  const byTestKey = await testKey("POST", path, { since: sinceAnHourAgo() });
  expect(byTestKey.status).toBe(403);
  expect(byTestKey.body.error.code).toBe("insufficient_scope");

  const first = await api("POST", path, { since: sinceAnHourAgo() });
  expect(first.status).toBe(202);
  const second = await api("POST", path, { since: sinceAnHourAgo() });
  expect(second.status).toBe(409);
  expect(second.body.error.code).toBe("conflict");
  expect(second.body.error.message).toContain(first.body.data.id);

  const cancelled = await api("POST", `${path}/${first.body.data.id}/cancel`);
  expect(cancelled.status).toBe(200);
  expect(cancelled.body.data).toMatchObject({ status: "cancelled", sent: 0, matched: 2 });
  expect(cancelled.body.data.finishedAt).toEqual(expect.any(String));
  // Cancelling again answers it as it is; the run that was requested sends nothing.
  expect((await api("POST", `${path}/${first.body.data.id}/cancel`)).body.data.status).toBe("cancelled");
  const before = received("refuse").length;
  expect(await sendReplayStep(first.body.data.id)).toMatchObject({ done: true, sent: 0, status: "cancelled" });
  expect(received("refuse")).toHaveLength(before);
  const audit = await prisma().settingsAuditEntry.findMany({
    where: { orgId: org.orgId, action: "webhookReplay.cancelled" },
  });
  expect(audit).toHaveLength(1);

  await api("PATCH", `/webhook-endpoints/${endpoint.id}`, { enabled: false });
  const disabled = await api("POST", path, { since: sinceAnHourAgo() });
  expect(disabled.status).toBe(409);
  expect(disabled.body.error.message).toMatch(/disabled/);
  // A dry run still counts while it is disabled, to see what enabling would let through.
  expect((await api("POST", path, { since: sinceAnHourAgo(), dryRun: true })).body.data.matched).toBe(2);

  // Another organisation's endpoint and replay are not found.
  const stranger = client(server.url, (await createTestOrg()).key);
  expect((await stranger("POST", path, { since: sinceAnHourAgo(), dryRun: true })).status).toBe(404);
  expect((await stranger("GET", `${path}/${first.body.data.id}`)).status).toBe(404);
});

it("refuses more than 10,000 matches with 422 and the count beyond", { timeout: 60_000 }, async () => {
  const org = await createTestOrg();
  const api = client(server.url, org.key);
  const endpoint = (await api("POST", "/webhook-endpoints", { url: `${receiver.url}?many`, events: ["*"] })).body.data;
  // 10,001 failed deliveries, seeded with SQL: events numbered 1…10,001 of a new organisation, each with a FAILED delivery.
  await prisma().$executeRaw`
    INSERT INTO "Event" ("id", "orgId", "name", "data", "createdAt", "fannedOutAt", "sequence", "resource", "resourceId")
    SELECT 'evt_seed_' || n, ${org.orgId}, 'account.created', '{}'::jsonb, now() AT TIME ZONE 'UTC' - interval '10 minutes',
           now() AT TIME ZONE 'UTC', n, 'account', 'acc_' || n
    FROM generate_series(1, 10001) AS n`;
  await prisma().$executeRaw`
    INSERT INTO "WebhookDelivery" ("id", "orgId", "endpointId", "eventId", "status", "attemptCount", "createdAt", "updatedAt")
    SELECT 'whd_seed_' || n, ${org.orgId}, ${endpoint.id}, 'evt_seed_' || n, 'FAILED', 5, now() AT TIME ZONE 'UTC',
           now() AT TIME ZONE 'UTC'
    FROM generate_series(1, 10001) AS n`;
  // What autovacuum does after such a load within the minute; without it the planner still believes the tables small.
  await prisma().$executeRaw`ANALYZE "Event", "WebhookDelivery"`;
  const path = `/webhook-endpoints/${endpoint.id}/replays`;
  const dry = await api("POST", path, { since: sinceAnHourAgo(), dryRun: true });
  expect(dry.body.data.matched).toBe(10_001);
  const refused = await api("POST", path, { since: sinceAnHourAgo() });
  expect(refused.status).toBe(422);
  expect(refused.body.error.details).toEqual([
    {
      path: ["since"],
      message: expect.stringMatching(/^matches 10,001 deliveries, 1 more than the 10,000 a replay sends/),
    },
  ]);
  expect(await prisma().webhookReplay.count({ where: { endpointId: endpoint.id } })).toBe(0);
  // Narrowed to 10,000, it is accepted with every item fixed.
  await prisma().webhookDelivery.update({ where: { id: "whd_seed_1" }, data: { status: "SUCCEEDED" } });
  const accepted = await api("POST", path, { since: sinceAnHourAgo() });
  expect(accepted.status).toBe(202);
  expect(accepted.body.data.matched).toBe(10_000);
  expect(await prisma().webhookReplayItem.count({ where: { replayId: accepted.body.data.id } })).toBe(10_000);
  await api("POST", `${path}/${accepted.body.data.id}/cancel`);
});

it("stops a replay whose endpoint is disabled meanwhile", async () => {
  const { api, endpoint } = await endpointWithFailures("stop", 2);
  const started = await api("POST", `/webhook-endpoints/${endpoint.id}/replays`, { since: sinceAnHourAgo() });
  await api("PATCH", `/webhook-endpoints/${endpoint.id}`, { enabled: false });
  const before = received("stop").length;
  expect(await sendReplayStep(started.body.data.id)).toMatchObject({ done: true, sent: 0, status: "stopped" });
  expect(received("stop")).toHaveLength(before);
  const replay = await api("GET", `/webhook-endpoints/${endpoint.id}/replays/${started.body.data.id}`);
  expect(replay.body.data).toMatchObject({
    status: "stopped",
    reason: "the endpoint was disabled (disabled by a user)",
  });
});

it("the sweeper requests a running replay again once no run has moved it for 2 minutes", async () => {
  const { api, endpoint } = await endpointWithFailures("lost", 2);
  const started = await api("POST", `/webhook-endpoints/${endpoint.id}/replays`, { since: sinceAnHourAgo() });
  const replayId = started.body.data.id as string;
  const requests = () =>
    fakeInngest.events.filter(
      (event) => event.name === "crm/webhook.replay.requested" && event.data.replayId === replayId,
    );
  expect(requests()).toHaveLength(1);
  // A sweep now leaves it: its run may still be on its way.
  expect((await new InngestTestEngine({ function: sweepOutboxFunction }).execute()).error).toBeUndefined();
  expect(requests()).toHaveLength(1);
  await prisma().$executeRaw`
    UPDATE "WebhookReplay" SET "updatedAt" = "updatedAt" - interval '3 minutes' WHERE "id" = ${replayId}`;
  expect((await new InngestTestEngine({ function: sweepOutboxFunction }).execute()).error).toBeUndefined();
  expect(requests()).toHaveLength(2);
  expect(requests()[1]?.id).not.toBe(replayId);
  // Requested once: the next sweep waits another 2 minutes. The run it asked for sends the replay.
  await new InngestTestEngine({ function: sweepOutboxFunction }).execute();
  expect(requests()).toHaveLength(2);
  expect(await runReplay(replayId, 2)).toMatchObject({ done: true, sent: 2, status: "completed" });
  expect(received("lost").filter((request) => request.headers["service-event"] === "account.created").length).toBe(4);
});
