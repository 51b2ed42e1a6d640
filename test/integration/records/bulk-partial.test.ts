// Per-item bulk results (docs/api-contract.md §4.14). `?mode=partial` commits the valid items of a bulk request
// together and answers 207 with one result per item; the default stays all-or-none (docs/api-contract.md §4).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { prisma } from "../../../server/db/transaction";
import { client, createTestOrg, startApi, type TestServer } from "../../helpers/api";

let server: TestServer;
beforeAll(async () => {
  server = await startApi();
});
afterAll(() => server.close());

async function newOrg() {
  const org = await createTestOrg();
  const api = client(server.url, org.key);
  const accountId = (await api("POST", "/accounts", { name: "Parent", externalId: "parent" })).body.data.id;
  return { ...org, api, accountId };
}

const eventCount = (orgId: string, name: string) => prisma().event.count({ where: { orgId, name } });

describe("POST /accounts/bulk?mode=partial", () => {
  it("commits the valid items and answers for each one; the default mode refuses the same request whole", async () => {
    const { api, orgId } = await newOrg();
    const items = [
      { name: "New one", externalId: "n-1" },
      { name: "Parent renamed", externalId: "parent" },
      { name: "", externalId: "bad-name" },
      { name: "Twice", externalId: "n-1" },
      { name: "Extra", externalId: "x-1", colour: "red" },
    ];
    const all = await api("POST", "/accounts/bulk", { accounts: items });
    expect(all.status).toBe(422);
    expect(all.body.error.details.map((d: { path: string[] }) => d.path.join("."))).toEqual([
      "accounts.2.name",
      "accounts.4.colour",
    ]);
    expect(await prisma().account.count({ where: { orgId } })).toBe(1);

    const partial = await api("POST", "/accounts/bulk?mode=partial", { accounts: items });
    expect(partial.status).toBe(207);
    expect(partial.body.data).toMatchObject({ mode: "partial", created: 1, updated: 1, failed: 3, total: 5 });
    const results = partial.body.data.results;
    expect(results.map((r: { status: string }) => r.status)).toEqual(["created", "updated", "error", "error", "error"]);
    expect(results[2].error).toEqual({
      code: "validation_error",
      message: "The item is not valid",
      details: [{ path: ["name"], message: expect.any(String) }],
    });
    expect(results[3].error.details).toEqual([{ path: ["externalId"], message: "duplicates item 0" }]);
    expect(results[4].error.details).toEqual([{ path: ["colour"], message: "Unrecognized field colour" }]);
    expect((await api("GET", `/accounts/${results[0].id}`)).body.data.name).toBe("New one");
    expect((await api("GET", `/accounts/${results[1].id}`)).body.data.name).toBe("Parent renamed");
    expect(await prisma().account.count({ where: { orgId } })).toBe(2);
    expect(await eventCount(orgId, "account.created")).toBe(2);
    expect(await eventCount(orgId, "account.updated")).toBe(1);
  });

  it("answers 207 with every item refused when none is valid, writing nothing", async () => {
    const { api, orgId } = await newOrg();
    const res = await api("POST", "/accounts/bulk?mode=partial", { accounts: [{ name: "" }, { externalId: "x" }] });
    expect(res.status).toBe(207);
    expect(res.body.data).toMatchObject({ created: 0, updated: 0, failed: 2, total: 2 });
    expect(await prisma().account.count({ where: { orgId } })).toBe(1);
    expect((await api("POST", "/accounts/bulk?mode=everything", { accounts: [{ name: "x" }] })).status).toBe(422);
    expect((await api("POST", "/accounts/bulk?limit=3", { accounts: [{ name: "x" }] })).status).toBe(422);
    expect((await api("POST", "/accounts?mode=partial", { name: "x" })).status).toBe(422);
  });

  it("replays a 207 exactly under the same Idempotency-Key", async () => {
    const { api, orgId } = await newOrg();
    const body = { accounts: [{ name: "Once", externalId: "once" }, { name: "" }] };
    const headers = { "Idempotency-Key": "partial-1" };
    const first = await api("POST", "/accounts/bulk?mode=partial", body, headers);
    const again = await api("POST", "/accounts/bulk?mode=partial", body, headers);
    expect(first.status).toBe(207);
    expect(again.status).toBe(207);
    expect(again.headers.get("x-idempotent-replay")).toBe("true");
    expect(again.body.data).toEqual(first.body.data);
    expect(await prisma().account.count({ where: { orgId, externalId: "once" } })).toBe(1);
  });
});

describe("the other bulk endpoints in partial mode", () => {
  it("contacts: an unknown account and a duplicate email are refused, the rest committed", async () => {
    const { api, orgId, accountId } = await newOrg();
    const res = await api("POST", "/contacts/bulk?mode=partial", {
      contacts: [
        { email: "a@p.example", accountId },
        { email: "b@p.example", accountId: "nosuchaccount00" },
        { email: "A@p.example" },
        { email: "not an email" },
      ],
    });
    expect(res.status).toBe(207);
    expect(res.body.data.results.map((r: { status: string }) => r.status)).toEqual([
      "created",
      "error",
      "error",
      "error",
    ]);
    expect(res.body.data.results[1].error.details[0].path).toEqual(["accountId"]);
    expect(res.body.data.results[2].error.details[0].path).toEqual(["email"]);
    expect(await prisma().contact.count({ where: { orgId } })).toBe(1);
    expect(await eventCount(orgId, "contact.created")).toBe(1);
  });

  it("deals: created items answer 207, an unknown account is refused", async () => {
    const { api, orgId, accountId } = await newOrg();
    const res = await api("POST", "/deals/bulk?mode=partial", {
      deals: [
        { name: "One", accountId },
        { name: "Two", accountId: "nosuchaccount00" },
        { name: "Three", accountId, probability: 101 },
        { name: "Four", accountId },
      ],
    });
    expect(res.status).toBe(207);
    expect(res.body.data).toMatchObject({ created: 2, updated: 0, failed: 2, total: 4 });
    expect(res.body.data.results[1].error.details).toEqual([
      { path: ["accountId"], message: expect.stringContaining("no account") },
    ]);
    expect(await prisma().deal.count({ where: { orgId } })).toBe(2);
    expect(await eventCount(orgId, "deal.created")).toBe(2);
    const whole = await api("POST", "/deals/bulk", { deals: [{ name: "Only", accountId: "nosuchaccount00" }] });
    expect(whole.status).toBe(422);
  });

  it("devices: an upsert, a new one and an unknown account", async () => {
    const { api, orgId, accountId } = await newOrg();
    await api("POST", "/devices", { rmmAgentId: "agent-1", hostname: "old", accountId });
    const res = await api("POST", "/devices/bulk?mode=partial", {
      devices: [
        { rmmAgentId: "agent-1", hostname: "renamed", accountId },
        { rmmAgentId: "agent-2", hostname: "new", accountId },
        { rmmAgentId: "agent-3", hostname: "lost", accountId: "nosuchaccount00" },
      ],
    });
    expect(res.status).toBe(207);
    expect(res.body.data.results.map((r: { status: string }) => r.status)).toEqual(["updated", "created", "error"]);
    expect(await prisma().device.count({ where: { orgId } })).toBe(2);
    expect(await eventCount(orgId, "device.updated")).toBe(1);
  });
});
