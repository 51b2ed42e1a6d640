// Webhook endpoints, their deliveries and redelivery as API resources (docs/api-contract.md §4.11), and deliveries a
// Standard Webhooks library verifies, against a real receiver on 127.0.0.1.
process.env.WEBHOOKS_ALLOW_LOOPBACK = "true";

import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import path from "node:path";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { prisma } from "../../../server/db/transaction";
import { client, createKey, createTestOrg, startApi, type TestServer } from "../../helpers/api";
import { orgWithRoles } from "../../helpers/members";
import { type Receiver, startReceiver, verifyServiceSignature } from "../../helpers/receiver";

let server: TestServer;
let receiver: Receiver;
beforeAll(async () => {
  server = await startApi();
  receiver = await startReceiver();
});
afterAll(async () => {
  await server.close();
  await receiver.close();
});

/** The Standard Webhooks headers of a received request, as the library wants them. */
function standardHeaders(headers: Record<string, string | string[] | undefined>): Record<string, string> {
  return {
    "webhook-id": String(headers["webhook-id"]),
    "webhook-timestamp": String(headers["webhook-timestamp"]),
    "webhook-signature": String(headers["webhook-signature"]),
  };
}

describe("webhook endpoints through the API", () => {
  it("keeps an organisation to 100 endpoints, so the one-page list stays within its documented bound", async () => {
    const org = await createTestOrg();
    const api = client(server.url, org.key);
    await prisma().webhookEndpoint.createMany({
      data: Array.from({ length: 99 }, (_, i) => ({
        id: `wh_${String(i).padStart(24, "0")}`,
        orgId: org.orgId,
        url: `${receiver.url}/${i}`,
        events: ["*"],
        secret: "whsec_c2VjcmV0",
      })),
    });
    const concurrent = await Promise.all(
      [1, 2, 3].map((n) => api("POST", "/webhook-endpoints", { url: `${receiver.url}/extra-${n}`, events: ["*"] })),
    );
    expect(concurrent.map((res) => res.status).sort()).toEqual([201, 422, 422]);
    const refused = concurrent.find((res) => res.status === 422);
    expect(refused?.body.error).toMatchObject({
      code: "validation_error",
      message: "An organisation has at most 100 webhook endpoints; delete one to add another",
    });
    const list = await api("GET", "/webhook-endpoints");
    expect(list.body.data).toHaveLength(100);
    expect(list.body).toMatchObject({ hasMore: false, nextCursor: null });
  });

  it("creates, reads, updates and deletes an endpoint, showing the secret once", async () => {
    const org = await createTestOrg();
    const api = client(server.url, org.key);
    const created = await api("POST", "/webhook-endpoints", {
      url: receiver.url,
      events: ["account.created", "deal.closed_won"],
      description: "PSA",
    });
    expect(created.status).toBe(201);
    expect(created.body.data).toMatchObject({
      id: expect.stringMatching(/^wh_[0-9a-f]{24}$/),
      url: receiver.url,
      events: ["account.created", "deal.closed_won"],
      description: "PSA",
      enabled: true,
      secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]{43}=$/),
    });
    const id = created.body.data.id;
    const read = await api("GET", `/webhook-endpoints/${id}`);
    expect(read.status).toBe(200);
    expect(read.body.data.secret).toBeUndefined();
    expect((await api("GET", "/webhook-endpoints")).body).toMatchObject({
      data: [{ id }],
      hasMore: false,
      nextCursor: null,
    });

    const updated = await api("PATCH", `/webhook-endpoints/${id}`, { events: ["*"], enabled: false });
    expect(updated.body.data).toMatchObject({ events: ["*"], enabled: false, disabledReason: "disabled by a user" });
    const enabled = await api("PATCH", `/webhook-endpoints/${id}`, { enabled: true, description: null });
    expect(enabled.body.data).toMatchObject({ enabled: true, disabledReason: null, description: null });

    expect((await api("DELETE", `/webhook-endpoints/${id}`)).body.data).toEqual({ id, deleted: true });
    expect((await api("GET", `/webhook-endpoints/${id}`)).status).toBe(404);
  });

  it("refuses what the settings page refuses, naming the reason, and needs the webhook scopes", async () => {
    const org = await createTestOrg();
    const api = client(server.url, org.key);
    const privateAddress = await api("POST", "/webhook-endpoints", { url: "http://10.0.0.5/hook", events: ["*"] });
    expect(privateAddress.status).toBe(422);
    expect(privateAddress.body.error.details).toEqual([
      { path: ["url"], message: expect.stringContaining("10.0.0.5") },
    ]);
    const scheme = await api("POST", "/webhook-endpoints", { url: "ftp://example.com/x", events: ["*"] });
    expect(scheme.body.error.details[0].message).toMatch(/http or https, not ftp/);
    const unknown = await api("POST", "/webhook-endpoints", { url: receiver.url, events: ["account.exploded"] });
    expect(unknown.status).toBe(422);
    expect(unknown.body.error.details).toEqual([
      { path: ["events", "0"], message: expect.stringMatching(/^unknown event; expected one of account\.created/) },
    ]);
    // An empty list names the event names it could have held, not a document the caller cannot open.
    const empty = await api("POST", "/webhook-endpoints", { url: receiver.url, events: [] });
    expect(empty.status).toBe(422);
    expect(empty.body.error.details).toEqual([
      {
        path: ["events"],
        message: expect.stringMatching(
          /^must be a non-empty list of event names \(account\.created, .*\), or exactly \["\*"\]$/,
        ),
      },
    ]);

    const reader = client(server.url, await createKey(org.orgId, ["webhooks:read"]));
    expect((await reader("GET", "/webhook-endpoints")).status).toBe(200);
    const refused = await reader("POST", "/webhook-endpoints", { url: receiver.url, events: ["*"] });
    expect(refused.status).toBe(403);
    expect(refused.body.error.code).toBe("insufficient_scope");

    const mine = (await api("POST", "/webhook-endpoints", { url: receiver.url, events: ["*"] })).body.data.id;
    const stranger = client(server.url, (await createTestOrg()).key);
    expect((await stranger("GET", `/webhook-endpoints/${mine}`)).status).toBe(404);
    expect((await stranger("POST", `/webhook-endpoints/${mine}/test`)).status).toBe(404);
  });

  it("sends a test event answered with its attempt, verifiable with the contract's and Standard Webhooks' schemes", async () => {
    const org = await createTestOrg();
    const api = client(server.url, org.key);
    const created = (await api("POST", "/webhook-endpoints", { url: receiver.url, events: ["*"] })).body.data;
    const before = receiver.requests.length;
    const sent = await api("POST", `/webhook-endpoints/${created.id}/test`);
    expect(sent.status).toBe(200);
    expect(sent.body.data).toMatchObject({
      eventId: expect.stringMatching(/^evt_/),
      attempt: { event: "webhook.test", responseStatus: 200, success: true, error: null, attempt: 1 },
    });
    expect(sent.body.data.attempt.durationMs).toBeGreaterThanOrEqual(0);
    const request = receiver.requests[before];
    expect(request).toBeDefined();
    if (!request) return;
    expect(request.headers["webhook-id"]).toBe(sent.body.data.eventId);
    expect(verifyServiceSignature(String(request.headers["service-signature"]), request.body, created.secret)).toBe(
      true,
    );
    const verified = new Webhook(created.secret).verify(request.body, standardHeaders(request.headers)) as {
      actor: unknown;
    };
    expect(verified.actor).toEqual({ type: "api_key", id: org.apiKeyId });
    expect(() => new Webhook(created.secret).verify(`${request.body} `, standardHeaders(request.headers))).toThrow();
  });

  it("signs with both secrets for 24 hours after a rotation", async () => {
    const org = await createTestOrg();
    const api = client(server.url, org.key);
    const created = (await api("POST", "/webhook-endpoints", { url: receiver.url, events: ["*"] })).body.data;
    const rotated = await api("POST", `/webhook-endpoints/${created.id}/rotate-secret`);
    expect(rotated.body.data).toEqual({
      secret: expect.stringMatching(/^whsec_/),
      previousSecretExpiresAt: expect.any(String),
    });
    expect(Date.parse(rotated.body.data.previousSecretExpiresAt) - Date.now()).toBeGreaterThan(23.9 * 3600_000);
    const before = receiver.requests.length;
    await api("POST", `/webhook-endpoints/${created.id}/test`);
    const request = receiver.requests[before];
    if (!request) throw new Error("no delivery received");
    expect(String(request.headers["webhook-signature"]).split(" ")).toHaveLength(2);
    for (const secret of [created.secret, rotated.body.data.secret]) {
      expect(() => new Webhook(secret).verify(request.body, standardHeaders(request.headers))).not.toThrow();
      expect(verifyServiceSignature(String(request.headers["service-signature"]), request.body, secret)).toBe(true);
    }
  });

  it("lists the attempts and redelivers with the same event id", async () => {
    const org = await createTestOrg();
    const api = client(server.url, org.key);
    const created = (await api("POST", "/webhook-endpoints", { url: receiver.url, events: ["*"] })).body.data;
    receiver.reply((_request, index) => (index % 2 === 0 ? { status: 503 } : { status: 200 }));
    try {
      const first = await api("POST", `/webhook-endpoints/${created.id}/test`);
      const deliveryId = first.body.data.attempt.deliveryId;
      const again = await api("POST", `/deliveries/${deliveryId}/redeliver`);
      expect(again.status).toBe(200);
      expect(again.body.data).toMatchObject({ deliveryId, eventId: first.body.data.eventId, attempt: 2 });
      const received = receiver.requests.filter((request) => request.headers["webhook-id"] === first.body.data.eventId);
      expect(received).toHaveLength(2);
      expect(received.map((request) => request.headers["service-event-id"])).toEqual([
        first.body.data.eventId,
        first.body.data.eventId,
      ]);
      const page = await api("GET", `/webhook-endpoints/${created.id}/deliveries?limit=1`);
      expect(page.body).toMatchObject({ hasMore: true, data: [{ deliveryId, attempt: 2 }] });
      const next = await api(
        "GET",
        `/webhook-endpoints/${created.id}/deliveries?limit=1&cursor=${page.body.nextCursor}`,
      );
      expect(next.body).toMatchObject({ hasMore: false, data: [{ deliveryId, attempt: 1 }] });
      expect([page.body.data[0].success, next.body.data[0].success].sort()).toEqual([false, true]);
      const stranger = client(server.url, (await createTestOrg()).key);
      expect((await stranger("POST", `/deliveries/${deliveryId}/redeliver`)).status).toBe(404);
    } finally {
      receiver.reply(() => ({ status: 200, body: "ok" }));
    }
  });

  it("names on each attempt the URL it was sent to, in the API and the settings' delivery detail, after the endpoint's URL changed", async () => {
    const { orgId, members } = await orgWithRoles();
    const api = client(server.url, await createKey(orgId, ["webhooks:write", "webhooks:read"]));
    const created = (await api("POST", "/webhook-endpoints", { url: `${receiver.url}?before`, events: ["*"] })).body
      .data;
    const first = await api("POST", `/webhook-endpoints/${created.id}/test`);
    expect(first.body.data.attempt.url).toBe(`${receiver.url}?before`);
    const deliveryId = first.body.data.attempt.deliveryId;
    expect((await api("PATCH", `/webhook-endpoints/${created.id}`, { url: `${receiver.url}?after` })).status).toBe(200);
    const again = await api("POST", `/deliveries/${deliveryId}/redeliver`);
    expect(again.body.data).toMatchObject({ attempt: 2, url: `${receiver.url}?after` });
    expect(
      receiver.requests
        .filter((request) => request.headers["webhook-id"] === first.body.data.eventId)
        .map((request) => request.path),
    ).toEqual(["/hook?before", "/hook?after"]);

    const listed = await api("GET", `/webhook-endpoints/${created.id}/deliveries`);
    expect(listed.body.data.map((attempt: { attempt: number; url: string }) => [attempt.attempt, attempt.url])).toEqual(
      [
        [2, `${receiver.url}?after`],
        [1, `${receiver.url}?before`],
      ],
    );
    const detail = await members.viewer.caller.webhooks.delivery({ deliveryId });
    expect(detail.url).toBe(`${receiver.url}?after`);
    expect(detail.attempts.map((attempt) => [attempt.attempt, attempt.url])).toEqual([
      [2, `${receiver.url}?after`],
      [1, `${receiver.url}?before`],
    ]);
    // An attempt recorded before URLs were kept says so rather than naming the endpoint's URL of today.
    await prisma().deliveryAttempt.updateMany({ where: { deliveryId, attempt: 1 }, data: { url: null } });
    const old = (await api("GET", `/webhook-endpoints/${created.id}/deliveries`)).body.data;
    expect(old[1]).toMatchObject({ attempt: 1, url: null });
  });

  it("keeps no signing secret in the idempotency table: a replay reads it back while it stands, and is refused once it is rotated", async () => {
    const org = await createTestOrg();
    const api = client(server.url, org.key);
    const key = (name: string) => ({ "Idempotency-Key": `${name}-${randomBytes(6).toString("hex")}` });
    const stored = async () =>
      (await prisma().idempotencyKey.findMany({ where: { orgId: org.orgId }, select: { responseBody: true } })).map(
        (row) => row.responseBody,
      );
    const createKey1 = key("create");
    const body = { url: receiver.url, events: ["*"] };
    const created = await api("POST", "/webhook-endpoints", body, createKey1);
    expect(created.status).toBe(201);
    const secret: string = created.body.data.secret;
    expect((await stored()).join("\n")).not.toContain("whsec_");

    const replayed = await api("POST", "/webhook-endpoints", body, createKey1);
    expect(replayed.status).toBe(201);
    expect(replayed.headers.get("x-idempotent-replay")).toBe("true");
    expect(replayed.body.data).toEqual(created.body.data);

    const rotateKey = key("rotate");
    const rotated = await api("POST", `/webhook-endpoints/${created.body.data.id}/rotate-secret`, undefined, rotateKey);
    expect(rotated.status).toBe(200);
    const rows = (await stored()).join("\n");
    for (const value of [secret, rotated.body.data.secret]) expect(rows).not.toContain(value);
    expect(rows).not.toContain("whsec_");

    // The create's secret was rotated away (it still signs for 24 hours as the previous one): its answer is not replayed.
    const stale = await api("POST", "/webhook-endpoints", body, createKey1);
    expect(stale.status).toBe(422);
    expect(stale.body.error.code).toBe("idempotency_conflict");
    expect(JSON.stringify(stale.body)).not.toContain(secret);
    const current = await api("POST", `/webhook-endpoints/${created.body.data.id}/rotate-secret`, undefined, rotateKey);
    expect(current.status).toBe(200);
    expect(current.body.data).toEqual(rotated.body.data);

    expect((await api("DELETE", `/webhook-endpoints/${created.body.data.id}`)).status).toBe(200);
    const gone = await api("POST", `/webhook-endpoints/${created.body.data.id}/rotate-secret`, undefined, rotateKey);
    expect(gone.status).toBe(422);
    expect(JSON.stringify(gone.body)).not.toContain(rotated.body.data.secret);
  });

  it("seals, by migration, the secrets stored in plaintext before: the replay still answers byte for byte", async () => {
    const org = await createTestOrg();
    const api = client(server.url, org.key);
    const headers = { "Idempotency-Key": `legacy-${randomBytes(6).toString("hex")}` };
    const body = { url: receiver.url, events: ["*"] };
    const created = await api("POST", "/webhook-endpoints", body, headers);
    const secret: string = created.body.data.secret;
    // As the service stored the answer before it sealed secrets.
    const row = await prisma().idempotencyKey.findFirstOrThrow({ where: { orgId: org.orgId } });
    const plaintext = row.responseBody.replace(/"whsec-sha256:[0-9a-f]{64}"/, JSON.stringify(secret));
    await prisma().idempotencyKey.update({ where: { id: row.id }, data: { responseBody: plaintext } });
    const file = path.resolve(
      import.meta.dirname,
      "../../../prisma/migrations/20261127100000_idempotency_sealed_secrets/migration.sql",
    );
    await prisma().$executeRawUnsafe(readFileSync(file, "utf8"));
    const sealed = await prisma().idempotencyKey.findFirstOrThrow({ where: { id: row.id } });
    expect(sealed.responseBody).not.toContain(secret);
    expect(sealed.responseBody).toBe(row.responseBody);
    const replayed = await api("POST", "/webhook-endpoints", body, headers);
    expect(replayed.headers.get("x-idempotent-replay")).toBe("true");
    expect(replayed.body.data).toEqual(created.body.data);
  });

  it("refuses a test key's test event and redelivery with 403, sending nothing, whether the target exists or not", async () => {
    const org = await createTestOrg();
    const live = client(server.url, org.key);
    const created = (await live("POST", "/webhook-endpoints", { url: receiver.url, events: ["*"] })).body.data;
    const deliveryId = (await live("POST", `/webhook-endpoints/${created.id}/test`)).body.data.attempt.deliveryId;
    const testKey = client(server.url, await createKey(org.orgId, ["webhooks:write"], true));
    const before = receiver.requests.length;
    for (const path of [
      `/webhook-endpoints/${created.id}/test`,
      `/deliveries/${deliveryId}/redeliver`,
      "/webhook-endpoints/wh_000000000000000000000000/test",
      "/deliveries/whd_000000000000000000000000/redeliver",
    ]) {
      const refused = await testKey("POST", path, undefined, { "Idempotency-Key": randomBytes(6).toString("hex") });
      expect(refused.status, path).toBe(403);
      expect(refused.body.error).toMatchObject({
        code: "insufficient_scope",
        message: expect.stringContaining("Test keys (msp_test_) send no webhooks"),
      });
    }
    expect(receiver.requests.length).toBe(before);
    // A test key still manages endpoints: only outbound requests are refused.
    expect((await testKey("PATCH", `/webhook-endpoints/${created.id}`, { description: "by a test key" })).status).toBe(
      200,
    );
  });

  it("runs a test event and a redelivery with an Idempotency-Key outside the request's transaction: once, a duplicate in flight is 409, a retry replays", async () => {
    const org = await createTestOrg();
    const api = client(server.url, org.key);
    const created = (await api("POST", "/webhook-endpoints", { url: receiver.url, events: ["*"] })).body.data;
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const before = receiver.requests.length;
    receiver.reply(() => ({ status: 200, body: "ok", after: held }));
    const headers = { "Idempotency-Key": `test-${randomBytes(6).toString("hex")}` };
    try {
      const first = api("POST", `/webhook-endpoints/${created.id}/test`, undefined, headers);
      while (receiver.requests.length === before) await new Promise((resolve) => setTimeout(resolve, 10));
      // The first request waits for the receiver: its duplicate is refused, and the database still answers others.
      const duplicate = await api("POST", `/webhook-endpoints/${created.id}/test`, undefined, headers);
      expect(duplicate.status).toBe(409);
      expect(duplicate.headers.get("retry-after")).toBe("1");
      expect((await api("GET", `/webhook-endpoints/${created.id}`)).status).toBe(200);
      release();
      const sent = await first;
      expect(sent.status).toBe(200);
      const replay = await api("POST", `/webhook-endpoints/${created.id}/test`, undefined, headers);
      expect(replay.headers.get("x-idempotent-replay")).toBe("true");
      expect(replay.body.data).toEqual(sent.body.data);
      const redeliverKey = { "Idempotency-Key": `again-${randomBytes(6).toString("hex")}` };
      const path = `/deliveries/${sent.body.data.attempt.deliveryId}/redeliver`;
      const again = await api("POST", path, undefined, redeliverKey);
      expect(again.body.data).toMatchObject({ eventId: sent.body.data.eventId, attempt: 2 });
      expect((await api("POST", path, undefined, redeliverKey)).body.data).toEqual(again.body.data);
      expect(receiver.requests.filter((r) => r.headers["webhook-id"] === sent.body.data.eventId)).toHaveLength(2);
    } finally {
      release();
      receiver.reply(() => ({ status: 200, body: "ok" }));
    }
  });
});
