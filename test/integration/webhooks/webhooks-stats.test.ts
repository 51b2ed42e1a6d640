// What the settings show of an endpoint's deliveries (docs/architecture.md, "Webhooks and the outbox"): counts per
// bucket by state with the error rate and p95 attempt duration over the fixed and custom ranges, the deliveries list
// filtered and keyset-paged, one delivery's attempts in full (the request as sent, never the secret, and when the next
// retry runs), and each endpoint's last 24 hours in the list of endpoints, through the settings router as a member.
process.env.WEBHOOKS_ALLOW_LOOPBACK = "true";

import { TRPCError } from "@trpc/server";
import { afterAll, beforeAll, expect, it } from "vitest";
import { prisma } from "../../../server/db/transaction";
import { revealWebhookSecret } from "../../../server/webhooks/endpoints";
import { SIGNATURE_NOT_SHOWN, statsWindow } from "../../../server/webhooks/stats";
import { client, createKey, startApi, type TestServer } from "../../helpers/api";
import { orgWithRoles } from "../../helpers/members";
import { type Receiver, startReceiver } from "../../helpers/receiver";
import { attemptAll, createAccounts, fanOutPending } from "../../helpers/webhook-ops";

let server: TestServer;
let receiver: Receiver;
beforeAll(async () => {
  server = await startApi();
  receiver = await startReceiver();
});
afterAll(async () => {
  await Promise.all([server.close(), receiver.close()]);
});

it("cuts the ranges into their buckets: 24 h in 30 min, 7 d in 3 h, 30 d in 12 h, a custom range in at most 60", () => {
  const now = new Date("2026-11-24T10:17:00Z");
  const day = statsWindow("24h", now);
  expect(day).toEqual({
    from: new Date("2026-11-23T10:30:00Z"),
    to: new Date("2026-11-24T10:30:00Z"),
    bucketMs: 30 * 60_000,
  });
  const week = statsWindow("7d", now);
  expect([week.bucketMs, (week.to.getTime() - week.from.getTime()) / week.bucketMs]).toEqual([3 * 3_600_000, 56]);
  expect(week.to).toEqual(new Date("2026-11-24T12:00:00Z"));
  const month = statsWindow("30d", now);
  expect([month.bucketMs, (month.to.getTime() - month.from.getTime()) / month.bucketMs]).toEqual([12 * 3_600_000, 60]);
  const custom = statsWindow({ from: new Date("2026-11-10T08:10:00Z"), to: new Date("2026-11-20T08:00:00Z") }, now);
  expect(custom).toEqual({
    from: new Date("2026-11-10T06:00:00Z"),
    to: new Date("2026-11-20T12:00:00Z"),
    bucketMs: 6 * 3_600_000,
  });
  expect(() => statsWindow({ from: new Date("2026-11-20T00:00:00Z"), to: new Date("2026-11-10T00:00:00Z") })).toThrow(
    /must end after it starts/,
  );
});

it("counts an endpoint's deliveries by state with the error rate and p95, lists them filtered and paged, and shows one in full", async () => {
  const { orgId, members } = await orgWithRoles();
  const api = client(server.url, await createKey(orgId, ["webhooks:write", "accounts:write"]));
  const caller = members.viewer.caller.webhooks;
  const endpoint = (await api("POST", "/webhook-endpoints", { url: `${receiver.url}?stats`, events: ["account.*"] }))
    .body.data;
  const quiet = (await api("POST", "/webhook-endpoints", { url: `${receiver.url}?quiet`, events: ["deal.*"] })).body
    .data;
  // Three succeed, two fail all their attempts, one fails its first and waits for a retry.
  receiver.reply(() => ({ status: 200, body: "ok" }));
  await createAccounts(client(server.url, await createKey(orgId, ["accounts:write"])), 3, "Good");
  await attemptAll(await fanOutPending(orgId), 0);
  receiver.reply(() => ({ status: 500, body: "x".repeat(3_000) }));
  await createAccounts(api, 2, "Bad");
  await attemptAll(await fanOutPending(orgId), 4);
  await createAccounts(api, 1, "Retry");
  const [retrying] = await fanOutPending(orgId);
  await attemptAll(retrying ? [retrying] : [], 0);

  const stats = await caller.stats({ id: endpoint.id, range: "24h" });
  expect(stats.buckets).toHaveLength(48);
  expect(stats.totals).toMatchObject({
    succeeded: 3,
    failed: 2,
    pending: 1,
    filtered: 0,
    errorRate: 40,
    attempts: 6,
  });
  expect(stats.totals.p95Ms).toEqual(expect.any(Number));
  const busy = stats.buckets.filter((bucket) => bucket.succeeded + bucket.failed + bucket.pending > 0);
  expect(busy.reduce((sum, bucket) => sum + bucket.succeeded, 0)).toBe(3);
  expect(stats.buckets.filter((bucket) => bucket.errorRate === null).length).toBeGreaterThanOrEqual(46);
  expect((await caller.stats({ id: endpoint.id, range: "7d" })).buckets).toHaveLength(56);
  await expect(
    caller.stats({ id: endpoint.id, range: "custom", from: "2026-11-20T00:00:00Z", to: "2026-11-10T00:00:00Z" }),
  ).rejects.toThrow(/must end after it starts/);

  // The list: newest first, by state and event, keyset-paged with neither gaps nor repeats.
  const all = await caller.deliveryList({ id: endpoint.id, limit: 100 });
  expect(all.data.map((row) => row.status)).toEqual([
    "pending",
    "failed",
    "failed",
    "succeeded",
    "succeeded",
    "succeeded",
  ]);
  expect(all.data[0]?.lastAttempt).toMatchObject({ responseStatus: 500, success: false, trigger: "scheduled" });
  expect((await caller.deliveryList({ id: endpoint.id, status: "failed" })).data).toHaveLength(2);
  expect((await caller.deliveryList({ id: endpoint.id, event: "account.created" })).data).toHaveLength(6);
  expect((await caller.deliveryList({ id: endpoint.id, event: "account.deleted" })).data).toHaveLength(0);
  const seen: string[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < 10; page++) {
    const next = await caller.deliveryList({ id: endpoint.id, limit: 4, cursor });
    seen.push(...next.data.map((row) => row.id));
    if (!next.hasMore || !next.nextCursor) break;
    cursor = next.nextCursor;
  }
  expect(seen).toEqual(all.data.map((row) => row.id));
  await expect(caller.deliveryList({ id: endpoint.id, cursor: "whd_unknown" })).rejects.toThrow(/cursor/);

  // One delivery in full: the request as sent without any signature or secret, the answer's excerpt, the next retry.
  const pending = all.data[0];
  if (!pending) throw new Error("no delivery");
  const detail = await caller.delivery({ deliveryId: pending.id });
  const [attempt] = detail.attempts;
  expect(detail).toMatchObject({ status: "pending", url: `${receiver.url}?stats`, attemptCount: 1 });
  const sent = receiver.requests.filter((request) => request.path === "/hook?stats").at(-1);
  expect(detail.requestBody).toBe(sent?.body);
  const headers = Object.fromEntries(attempt?.requestHeaders ?? []);
  expect(headers).toMatchObject({
    "Content-Type": "application/json",
    "User-Agent": "Service-Webhooks/1.1",
    "Service-Event": "account.created",
    "Service-Event-Id": pending.eventId,
    "webhook-id": pending.eventId,
    "webhook-timestamp": sent?.headers["webhook-timestamp"],
    "Service-Signature": `t=${sent?.headers["webhook-timestamp"]},v1=${SIGNATURE_NOT_SHOWN}`,
    "Content-Length": String(Buffer.byteLength(sent?.body ?? "")),
  });
  const { secret } = await revealWebhookSecret(orgId, endpoint.id);
  const shown = JSON.stringify(detail);
  expect(shown).not.toContain(secret);
  expect(shown).not.toContain(String(sent?.headers["service-signature"]).split("v1=")[1]);
  expect(attempt).toMatchObject({ responseStatus: 500, success: false, error: "HTTP 500", trigger: "scheduled" });
  expect(attempt?.responseBody).toHaveLength(2_048);
  expect(detail.nextRetryAt?.getTime()).toBe((attempt?.startedAt.getTime() ?? 0) + (attempt?.durationMs ?? 0) + 60_000);
  const finished = await caller.delivery({ deliveryId: all.data[1]?.id ?? "" });
  expect(finished).toMatchObject({ status: "failed", nextRetryAt: null });
  // Another organisation's delivery is not found.
  const stranger = (await orgWithRoles()).members.owner.caller.webhooks;
  await expect(stranger.delivery({ deliveryId: pending.id })).rejects.toBeInstanceOf(TRPCError);

  // The list of endpoints: each one's success rate over 24 h and its last failure.
  const health = await caller.health();
  expect(health[endpoint.id]).toMatchObject({
    succeeded: 3,
    failed: 2,
    successRate: 60,
    lastFailure: { responseStatus: 500, error: "HTTP 500", at: expect.any(Date) },
  });
  expect(health[quiet.id]).toBeUndefined();
  const lastFailed = await prisma().deliveryAttempt.findFirstOrThrow({
    where: { success: false, delivery: { endpointId: endpoint.id } },
    orderBy: { startedAt: "desc" },
  });
  expect(health[endpoint.id]?.lastFailure?.at).toEqual(lastFailed.startedAt);
});
