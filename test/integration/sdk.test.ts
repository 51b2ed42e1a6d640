// Issue #14 item 1: the TypeScript client (sdk/) against a live server: its types match the served document, every
// kind of operation, pagination over 1,050 records, a create retried under injected 503s that creates exactly one
// record, typed errors, webhook verification of a real delivery, and following the events feed.
process.env.WEBHOOKS_ALLOW_LOOPBACK = "true";

import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SDK_SCHEMA_FILE, sdkSchemaText } from "../../scripts/sdk-generate";
import { ApiError, createClient, verifyWebhook } from "../../sdk/src/index";
import { createTestOrg, startApi, type TestServer } from "../helpers/api";
import { type Receiver, startReceiver } from "../helpers/receiver";

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

it("has types generated from the document the API serves (npm run sdk:generate)", async () => {
  expect(readFileSync(SDK_SCHEMA_FILE, "utf8") === (await sdkSchemaText()), "run npm run sdk:generate").toBe(true);
});

describe("the client against a live server", () => {
  it("creates, reads, updates, lists and deletes through typed calls, and throws ApiError with the envelope", async () => {
    const org = await createTestOrg();
    const crm = createClient({ apiKey: org.key, baseUrl: server.url });
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
    const org = await createTestOrg();
    const crm = createClient({ apiKey: org.key, baseUrl: server.url });
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

  it("retries a create under injected 503s with one idempotency key: exactly one record", async () => {
    const org = await createTestOrg();
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
    const crm = createClient({ apiKey: org.key, baseUrl: server.url, fetch: flaky });
    const created = await crm.POST("/accounts", { body: { name: "Exactly once" } });
    expect(created.name).toBe("Exactly once");
    expect(keys).toHaveLength(3);
    expect(new Set(keys).size).toBe(1);
    const all = [];
    for await (const account of crm.list("/accounts")) all.push(account);
    expect(all.filter((account) => account.name === "Exactly once")).toHaveLength(1);
  });

  it("verifies a real webhook delivery and refuses a tampered or stale one", async () => {
    const org = await createTestOrg();
    const crm = createClient({ apiKey: org.key, baseUrl: server.url });
    const endpoint = await crm.POST("/webhook-endpoints", { body: { url: receiver.url, events: ["*"] } });
    const before = receiver.requests.length;
    const sent = await crm.POST("/webhook-endpoints/{id}/test", { params: { path: { id: endpoint.id } } });
    const request = receiver.requests[before];
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

  it("follows the events feed and stops when aborted", async () => {
    const org = await createTestOrg();
    const crm = createClient({ apiKey: org.key, baseUrl: server.url });
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
});
