// The TypeScript client (sdk/) against a live server, as cases any server can run: the in-process facade on PostgreSQL
// (sdk.test.ts) and `npm start` on the embedded database (start.test.ts), where the pool holds one connection.
import { expect, expectTypeOf, it } from "vitest";
import { ApiError, createClient, type PartialData, type SuccessData, verifyWebhook } from "../../../sdk/src/index";
import type { Receiver } from "../../helpers/receiver";

/** The server a case runs against. */
export interface SdkTarget {
  /** The API's base URL, `<origin>/api/v1`. */
  baseUrl(): string;
  /** A live key with every scope, in an organisation of its own with limits no test reaches. */
  newKey(): Promise<string>;
  /** A webhook receiver the server may reach (`WEBHOOKS_ALLOW_LOOPBACK=true`). */
  receiver(): Receiver;
}

/** Resource methods generated from the document: bulk typed by mode, every resource's calls, typed errors. */
export function resourceMethodCases(target: SdkTarget): void {
  it('types bulk by mode: all-or-none resolves to the 200 shape, { mode: "partial" } to the 207 shape', async () => {
    const crm = createClient({ apiKey: await target.newKey(), baseUrl: target.baseUrl() });
    const whole = await crm.accounts.bulk({ accounts: [{ name: "Whole", externalId: "w-1" }] });
    expectTypeOf(whole).toEqualTypeOf<SuccessData<"/accounts/bulk", "post">>();
    expect(whole).toMatchObject({
      created: 1,
      updated: 0,
      total: 1,
      results: [{ externalId: "w-1", action: "created" }],
    });
    const partial = await crm.accounts.bulk(
      { accounts: [{ name: "Part", externalId: "p-1" }, { name: "" }] },
      { mode: "partial" },
    );
    expectTypeOf(partial).toEqualTypeOf<PartialData<"/accounts/bulk">>();
    expect(partial).toMatchObject({ mode: "partial", created: 1, failed: 1, total: 2 });
    expect(partial.results[1]).toMatchObject({ index: 1, status: "error", error: { code: "validation_error" } });
    const deals = await crm.deals.bulk({ deals: [{ name: "Renewal", accountId: whole.results[0]?.id ?? "" }] });
    expect(deals).toMatchObject({ created: 1, total: 1 });
  });

  it("creates, reads, updates, lists and deletes through resource methods, and throws ApiError", async () => {
    const crm = createClient({ apiKey: await target.newKey(), baseUrl: target.baseUrl() });
    const account = await crm.accounts.create({ name: "Resourceful Ltd", externalId: "res-1" });
    expect(await crm.accounts.get(account.id)).toEqual(account);
    expect(await crm.accounts.get(account.id, { fields: "name" })).toEqual({ id: account.id, name: "Resourceful Ltd" });
    const updated = await crm.accounts.update(account.id, { industry: "Legal" });
    expect(updated.industry).toBe("Legal");
    const contact = await crm.contacts.create({ email: "ann@resourceful.test", accountId: account.id });
    expect((await crm.contacts.get(contact.id, { expand: "account" })).accounts[0]?.account?.name).toBe(
      "Resourceful Ltd",
    );
    const names: string[] = [];
    for await (const item of crm.accounts.list({ limit: 1 })) names.push(item.name);
    expect(names).toEqual(["Resourceful Ltd"]);
    const task = await crm.tasks.create({ title: "Call", accountId: account.id });
    expect(await crm.tasks.delete(task.id)).toEqual({ id: task.id, deleted: true });
    const signal = await crm.healthScores.pushSignal(account.id, {
      source: "psa",
      type: "escalation",
      severity: "HIGH",
      score: 80,
    });
    expect(signal).toMatchObject({ accountId: account.id, score: expect.any(Number) });
    expect((await crm.healthScores.get(account.id)).externalSignals).toHaveLength(1);
    expect(await crm.mrr.get()).toMatchObject({ totals: expect.any(Object) });
    expect(await crm.status.get()).toMatchObject({ status: "ok" });
    const events = [];
    for await (const event of crm.events.list({ resource: "account" })) events.push(event);
    expect(events.map((event) => event.event)).toEqual(["account.created", "account.updated"]);
    expect((await crm.events.get(events[0]?.id ?? "")).id).toBe(events[0]?.id);
    // force is a boolean in the document, so a typed client passes true; the query string carries force=true.
    expect(await crm.accounts.delete(account.id, { force: true })).toEqual({ id: account.id, deleted: true });
    const gone = await crm.accounts.get(account.id).catch((error) => error);
    expect(gone).toMatchObject({ status: 404, code: "not_found" });

    const etag = await crm.tasks.create({ title: "Guarded" });
    const stale = await crm.tasks
      .update(etag.id, { title: "x" }, { headers: { "If-Match": '"not-the-current-tag-000000000"' } })
      .catch((error) => error);
    expect(stale).toBeInstanceOf(ApiError);
    expect(stale).toMatchObject({ status: 412, code: "precondition_failed" });
    const missing = await crm.deals.get("nosuchdeal00").catch((error) => error);
    expect(missing).toMatchObject({ status: 404, code: "not_found", requestId: expect.stringMatching(/^req_/) });
  });
  it("takes the boolean query parameters as booleans: force, isOnline, isEndOfLife, includeArchived", async () => {
    const crm = createClient({ apiKey: await target.newKey(), baseUrl: target.baseUrl() });
    const kept = await crm.accounts.create({ name: "Kept Ltd" });
    expect(await crm.accounts.delete(kept.id, { force: false })).toMatchObject({
      id: kept.id,
      lifecycleStatus: "CHURNED",
    });
    expect((await crm.accounts.get(kept.id)).lifecycleStatus).toBe("CHURNED");
    await crm.devices.create({ rmmAgentId: "on-1", accountId: kept.id, hostname: "ON-1" });
    await crm.devices.create({ rmmAgentId: "off-1", accountId: kept.id, hostname: "OFF-1", isOnline: false });
    const offline = [];
    for await (const device of crm.devices.list({ isOnline: false, isEndOfLife: false })) offline.push(device.hostname);
    expect(offline).toEqual(["OFF-1"]);
    const field = await crm.customFields.create({ resource: "account", key: "seats", label: "Seats", type: "number" });
    await crm.customFields.delete(field.id);
    const active = [];
    for await (const item of crm.customFields.list()) active.push(item.key);
    const all = [];
    for await (const item of crm.customFields.list({ includeArchived: true })) all.push(item.key);
    expect({ active, all }).toEqual({ active: [], all: ["seats"] });
  });
}

/**
 * Webhook endpoints through the client: create, list, test (`crm.webhookEndpoints.test()`), deliveries, redeliver,
 * rotate, delete, and a real delivery verified with `verifyWebhook`. Every POST carries an `Idempotency-Key`.
 */
export function webhookCases(target: SdkTarget): void {
  it("manages webhook endpoints: create, list, test, deliveries, rotate, delete", async () => {
    const crm = createClient({ apiKey: await target.newKey(), baseUrl: target.baseUrl() });
    const endpoint = await crm.webhookEndpoints.create({ url: target.receiver().url, events: ["account.created"] });
    const listed = [];
    for await (const item of crm.webhookEndpoints.list()) listed.push(item.id);
    expect(listed).toEqual([endpoint.id]);
    const sent = await crm.webhookEndpoints.test(endpoint.id);
    expect(sent.attempt.success).toBe(true);
    const attempts = [];
    for await (const attempt of crm.webhookEndpoints.deliveries(endpoint.id, { limit: 10 })) attempts.push(attempt);
    expect(attempts.map((attempt) => attempt.eventId)).toEqual([sent.eventId]);
    const again = await crm.webhookEndpoints.redeliver(attempts[0]?.deliveryId ?? "");
    expect(again.eventId).toBe(sent.eventId);
    const rotated = await crm.webhookEndpoints.rotateSecret(endpoint.id);
    expect(rotated.secret).toMatch(/^whsec_/);
    expect(await crm.webhookEndpoints.update(endpoint.id, { enabled: false })).toMatchObject({ enabled: false });
    expect(await crm.webhookEndpoints.delete(endpoint.id)).toEqual({ id: endpoint.id, deleted: true });
  });
  it("verifies a real webhook delivery and refuses a tampered or stale one", async () => {
    const crm = createClient({ apiKey: await target.newKey(), baseUrl: target.baseUrl() });
    const endpoint = await crm.POST("/webhook-endpoints", { body: { url: target.receiver().url, events: ["*"] } });
    const before = target.receiver().requests.length;
    const sent = await crm.POST("/webhook-endpoints/{id}/test", { params: { path: { id: endpoint.id } } });
    const request = target.receiver().requests[before];
    if (!request) throw new Error("no delivery received");
    const event = verifyWebhook(request.body, request.headers as Record<string, string>, endpoint.secret);
    expect(event.id).toBe(sent.eventId);
    expect(() => verifyWebhook(`${request.body} `, request.headers as Record<string, string>, endpoint.secret)).toThrow(
      /does not match/,
    );
    const later = new Date(Date.now() + 301_000);
    expect(() =>
      verifyWebhook(request.body, request.headers as Record<string, string>, endpoint.secret, { now: later }),
    ).toThrow(/tolerance/);
  });
}

/** Path-typed calls, pagination over 1,050 records and following the events feed. */
export function clientCases(target: SdkTarget): void {
  it("asks for strict sort handling on every request: an invalid sort throws ApiError 422 naming the allowed fields", async () => {
    const sent: Array<string | null> = [];
    const recording: typeof fetch = (input, init) => {
      sent.push(new Headers(init?.headers).get("prefer"));
      return fetch(input, init);
    };
    const crm = createClient({ apiKey: await target.newKey(), baseUrl: target.baseUrl(), fetch: recording });
    const account = await crm.accounts.create({ name: "Strict Ltd" });
    await crm.accounts.get(account.id);
    const all = async (query: { sort: string }, headers?: Record<string, string>) => {
      const names: string[] = [];
      for await (const item of crm.accounts.list(query, { headers })) names.push(item.name);
      return names;
    };
    expect(await all({ sort: "name:desc" })).toEqual(["Strict Ltd"]);
    expect(sent).toEqual(["handling=strict", "handling=strict", "handling=strict"]);
    const refused = await all({ sort: "colour:desc" }).catch((error) => error);
    expect(refused).toBeInstanceOf(ApiError);
    expect(refused).toMatchObject({ status: 422, code: "validation_error", details: [{ path: ["sort"] }] });
    expect(refused.details[0].message).toContain("allowed fields: name, createdAt");
    const typed = await crm.GET("/accounts", { params: { query: { sort: "name:sideways" } } }).catch((error) => error);
    expect(typed).toMatchObject({ status: 422, code: "validation_error" });
    // A call's own Prefer replaces the client's: the API then ignores the pair, as for a client that does not ask.
    expect(await all({ sort: "colour:desc" }, { Prefer: "handling=lenient" })).toEqual(["Strict Ltd"]);
  });

  it("creates, reads, updates, lists and deletes through typed calls, and throws ApiError with the envelope", async () => {
    const crm = createClient({ apiKey: await target.newKey(), baseUrl: target.baseUrl() });
    const account = await crm.POST("/accounts", { body: { name: "Typed Ltd", externalId: "typed-1" } });
    expect(account).toMatchObject({ name: "Typed Ltd", externalId: "typed-1" });
    const read = await crm.GET("/accounts/{id}", { params: { path: { id: account.id } } });
    expect(read).toEqual(account);
    const updated = await crm.PATCH("/accounts/{id}", {
      params: { path: { id: account.id } },
      body: { industry: "Legal" },
    });
    expect(updated.industry).toBe("Legal");
    const task = await crm.POST("/tasks", { body: { title: "Call", accountId: account.id } });
    expect(await crm.DELETE("/tasks/{id}", { params: { path: { id: task.id } } })).toEqual({
      id: task.id,
      deleted: true,
    });
    const bulk = await crm.POST("/devices/bulk", {
      body: { devices: [{ rmmAgentId: "sdk-1", hostname: "pc", accountId: account.id }] },
    });
    expect(bulk).toMatchObject({ created: 1 });
    expect(await crm.GET("/mrr")).toMatchObject({ totals: expect.any(Object), categories: expect.any(Array) });
    expect(await crm.GET("/health-scores/{accountId}", { params: { path: { accountId: account.id } } })).toMatchObject({
      accountId: account.id,
    });
    const status = await crm.GET("/status");
    expect(status).toMatchObject({ status: expect.any(String) });

    const missing = await crm.GET("/accounts/{id}", { params: { path: { id: "nosuchaccount00" } } }).catch((e) => e);
    expect(missing).toBeInstanceOf(ApiError);
    expect(missing).toMatchObject({ status: 404, code: "not_found", requestId: expect.stringMatching(/^req_/) });
    const invalid = await crm.POST("/accounts", { body: { name: "" } }).catch((e) => e);
    expect(invalid).toMatchObject({ status: 422, code: "validation_error", details: [{ path: ["name"] }] });
    expect(invalid.docsUrl).toMatch(/\/docs\/errors#validation_error$/);
  });

  it("iterates over 1,050 records across pages", { timeout: 60_000 }, async () => {
    const crm = createClient({ apiKey: await target.newKey(), baseUrl: target.baseUrl() });
    for (let batch = 0; batch < 3; batch++) {
      const accounts = Array.from({ length: 350 }, (_, i) => ({
        name: `A${batch}-${i}`,
        externalId: `p-${batch}-${i}`,
      }));
      await crm.POST("/accounts/bulk", { body: { accounts } });
    }
    const seen = new Set<string>();
    for await (const account of crm.list("/accounts", { limit: 100 })) seen.add(account.id);
    expect(seen.size).toBe(1_050);
  });

  it("follows the events feed and stops when aborted", async () => {
    const crm = createClient({ apiKey: await target.newKey(), baseUrl: target.baseUrl() });
    await crm.POST("/accounts", { body: { name: "First" } });
    const abort = new AbortController();
    const seen: string[] = [];
    let cursor: string | null = null;
    const following = (async () => {
      for await (const page of crm.events.follow({ signal: abort.signal, intervalMs: 50 })) {
        for (const event of page.events) seen.push(`${event.event}:${(event.data as { name?: string }).name}`);
        cursor = page.cursor;
        if (seen.length === 2) abort.abort();
      }
    })();
    await new Promise((resolve) => setTimeout(resolve, 200));
    await crm.POST("/accounts", { body: { name: "Second" } });
    await following;
    expect(seen).toEqual(["account.created:First", "account.created:Second"]);
    expect(cursor).toEqual(expect.any(String));
  });
}

/** A create retried under injected 503s with one idempotency key creates exactly one record. */
export function retryCases(target: SdkTarget): void {
  it("retries a create under injected 503s with one idempotency key: exactly one record", async () => {
    const key = await target.newKey();
    let failures = 0;
    const keys: string[] = [];
    // The server processes the request, then the client is told 503: the classic lost answer.
    const flaky: typeof fetch = async (input, init) => {
      const response = await fetch(input, init);
      const request = new Request(input, init);
      if (request.method === "POST") keys.push(request.headers.get("idempotency-key") ?? "");
      if (request.method === "POST" && failures < 2) {
        failures++;
        await response.arrayBuffer();
        return new Response("unavailable", { status: 503, headers: { "Retry-After": "0" } });
      }
      return response;
    };
    const crm = createClient({ apiKey: key, baseUrl: target.baseUrl(), fetch: flaky });
    const created = await crm.POST("/accounts", { body: { name: "Exactly once" } });
    expect(created.name).toBe("Exactly once");
    expect(keys).toHaveLength(3);
    expect(new Set(keys).size).toBe(1);
    const all = [];
    for await (const account of crm.list("/accounts")) all.push(account);
    expect(all.filter((account) => account.name === "Exactly once")).toHaveLength(1);
  });
}
