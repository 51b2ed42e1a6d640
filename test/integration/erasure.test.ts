// Erasure of a person (docs/api-contract.md §4.16; docs/architecture.md, "Erasure of a person"): the contact and its
// links go, its personal data is redacted in every store that kept a copy (events and so webhook payloads, delivery
// attempts, audit-log queries, idempotent answers) with the rows kept, another contact's data stays, the tombstone
// reaches the feed and a webhook receiver, and tenancy and scope hold.
process.env.WEBHOOKS_ALLOW_LOOPBACK = "true";

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { prisma } from "../../server/db/transaction";
import { flushAudit } from "../../server/services/audit";
import { erasurePatterns, identifyingValues } from "../../server/services/erasure";
import { attemptDelivery, fanOutEvents } from "../../server/webhooks/deliveries";
import { createWebhookEndpoint } from "../../server/webhooks/endpoints";
import { client, createKey, createTestOrg, startApi, type TestServer } from "../helpers/api";
import { type Receiver, startReceiver } from "../helpers/receiver";

let server: TestServer;
let receiver: Receiver;
beforeAll(async () => {
  server = await startApi();
  receiver = await startReceiver();
  // The receiver echoes what it got, as some do: its stored answer then holds the person's data too.
  receiver.reply((request) => ({ status: 200, body: `received ${request.body.slice(0, 1500)}` }));
});
afterAll(() => Promise.all([server.close(), receiver.close()]));

type Api = ReturnType<typeof client>;

async function ok(api: Api, method: string, path: string, body?: unknown, headers?: Record<string, string>) {
  const res = await api(method, path, body, headers);
  expect(res.status, `${method} ${path} ${JSON.stringify(res.body)}`).toBeLessThan(300);
  return res.body.data;
}

/** Fans out and delivers every undelivered event of the organisation once, as the Inngest functions would. */
async function deliverAll(orgId: string): Promise<void> {
  const events = await prisma().event.findMany({ where: { orgId, fannedOutAt: null }, select: { id: true } });
  const deliveries = await fanOutEvents(events.map((event) => event.id));
  for (const delivery of deliveries) await attemptDelivery(delivery.deliveryId, { mode: "scheduled", final: false });
}

const rowsOf = (orgId: string) =>
  Promise.all([
    prisma().event.findMany({ where: { orgId }, orderBy: { sequence: "asc" } }),
    prisma().deliveryAttempt.findMany({ where: { delivery: { orgId } }, orderBy: { id: "asc" } }),
    prisma().auditLog.findMany({ where: { orgId }, orderBy: { id: "asc" } }),
    prisma().idempotencyKey.findMany({ where: { orgId }, orderBy: { id: "asc" } }),
  ]);

describe("POST /contacts/{id}/erase", () => {
  it("removes the contact and redacts it in events, deliveries, attempts, audit log and idempotent answers; rows stay, another contact stays", async () => {
    const org = await createTestOrg();
    const api = client(server.url, org.key);
    await createWebhookEndpoint(org.orgId, { url: receiver.url, events: ["*"] });

    const account = await ok(api, "POST", "/accounts", { name: "Northwind Dental" });
    const annCreate = {
      email: "ann.old@northwind.example",
      firstName: "Ann",
      lastName: "Smith",
      title: "Practice manager",
      phone: "+44 20 7123 4567",
      accountId: account.id,
      role: "Decision maker",
    };
    const ann = await ok(api, "POST", "/contacts", annCreate, { "Idempotency-Key": "create-ann" });
    // A later email: the old one survives only in the event's previous, and must go too.
    await ok(api, "PATCH", `/contacts/${ann.id}`, { email: "Ann.Smith@Northwind.example" });
    // A colleague sharing the switchboard number, whose record must come through untouched.
    const bob = await ok(api, "POST", "/contacts", {
      email: "bob@northwind.example",
      firstName: "Bob",
      lastName: "Jones",
      phone: "+44 20 7123 4567",
      accountId: account.id,
    });
    await ok(api, "POST", "/notes", {
      objectType: "Account",
      objectId: account.id,
      body: "Call ANN SMITH (ann.smith@northwind.example) about the renewal; Joann Smithers agrees.",
    });
    const touchpoint = await ok(api, "POST", "/touchpoints", {
      accountId: account.id,
      contactId: ann.id,
      type: "CALL",
      direction: "OUTBOUND",
      subject: "Renewal with Ann Smith",
    });
    await ok(api, "GET", `/contacts?email=${encodeURIComponent("ann.smith@northwind.example")}`);
    await ok(api, "GET", `/contacts?phone[eq]=${encodeURIComponent("+44 20 7123 4567")}`);
    await ok(api, "GET", "/contacts?lastName[eq]=Jones");
    await deliverAll(org.orgId);
    await flushAudit();

    const bobEventsBefore = (await prisma().event.findMany({ where: { orgId: org.orgId, resourceId: bob.id } })).map(
      (event) => ({ id: event.id, data: event.data, previous: event.previous }),
    );
    // A claim of a request still running: no answer yet (an empty body), its path naming her.
    const claim = await prisma().idempotencyKey.create({
      data: {
        orgId: org.orgId,
        apiKeyId: org.apiKeyId,
        key: "running",
        method: "POST",
        path: "/contacts/bulk?note=ann.smith%40northwind.example",
        fingerprint: "0".repeat(64),
        status: 0,
        responseBody: "",
        responseHeaders: {},
        requestId: "req_000000000000000000000000",
        expiresAt: new Date(Date.now() + 60_000),
      },
    });

    const [events, attempts, audits, idempotency] = await rowsOf(org.orgId);
    const annEvents = events.filter((event) => event.resourceId === ann.id);
    expect(annEvents.map((event) => event.name)).toEqual(["contact.created", "contact.updated"]);
    expect(attempts.some((attempt) => attempt.responseBody?.includes("ann.smith@northwind.example"))).toBe(true);

    const res = await api("POST", `/contacts/${ann.id}/erase`);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    // Events: Ann's two, the note's and the touchpoint's (its subject names her); deliveries: one per event. Attempts:
    // those four, and Bob's creation, whose echoed payload holds the shared number (an answer body is only text).
    expect(res.body.data).toEqual({
      id: ann.id,
      erased: true,
      removed: { contacts: 1, accountLinks: 1, touchpointLinks: 1 },
      redacted: { events: 4, webhookDeliveries: 4, deliveryAttempts: 5, auditLogs: 2, idempotencyRecords: 2 },
    });

    expect((await api("GET", `/contacts/${ann.id}`)).status).toBe(404);
    expect(await prisma().contactAccount.count({ where: { contactId: ann.id } })).toBe(0);
    const unlinked = await ok(api, "GET", `/touchpoints/${touchpoint.id}`);
    expect(unlinked.contactId).toBeNull();
    expect(unlinked.updatedAt > touchpoint.updatedAt).toBe(true);

    const [eventsAfter, attemptsAfter, auditsAfter, idempotencyAfter] = await rowsOf(org.orgId);
    // Rows stay (plus the erasure's own event); no stored copy names her any more.
    expect(eventsAfter.map((event) => event.id)).toEqual([...events.map((event) => event.id), expect.any(String)]);
    expect(attemptsAfter.map((attempt) => attempt.id)).toEqual(attempts.map((attempt) => attempt.id));
    expect(auditsAfter.slice(0, audits.length).map((audit) => audit.id)).toEqual(audits.map((audit) => audit.id));
    expect(idempotencyAfter.map((record) => record.id)).toEqual(idempotency.map((record) => record.id));
    const stored = JSON.stringify([eventsAfter, attemptsAfter, auditsAfter, idempotencyAfter], (_, value) =>
      typeof value === "bigint" ? String(value) : value,
    ).toLowerCase();
    for (const value of [/ann\.old@northwind/, /ann\.smith@northwind/, /\bann smith\b/, /practice manager/])
      expect(stored).not.toMatch(value);

    const [created, updated] = eventsAfter.filter((event) => event.resourceId === ann.id);
    expect(created?.data).toEqual({
      id: ann.id,
      email: "[erased]",
      firstName: "[erased]",
      lastName: "[erased]",
      title: "[erased]",
      phone: "[erased]",
      accounts: [{ accountId: account.id, accountName: "Northwind Dental", role: "[erased]", isPrimary: false }],
      customFields: {},
      createdAt: ann.createdAt,
      updatedAt: ann.createdAt,
    });
    expect(updated?.changedFields).toEqual(["email"]);
    expect(updated?.previous).toEqual({ email: "[erased]" });
    const dataOf = (name: string) => eventsAfter.find((event) => event.name === name)?.data as Record<string, unknown>;
    expect(dataOf("note.created")).toMatchObject({
      body: "Call [erased] ([erased]) about the renewal; Joann Smithers agrees.",
    });
    expect(dataOf("touchpoint.created")).toMatchObject({ subject: "Renewal with [erased]" });
    for (const attempt of attemptsAfter) expect(attempt.responseBody).not.toMatch(/ann\.(old|smith)@/i);
    expect(attemptsAfter.filter((attempt) => attempt.responseBody === "[erased]")).toHaveLength(2);
    expect(attemptsAfter.filter((attempt) => attempt.responseBody?.includes("[erased]"))).toHaveLength(5);
    const queries = auditsAfter.slice(0, audits.length).map((audit) => audit.query);
    // The audit log stores queries form-encoded.
    expect(queries).toContain("email=[erased]");
    expect(queries).toContain("phone%5Beq%5D=[erased]");
    expect(queries).toContain("lastName%5Beq%5D=Jones");
    expect(await prisma().idempotencyKey.findUnique({ where: { id: claim.id } })).toMatchObject({
      path: "/contacts/bulk?note=[erased]",
      responseBody: "",
    });
    expect(JSON.parse(idempotencyAfter[0]?.responseBody ?? "{}").data).toMatchObject({
      id: ann.id,
      email: "[erased]",
      firstName: "[erased]",
      phone: "[erased]",
    });

    // Bob shares the phone number: his record and his events are as they were.
    const bobNow = await ok(api, "GET", `/contacts/${bob.id}`);
    expect(bobNow).toMatchObject({ email: "bob@northwind.example", phone: "+44 20 7123 4567", firstName: "Bob" });
    expect(
      (await prisma().event.findMany({ where: { orgId: org.orgId, resourceId: bob.id } })).map((event) => ({
        id: event.id,
        data: event.data,
        previous: event.previous,
      })),
    ).toEqual(bobEventsBefore);

    // The erasure's tombstone: in the feed, and to the receiver.
    const feed = (await ok(api, "GET", "/events?types=contact.erased")) as Array<Record<string, unknown>>;
    expect(feed).toEqual([
      expect.objectContaining({
        event: "contact.erased",
        resource: "contact",
        actor: { type: "api_key", id: org.apiKeyId },
        data: { id: ann.id, resource: "contact", deleted: true },
      }),
    ]);
    const before = receiver.requests.length;
    await deliverAll(org.orgId);
    const delivered = receiver.requests.slice(before).map((request) => JSON.parse(request.body));
    expect(delivered).toEqual([
      expect.objectContaining({
        id: feed[0]?.id,
        event: "contact.erased",
        data: { id: ann.id, resource: "contact", deleted: true },
      }),
    ]);

    // A replay of the stored create answers the redacted copy; a second erasure finds nothing.
    const replay = await api("POST", "/contacts", annCreate, { "Idempotency-Key": "create-ann" });
    expect(replay.status).toBe(201);
    expect(replay.headers.get("x-idempotent-replay")).toBe("true");
    expect(replay.body.data).toMatchObject({ id: ann.id, email: "[erased]", lastName: "[erased]" });
    const again = await api("POST", `/contacts/${ann.id}/erase`);
    expect(again.status).toBe(404);
    expect(again.body.error.code).toBe("not_found");
  });

  it("with an Idempotency-Key (as the SDK sends) also redacts a query this process logged just before, and replays its answer", async () => {
    const org = await createTestOrg();
    const api = client(server.url, org.key);
    const contact = await ok(api, "POST", "/contacts", { email: "just.before@example.com", firstName: "Just" });
    // Answered but not yet stored: audit rows wait in memory for their batch.
    await ok(api, "GET", `/contacts?email=${encodeURIComponent("just.before@example.com")}`);
    const first = await api("POST", `/contacts/${contact.id}/erase`, undefined, { "Idempotency-Key": "erase-once" });
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    expect(first.body.data.redacted.auditLogs).toBe(1);
    const replay = await api("POST", `/contacts/${contact.id}/erase`, undefined, { "Idempotency-Key": "erase-once" });
    expect(replay.status).toBe(200);
    expect(replay.headers.get("x-idempotent-replay")).toBe("true");
    expect(replay.body.data).toEqual(first.body.data);
    await flushAudit();
    const queries = (await prisma().auditLog.findMany({ where: { orgId: org.orgId }, select: { query: true } })).map(
      (row) => row.query ?? "",
    );
    expect(queries.some((query) => query.includes("erased"))).toBe(true);
    expect(queries.filter((query) => query.includes("just.before"))).toEqual([]);
  });

  it("answers 404 for another organisation's contact and changes nothing there", async () => {
    const owner = await createTestOrg();
    const other = await createTestOrg();
    const contact = await ok(client(server.url, owner.key), "POST", "/contacts", {
      email: "kept@example.com",
      firstName: "Kept",
      lastName: "Person",
    });
    const res = await client(server.url, other.key)("POST", `/contacts/${contact.id}/erase`);
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe("not_found");
    expect(await ok(client(server.url, owner.key), "GET", `/contacts/${contact.id}`)).toMatchObject({
      email: "kept@example.com",
    });
    const [event] = await prisma().event.findMany({ where: { orgId: owner.orgId, resourceId: contact.id } });
    expect(event?.data).toMatchObject({ email: "kept@example.com", firstName: "Kept" });
  });

  it("needs contacts:write: a key with contacts:read gets 403 and the contact stays", async () => {
    const org = await createTestOrg();
    const contact = await ok(client(server.url, org.key), "POST", "/contacts", { email: "stays@example.com" });
    const reader = client(server.url, await createKey(org.orgId, ["contacts:read", "admin:read"]));
    const res = await reader("POST", `/contacts/${contact.id}/erase`);
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe("insufficient_scope");
    expect((await reader("GET", `/contacts/${contact.id}`)).status).toBe(200);
  });
});

describe("erasure patterns", () => {
  it("use every email, phone and full name the contact had, longest first; no lone first names or short numbers", () => {
    expect(
      identifyingValues([
        { email: "ann@x.example", phone: "+1 555 0100", firstName: "Ann", lastName: "Smith" },
        { email: "a.smith@x.example", phone: "ext 12", firstName: "Ann", lastName: null },
      ]),
    ).toEqual(["a.smith@x.example", "ann@x.example", "+1 555 0100", "Ann Smith"]);
  });

  it("match whole words case-insensitively, JSON-escaped and percent-encoded forms too, each with a LIKE pre-test", () => {
    const patterns = erasurePatterns(['O\'Hara Q. "Jr"', "a+b_c@x.example"]);
    expect(patterns.text).toEqual({
      regex: '(?<![[:alnum:]_])(?:a\\+b_c@x\\.example|O\'Hara\\s+Q\\.\\s+"Jr")(?![[:alnum:]_])',
      like: ["%a+b\\_c@x.example%", "%o'hara%"],
    });
    expect(patterns.json.regex).toContain('O\'Hara\\s+Q\\.\\s+\\\\"Jr\\\\"');
    expect(patterns.query.regex).toContain("a%2Bb_c%40x\\.example");
    expect(patterns.query.regex).toContain("O%27Hara\\+Q\\.\\+%22Jr%22");
    expect(patterns.query.like).toContain("%a\\%2bb\\_c\\%40x.example%");
  });
});
