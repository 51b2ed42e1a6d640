// The settings area's webhook API (docs/api-contract.md §6): endpoints, secrets and rotation, test events, attempt
// history and redelivery, against a real receiver on 127.0.0.1.
process.env.WEBHOOKS_ALLOW_LOOPBACK = "true";

import { afterAll, beforeAll, expect, it } from "vitest";
import { prisma } from "../../../server/db/transaction";
import { ApiError } from "../../../server/errors";
import { listDeliveryAttempts, redeliver } from "../../../server/webhooks/deliveries";
import {
  createWebhookEndpoint,
  deleteWebhookEndpoint,
  getWebhookEndpoint,
  listWebhookEndpoints,
  revealWebhookSecret,
  rotateWebhookSecret,
  sendTestEvent,
  setWebhookEndpointEnabled,
  updateWebhookEndpoint,
} from "../../../server/webhooks/endpoints";
import { createTestOrg } from "../../helpers/api";
import { type Receiver, startReceiver, verifyServiceSignature } from "../../helpers/receiver";

let receiver: Receiver;
beforeAll(async () => {
  receiver = await startReceiver();
});
afterAll(() => receiver.close());

async function apiError(promise: Promise<unknown>): Promise<ApiError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(ApiError);
  return error as ApiError;
}

it("creates an endpoint with a wh_ id and a whsec_ secret of 256 bits, and lists endpoints newest first", async () => {
  const { orgId } = await createTestOrg();
  const first = await createWebhookEndpoint(orgId, { url: receiver.url, events: ["*"] });
  const second = await createWebhookEndpoint(orgId, {
    url: "https://example.com/hooks?x=1",
    events: ["deal.closed_won", "account.created", "deal.closed_won"],
    description: "  PSA sync  ",
  });
  expect(first.endpoint).toEqual({
    id: expect.stringMatching(/^wh_[0-9a-f]{24}$/),
    url: receiver.url,
    description: null,
    events: ["*"],
    enabled: true,
    disabledReason: null,
    disabledAt: null,
    consecutiveFailures: 0,
    createdAt: expect.any(Date),
    updatedAt: expect.any(Date),
    previousSecretExpiresAt: null,
    changedFields: null,
  });
  expect(first.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
  // The Standard Webhooks key is the decoded part: 32 bytes (256 bits).
  expect(Buffer.from(first.secret.slice(6), "base64")).toHaveLength(32);
  expect(Buffer.from(first.secret.slice(6), "base64url")).toHaveLength(32);
  expect(second.endpoint).toMatchObject({ events: ["deal.closed_won", "account.created"], description: "PSA sync" });
  expect((await listWebhookEndpoints(orgId)).map((endpoint) => endpoint.id)).toEqual([
    second.endpoint.id,
    first.endpoint.id,
  ]);
  expect(await getWebhookEndpoint(orgId, first.endpoint.id)).toEqual(first.endpoint);
  expect(await revealWebhookSecret(orgId, first.endpoint.id)).toEqual({
    secret: first.secret,
    previousSecretExpiresAt: null,
  });
});

it("refuses invalid URLs and events with validation_error details", async () => {
  const { orgId } = await createTestOrg();
  const cases: Array<[{ url: string; events: string[]; description?: string }, string[][]]> = [
    [{ url: "ftp://example.com/x", events: ["*"] }, [["url"]]],
    [{ url: "/relative", events: ["*"] }, [["url"]]],
    [{ url: "http://10.1.2.3/hook", events: ["*"] }, [["url"]]],
    [{ url: "http://169.254.169.254/latest/meta-data", events: ["*"] }, [["url"]]],
    [{ url: "http://[::ffff:192.168.0.1]/", events: ["*"] }, [["url"]]],
    [{ url: "https://example.com", events: [] }, [["events"]]],
    [{ url: "https://example.com", events: ["*", "account.created"] }, [["events"]]],
    [{ url: "https://example.com", events: ["account.created", "health.updated"] }, [["events", "1"]]],
    [{ url: "https://example.com", events: ["*"], description: "x".repeat(501) }, [["description"]]],
  ];
  for (const [input, paths] of cases) {
    const error = await apiError(createWebhookEndpoint(orgId, input));
    expect(error.code, JSON.stringify(input)).toBe("validation_error");
    expect(error.status).toBe(422);
    expect(error.details?.map((detail) => detail.path)).toEqual(paths);
    // The message names every reason, so a form or a log line that shows only it still says what to fix.
    for (const detail of error.details ?? []) expect(error.message).toContain(detail.message);
  }
  expect(await listWebhookEndpoints(orgId)).toEqual([]);
});

it("names the reason of each refusal: the scheme, the private address, the unknown event", async () => {
  const { orgId } = await createTestOrg();
  const messages = await Promise.all(
    [
      { url: "ftp://example.com/x", events: ["*"] },
      { url: "http://10.1.2.3/hook", events: ["*"] },
      { url: "https://example.com", events: ["account.exploded"] },
    ].map(async (input) => (await apiError(createWebhookEndpoint(orgId, input))).message),
  );
  expect(messages[0]).toContain("must use http or https, not ftp");
  expect(messages[1]).toContain("a private or reserved address (10.1.2.3)");
  expect(messages[2]).toContain("unknown event");
});

it("updates, disables and enables an endpoint; another organisation's endpoint is not found", async () => {
  const { orgId } = await createTestOrg();
  const other = await createTestOrg();
  const { endpoint } = await createWebhookEndpoint(orgId, { url: receiver.url, events: ["*"], description: "a" });
  const updated = await updateWebhookEndpoint(orgId, endpoint.id, {
    url: "https://example.org/in",
    events: ["contact.created"],
    description: null,
  });
  expect(updated).toMatchObject({ url: "https://example.org/in", events: ["contact.created"], description: null });
  expect((await apiError(updateWebhookEndpoint(orgId, endpoint.id, { events: ["nope"] }))).status).toBe(422);

  await prisma().webhookEndpoint.update({ where: { id: endpoint.id }, data: { consecutiveFailures: 3 } });
  const disabled = await setWebhookEndpointEnabled(orgId, endpoint.id, false);
  expect(disabled).toMatchObject({
    enabled: false,
    disabledReason: "disabled by a user",
    disabledAt: expect.any(Date),
  });
  const enabled = await setWebhookEndpointEnabled(orgId, endpoint.id, true);
  expect(enabled).toMatchObject({ enabled: true, disabledReason: null, disabledAt: null, consecutiveFailures: 0 });

  const calls: Array<() => Promise<unknown>> = [
    () => getWebhookEndpoint(other.orgId, endpoint.id),
    () => revealWebhookSecret(other.orgId, endpoint.id),
    () => updateWebhookEndpoint(other.orgId, endpoint.id, { description: "x" }),
    () => setWebhookEndpointEnabled(other.orgId, endpoint.id, false),
    () => rotateWebhookSecret(other.orgId, endpoint.id),
    () => deleteWebhookEndpoint(other.orgId, endpoint.id),
    () => sendTestEvent(other.orgId, endpoint.id),
    () => listDeliveryAttempts(other.orgId, endpoint.id),
  ];
  for (const call of calls) {
    const error = await apiError(call());
    expect(error.code).toBe("not_found");
    expect(error.status).toBe(404);
  }
  expect(await getWebhookEndpoint(orgId, endpoint.id)).toMatchObject({ enabled: true, description: null });

  await deleteWebhookEndpoint(orgId, endpoint.id);
  expect((await apiError(getWebhookEndpoint(orgId, endpoint.id))).code).toBe("not_found");
});

it("sends a signed test event at once and records the attempt; rotation signs with both secrets for 24 h", async () => {
  const { orgId } = await createTestOrg();
  const { endpoint, secret } = await createWebhookEndpoint(orgId, { url: receiver.url, events: ["deal.created"] });
  const before = receiver.requests.length;
  const sent = await sendTestEvent(orgId, endpoint.id);
  expect(sent).toEqual({
    eventId: expect.stringMatching(/^evt_\d{10}_/),
    deliveryId: expect.stringMatching(/^whd_[0-9a-f]{24}$/),
    success: true,
    responseStatus: 200,
    attempt: expect.objectContaining({ event: "webhook.test", responseStatus: 200, attempt: 1 }),
  });
  const request = receiver.requests[before];
  expect(request?.headers["service-event"]).toBe("webhook.test");
  expect(request?.headers["service-event-id"]).toBe(sent.eventId);
  expect(verifyServiceSignature(request?.headers["service-signature"] as string, request?.body ?? "", secret)).toBe(
    true,
  );
  expect(JSON.parse(request?.body ?? "")).toEqual({
    id: sent.eventId,
    event: "webhook.test",
    sequence: expect.any(Number),
    timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
    orgId,
    resource: null,
    actor: { type: "system" },
    data: { message: expect.any(String), endpointId: endpoint.id },
  });
  expect(await prisma().webhookDelivery.findUnique({ where: { id: sent.deliveryId } })).toMatchObject({
    status: "SUCCEEDED",
    attemptCount: 1,
  });

  const rotated = await rotateWebhookSecret(orgId, endpoint.id);
  expect(rotated.secret).not.toBe(secret);
  const hours = (rotated.previousSecretExpiresAt.getTime() - Date.now()) / 3_600_000;
  expect(hours).toBeGreaterThan(23.9);
  expect(hours).toBeLessThanOrEqual(24);
  expect(await revealWebhookSecret(orgId, endpoint.id)).toEqual(rotated);
  expect((await getWebhookEndpoint(orgId, endpoint.id)).previousSecretExpiresAt).toEqual(
    rotated.previousSecretExpiresAt,
  );
  await sendTestEvent(orgId, endpoint.id);
  const signed = receiver.requests.at(-1);
  const header = signed?.headers["service-signature"] as string;
  expect(header).toMatch(/^t=\d+,v1=[0-9a-f]{64},v1=[0-9a-f]{64}$/);
  expect(verifyServiceSignature(header, signed?.body ?? "", rotated.secret)).toBe(true);
  expect(verifyServiceSignature(header, signed?.body ?? "", secret)).toBe(true);

  // After the 24 hours only the new secret signs.
  await prisma().webhookEndpoint.update({
    where: { id: endpoint.id },
    data: { previousSecretExpiresAt: new Date(Date.now() - 1000) },
  });
  await sendTestEvent(orgId, endpoint.id);
  const later = receiver.requests.at(-1);
  expect(later?.headers["service-signature"]).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
  expect(verifyServiceSignature(later?.headers["service-signature"] as string, later?.body ?? "", secret)).toBe(false);
  expect((await revealWebhookSecret(orgId, endpoint.id)).previousSecretExpiresAt).toBeNull();
});

it("a failed test event is recorded and does not count against the endpoint", async () => {
  const { orgId } = await createTestOrg();
  const failing = await startReceiver();
  failing.reply(() => ({ status: 503, body: "x".repeat(5_000) }));
  try {
    const { endpoint } = await createWebhookEndpoint(orgId, { url: failing.url, events: ["*"] });
    const sent = await sendTestEvent(orgId, endpoint.id);
    expect(sent).toMatchObject({ success: false, responseStatus: 503 });
    const [attempt] = await prisma().deliveryAttempt.findMany({ where: { deliveryId: sent.deliveryId } });
    expect(attempt).toMatchObject({ attempt: 1, success: false, responseStatus: 503, error: "HTTP 503" });
    expect(attempt?.responseBody).toHaveLength(2_048);
    expect(await prisma().webhookDelivery.findUnique({ where: { id: sent.deliveryId } })).toMatchObject({
      status: "FAILED",
    });
    expect(await getWebhookEndpoint(orgId, endpoint.id)).toMatchObject({ enabled: true, consecutiveFailures: 0 });
  } finally {
    await failing.close();
  }
});

it("lists attempts newest first with keyset paging, and redelivers with the same event id", async () => {
  const { orgId } = await createTestOrg();
  const other = await createTestOrg();
  const flaky = await startReceiver();
  flaky.reply((_, index) => (index === 0 ? { status: 500 } : { status: 204 }));
  try {
    const { endpoint } = await createWebhookEndpoint(orgId, { url: flaky.url, events: ["*"] });
    const failed = await sendTestEvent(orgId, endpoint.id);
    expect(failed.success).toBe(false);
    const again = await redeliver(orgId, failed.deliveryId);
    expect(again).toMatchObject({
      success: true,
      responseStatus: 204,
      attempt: { responseStatus: 204, success: true },
    });
    expect(flaky.requests.map((request) => request.headers["service-event-id"])).toEqual([
      failed.eventId,
      failed.eventId,
    ]);
    expect(await prisma().webhookDelivery.findUnique({ where: { id: failed.deliveryId } })).toMatchObject({
      status: "SUCCEEDED",
      attemptCount: 2,
    });
    const third = await sendTestEvent(orgId, endpoint.id);
    expect((await apiError(redeliver(other.orgId, failed.deliveryId))).code).toBe("not_found");

    const all = await listDeliveryAttempts(orgId, endpoint.id);
    expect(all.hasMore).toBe(false);
    expect(all.data.map((row) => [row.deliveryId, row.attempt, row.success, row.responseStatus])).toEqual([
      [third.deliveryId, 1, true, 204],
      [failed.deliveryId, 2, true, 204],
      [failed.deliveryId, 1, false, 500],
    ]);
    expect(all.data[2]).toEqual({
      attemptId: expect.stringMatching(/^\d+$/),
      deliveryId: failed.deliveryId,
      eventId: failed.eventId,
      event: "webhook.test",
      attempt: 1,
      url: flaky.url,
      responseStatus: 500,
      success: false,
      durationMs: expect.any(Number),
      error: "HTTP 500",
      startedAt: expect.any(Date),
      trigger: "test",
      replayId: null,
    });

    const page1 = await listDeliveryAttempts(orgId, endpoint.id, { limit: 2 });
    expect(page1.data.map((row) => row.attemptId)).toEqual(all.data.slice(0, 2).map((row) => row.attemptId));
    expect(page1).toMatchObject({ hasMore: true, nextCursor: String(page1.data[1]?.attemptId) });
    const page2 = await listDeliveryAttempts(orgId, endpoint.id, { limit: 2, cursor: page1.nextCursor });
    expect(page2).toEqual({
      data: [all.data[2]],
      hasMore: false,
      nextCursor: String(all.data[2]?.attemptId),
    });

    expect((await apiError(listDeliveryAttempts(orgId, endpoint.id, { cursor: "abc" }))).code).toBe("bad_request");
    expect((await apiError(listDeliveryAttempts(orgId, endpoint.id, { limit: 101 }))).code).toBe("validation_error");
  } finally {
    await flaky.close();
  }
});
