// Erasure of a person (docs/api-contract.md §4.16; docs/architecture.md, "Erasure of a person"): the contact and its
// links go, its personal data is redacted in every store that kept a copy (events and so webhook payloads, delivery
// attempts, the request log's paths and queries, idempotent answers, other records' custom field values and so the
// search index) with the rows kept, in any spelling, another contact's data stays, the tombstone reaches the feed and a
// webhook receiver, tenancy and scope hold, a contact with 1,000 states goes within 10 s, and racing a force delete of
// its account never deadlocks.
process.env.WEBHOOKS_ALLOW_LOOPBACK = "true";

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { prisma, transaction } from "../../../server/db/transaction";
import { flushAudit, recordAudit } from "../../../server/platform/request-log/record";
import { recordEvents } from "../../../server/records/events";
import { attemptDelivery, fanOutEvents } from "../../../server/webhooks/deliveries";
import { createWebhookEndpoint } from "../../../server/webhooks/endpoints";
import { client, createKey, createTestOrg, startApi, type TestServer } from "../../helpers/api";
import { spellings, storedCopies, writeHistory } from "../../helpers/erasure";
import { type Receiver, startReceiver } from "../../helpers/receiver";

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
      redacted: {
        events: 4,
        webhookDeliveries: 4,
        deliveryAttempts: 5,
        auditLogs: 2,
        idempotencyRecords: 2,
        customFieldRecords: 0,
      },
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

/** A tag of letters only, so values stay whole words and no two tests share one. */
const tagOf = () => Array.from({ length: 6 }, () => String.fromCharCode(97 + Math.floor(Math.random() * 26))).join("");

/** The columns whose text others wrote and that keep their words (docs/api-contract.md §4.16). */
const FREE_TEXT = ["Note.body", "Touchpoint.subject", "Touchpoint.notes", "Task.title", "Task.description"];

describe("erasure finds the values by structure", () => {
  it("in the request log: after encoded punctuation, quoted, in parentheses, in paths, and in rows without an organisation", async () => {
    const org = await createTestOrg();
    const api = client(server.url, org.key);
    const tag = tagOf();
    const email = `ann.lee2.${tag}@harbor.example`;
    // A name that starts and ends with a v, which trimming must leave whole.
    const contact = await ok(api, "POST", "/contacts", { email, firstName: "Viv", lastName: `Lee-Smith${tag}v` });
    const name = `Viv Lee-Smith${tag}v`;
    const other = `bob.${tag}@harbor.example`;
    await ok(api, "POST", "/contacts", { email: other, firstName: "Bob" });
    const queries = [
      `/contacts?email[in]=${encodeURIComponent(`${other},${email}`)}`,
      `/search?q=${encodeURIComponent(`"${email}"`)}`,
      `/search?q=${new URLSearchParams({ q: `(${name})` }).toString().slice(2)}`,
    ];
    for (const query of queries) expect((await api("GET", query)).status, query).toBe(200);
    // An email where an id belongs: refused, logged with its path.
    expect((await api("GET", `/contacts/${email}`)).status).toBe(400);
    // Without a key: the row has no organisation, and its query keeps no value.
    const anonymous = [
      await client(server.url)("GET", `/contacts?email=${encodeURIComponent(email)}`),
      await client(server.url)("GET", `/contacts/${email}`),
    ];
    expect(anonymous.map((answer) => answer.status)).toEqual([401, 401]);
    await flushAudit();

    const res = await api("POST", `/contacts/${contact.id}/erase`);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    // The three queries, the organisation's refused path and the path of the request without one.
    expect(res.body.data.redacted.auditLogs).toBe(5);
    await flushAudit();
    const logged = await prisma().auditLog.findMany({
      where: { OR: [{ orgId: org.orgId }, { requestId: { in: anonymous.map((answer) => answer.body.requestId) } }] },
      orderBy: { id: "asc" },
      select: { orgId: true, path: true, query: true, status: true },
    });
    expect(logged.map((row) => `${row.status} ${row.path}${row.query ? `?${row.query}` : ""}`)).toEqual(
      expect.arrayContaining([
        // Another person's value in the same parameter stays, encoded as before.
        `200 /api/v1/contacts?email%5Bin%5D=${encodeURIComponent(other)}%2C[erased]`,
        "200 /api/v1/search?q=%22[erased]%22",
        "200 /api/v1/search?q=%28[erased]%29",
        "400 /api/v1/contacts/[erased]",
        "401 /api/v1/contacts?email",
        "401 /api/v1/contacts/[erased]",
      ]),
    );
    const text = JSON.stringify(logged);
    for (const spelled of [...spellings(email), ...spellings(name)]) expect(text).not.toContain(spelled);
  });

  it("finds names with İ, ß and decomposed letters, in any case, in other records' events", async () => {
    const org = await createTestOrg();
    const api = client(server.url, org.key);
    const tag = tagOf();
    // Stored decomposed, as a client sent it.
    const decomposed = `Zoë Weiß-${tag}`.normalize("NFD");
    const contact = await ok(api, "POST", "/contacts", {
      email: `ibrahim.${tag}@harbor.example`,
      firstName: "İbrahim",
      lastName: `Yıldız${tag}`,
    });
    await ok(api, "PATCH", `/contacts/${contact.id}`, {
      firstName: decomposed.split(" ")[0],
      lastName: decomposed.split(" ")[1],
    });
    const account = await ok(api, "POST", "/accounts", { name: `Harbor ${tag}` });
    const body = `Met İbrahim Yıldız${tag} and İBRAHİM YILDIZ${tag.toUpperCase()}; then ${`zoë weiß-${tag}`.normalize("NFC")} and ZOË WEIß-${tag.toUpperCase()}. Not İbrahim alone, nor Yıldız${tag}son.`;
    const note = await ok(api, "POST", "/notes", { objectType: "Account", objectId: account.id, body });
    const task = await ok(api, "POST", "/tasks", { title: `Call İbrahim Yıldız${tag}`, accountId: account.id });

    const res = await api("POST", `/contacts/${contact.id}/erase`);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const dataOf = async (resourceId: string) =>
      (await prisma().event.findFirstOrThrow({ where: { orgId: org.orgId, resourceId } })).data as Record<
        string,
        unknown
      >;
    expect((await dataOf(note.id)).body).toBe(
      `Met [erased] and [erased]; then [erased] and [erased]. Not İbrahim alone, nor Yıldız${tag}son.`,
    );
    expect((await dataOf(task.id)).title).toBe("Call [erased]");
    // The note itself keeps its words (text others wrote), its event does not.
    expect((await ok(api, "GET", `/notes/${note.id}`)).body).toBe(body);
  });

  it("clears custom field values equal to an identifier on any record: the account is no longer found by its searchable field", async () => {
    const org = await createTestOrg();
    const api = client(server.url, org.key);
    const tag = tagOf();
    const email = `carl.${tag}@harbor.example`;
    await ok(api, "POST", "/custom-fields", {
      resource: "account",
      key: "main_contact",
      label: "Main contact",
      type: "email",
      searchable: true,
    });
    await ok(api, "POST", "/custom-fields", { resource: "deal", key: "champion", label: "Champion", type: "text" });
    await ok(api, "POST", "/custom-fields", {
      resource: "contact",
      key: "assistant",
      label: "Assistant",
      type: "text",
    });
    const contact = await ok(api, "POST", "/contacts", { email, firstName: "Carl", lastName: `Berg${tag}` });
    const account = await ok(api, "POST", "/accounts", {
      name: "Northwind Dental",
      customFields: { main_contact: email.toUpperCase() },
    });
    const deal = await ok(api, "POST", "/deals", {
      name: `Renewal ${tag}`,
      accountId: account.id,
      customFields: { champion: `carl  berg${tag}` },
    });
    const colleague = await ok(api, "POST", "/contacts", {
      email: `dana.${tag}@harbor.example`,
      customFields: { assistant: `Carl Berg${tag}` },
    });
    const found = await ok(api, "GET", `/search?q=${encodeURIComponent(email)}`);
    expect(found.map((hit: { id: string }) => hit.id)).toEqual(expect.arrayContaining([contact.id, account.id]));

    const res = await api("POST", `/contacts/${contact.id}/erase`);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.data.redacted.customFieldRecords).toBe(3);
    // Nothing keeps them: the records, their events, the search index.
    expect(await storedCopies([...spellings(email), ...spellings(`Carl Berg${tag}`)])).toEqual([]);
    const after = await ok(api, "GET", `/search?q=${encodeURIComponent(email)}`);
    expect(after.map((hit: { id: string }) => hit.id)).not.toContain(account.id);
    expect(after.map((hit: { id: string }) => hit.id)).not.toContain(contact.id);
    const accountNow = await ok(api, "GET", `/accounts/${account.id}`);
    expect(accountNow.customFields).toEqual({});
    expect(accountNow.updatedAt > account.updatedAt).toBe(true);
    expect((await ok(api, "GET", `/deals/${deal.id}`)).customFields).toEqual({});
    expect((await ok(api, "GET", `/contacts/${colleague.id}`)).customFields).toEqual({});
  });

  it("leaves none of the contact's values, in any spelling, in any text or JSON column of any table", async () => {
    const org = await createTestOrg();
    const api = client(server.url, org.key);
    const tag = tagOf();
    await createWebhookEndpoint(org.orgId, { url: receiver.url, events: ["*"] });
    await ok(api, "POST", "/custom-fields", {
      resource: "account",
      key: "billing_email",
      label: "Billing email",
      type: "email",
      searchable: true,
    });
    await ok(api, "POST", "/custom-fields", { resource: "task", key: "callback", label: "Callback", type: "text" });
    const first = {
      email: `ib.${tag}@harbor.example`,
      firstName: "İbrahim",
      lastName: `Yıldız "Jr" ${tag}`,
      phone: "+90 212 555 0101",
    };
    const second = {
      email: `zoe.${tag}@harbor.example`,
      firstName: "Zoë".normalize("NFD"),
      lastName: `Weiß ${tag}`,
      phone: "+49 30 5550 0199",
    };
    const values = [
      first.email,
      first.phone,
      `${first.firstName} ${first.lastName}`,
      second.email,
      second.phone,
      `${second.firstName} ${second.lastName}`,
    ];
    const account = await ok(api, "POST", "/accounts", {
      name: "Northwind Dental",
      customFields: { billing_email: first.email },
    });
    const contact = await ok(
      api,
      "POST",
      "/contacts",
      { ...first, accountId: account.id, role: "Owner" },
      {
        "Idempotency-Key": `create-${tag}`,
      },
    );
    await ok(api, "PATCH", `/contacts/${contact.id}`, second, { "Idempotency-Key": `patch-${tag}` });
    await ok(api, "POST", "/notes", {
      objectType: "Account",
      objectId: account.id,
      body: `Spoke with ${first.firstName} ${first.lastName} (${first.email}, ${first.phone}), now ${second.email}.`,
    });
    await ok(api, "POST", "/touchpoints", {
      accountId: account.id,
      contactId: contact.id,
      type: "CALL",
      direction: "OUTBOUND",
      subject: `Call ${second.firstName} ${second.lastName}`,
      notes: `Reached on ${second.phone}`,
    });
    await ok(api, "POST", "/tasks", {
      title: `Send ${second.email} the contract`,
      accountId: account.id,
      customFields: { callback: second.phone },
    });
    for (const path of [
      `/contacts?email[in]=${encodeURIComponent(`other.${tag}@harbor.example,${first.email}`)}`,
      `/contacts?phone[eq]=${encodeURIComponent(second.phone)}`,
      `/search?q=${encodeURIComponent(`"${second.firstName} ${second.lastName}"`)}`,
      `/search?q=${new URLSearchParams({ q: `(${first.firstName} ${first.lastName})` }).toString().slice(2)}`,
    ])
      expect((await api("GET", path)).status, path).toBe(200);
    expect((await api("GET", `/contacts/${second.email}`)).status).toBe(400);
    expect((await client(server.url)("GET", `/contacts?email=${encodeURIComponent(second.email)}`)).status).toBe(401);
    await deliverAll(org.orgId);
    await flushAudit();
    const needles = values.flatMap(spellings);
    // Before: copies everywhere.
    expect((await storedCopies(needles, FREE_TEXT)).length).toBeGreaterThan(10);

    const res = await api("POST", `/contacts/${contact.id}/erase`);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    await deliverAll(org.orgId);
    await flushAudit();
    expect(await storedCopies(needles, FREE_TEXT)).toEqual([]);
    for (const value of values) {
      const hits = await ok(api, "GET", `/search?q=${encodeURIComponent(value)}`);
      expect(hits.map((hit: { id: string }) => hit.id)).not.toContain(account.id);
    }
  });
});

describe("erasure in bounded time", () => {
  it("erases a contact with 1,000 historical states within 10 s, every state's values gone", async () => {
    const org = await createTestOrg();
    const api = client(server.url, org.key);
    const tag = tagOf();
    const contact = await ok(api, "POST", "/contacts", { email: `start.${tag}@harbor.example` });
    const states = await writeHistory(api, contact.id, tag, 1_000);
    await flushAudit();

    const started = performance.now();
    const res = await api("POST", `/contacts/${contact.id}/erase`);
    const seconds = (performance.now() - started) / 1000;
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(seconds).toBeLessThan(10);
    expect(res.body.data.redacted).toMatchObject({ events: 1_001, auditLogs: 100, idempotencyRecords: 1_000 });
    const sample = states.filter((_, index) => index % 97 === 0 || index === states.length - 1);
    expect(
      await storedCopies(sample.flatMap((state) => [state.email, state.phone, `${state.firstName} ${state.lastName}`])),
    ).toEqual([]);
  }, 300_000);
});

describe("erasure reads large stores in batches", () => {
  it("finds mentions at the edges of its batches among 12,000 events and 11,000 request-log rows", async () => {
    const org = await createTestOrg();
    const api = client(server.url, org.key);
    const email = `edge.${tagOf()}@harbor.example`;
    const contact = await ok(api, "POST", "/contacts", { email });
    // Batches hold 5,000 rows: the first and last row of each, and the rows around them.
    const mentions = new Set([0, 4_998, 4_999, 5_000, 5_001, 9_999, 10_000, 10_999]);
    await transaction((tx) =>
      recordEvents(
        tx,
        org.orgId,
        { isTest: false, deliver: false, apiKeyId: org.apiKeyId },
        Array.from({ length: 12_000 }, (_, index) => ({
          name: "note.created" as const,
          data: { id: `note_${index}`, body: mentions.has(index) ? `Ask ${email} (${index})` : `Note ${index}` },
        })),
      ),
    );
    const at = Date.now() - 60_000;
    for (let index = 0; index < 11_000; index++) {
      recordAudit({
        orgId: org.orgId,
        apiKeyId: org.apiKeyId,
        isTest: false,
        requestId: `req_${index}`,
        method: "GET",
        path: "/api/v1/contacts",
        query: mentions.has(index) ? `email=${encodeURIComponent(email)}` : `limit=${index}`,
        status: 200,
        errorCode: null,
        durationMs: 1,
        ip: null,
        userAgent: null,
        createdAt: new Date(at + index),
      });
    }
    await flushAudit();

    const res = await api("POST", `/contacts/${contact.id}/erase`);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.data.redacted).toMatchObject({ events: 1 + mentions.size, auditLogs: mentions.size });
    expect(await storedCopies(spellings(email))).toEqual([]);
  }, 120_000);
});

describe("erasure and force-deleting an account take their locks in one order", () => {
  it("12 rounds of erasing a contact while force-deleting its account, at once: no 500, both done", async () => {
    const org = await createTestOrg();
    const api = client(server.url, org.key);
    await ok(api, "POST", "/custom-fields", { resource: "account", key: "owner_email", label: "Owner", type: "email" });
    const statuses: number[][] = [];
    for (let round = 0; round < 12; round++) {
      const email = `race.${tagOf()}.${round}@harbor.example`;
      // Every other round the account also holds the email in a custom field: the erasure then locks it too.
      const account = await ok(api, "POST", "/accounts", {
        name: `Race ${round}`,
        customFields: round % 2 === 0 ? { owner_email: email } : {},
      });
      const contact = await ok(api, "POST", "/contacts", {
        email,
        firstName: "Race",
        lastName: `Round${round}`,
        accountId: account.id,
      });
      await ok(api, "POST", "/touchpoints", {
        accountId: account.id,
        contactId: contact.id,
        type: "CALL",
        direction: "OUTBOUND",
      });
      const [erased, deleted] = await Promise.all([
        api("POST", `/contacts/${contact.id}/erase`),
        api("DELETE", `/accounts/${account.id}?force=true`),
      ]);
      statuses.push([erased.status, deleted.status]);
      expect((await api("GET", `/contacts/${contact.id}`)).status).toBe(404);
      expect((await api("GET", `/accounts/${account.id}`)).status).toBe(404);
      // Whichever committed first, no event of the contact keeps its email (a force delete's contact.updated included).
      expect(await storedCopies([email])).toEqual([]);
    }
    expect(statuses).toEqual(Array.from({ length: 12 }, () => [200, 200]));
  }, 120_000);
});
