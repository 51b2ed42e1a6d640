// Sparse fieldsets (`fields=`, docs/api-contract.md §4.9.4) on every get and list, and `expand=account` on contacts,
// deals, devices, tasks and notes, with the referenced account fetched once a page.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { client, createTestOrg, startApi, type TestServer } from "../../helpers/api";

let server: TestServer;
let api: ReturnType<typeof client>;
let account: { id: string; name: string };

beforeAll(async () => {
  server = await startApi();
  api = client(server.url, (await createTestOrg()).key);
  account = (await api("POST", "/accounts", { name: "Expanded Ltd", industry: "Legal" })).body.data;
  await api("POST", "/deals", { name: "Deal", accountId: account.id });
  await api("POST", "/devices", { rmmAgentId: "fx-1", hostname: "pc", accountId: account.id });
  await api("POST", "/tasks", { title: "Linked", accountId: account.id });
  await api("POST", "/tasks", { title: "Unlinked" });
  await api("POST", "/notes", { objectType: "Account", objectId: account.id, body: "On the account" });
  await api("POST", "/contacts", { email: "fx@example.com", accountId: account.id });
});
afterAll(() => server.close());

describe("fields", () => {
  it("returns only id and the listed fields, on gets and lists", async () => {
    const one = await api("GET", `/accounts/${account.id}?fields=name,industry`);
    expect(one.body.data).toEqual({ id: account.id, name: "Expanded Ltd", industry: "Legal" });
    const list = await api("GET", "/deals?fields=name&limit=10");
    expect(list.body.data).toEqual([{ id: expect.any(String), name: "Deal" }]);
    expect(list.body).toMatchObject({ hasMore: false, nextCursor: expect.any(String) });
    const events = await api("GET", "/events?fields=event&limit=2");
    expect(Object.keys(events.body.data[0]).sort()).toEqual(["event", "id"]);
  });

  it("refuses an unknown field, and fields where no record is answered, with 422", async () => {
    const unknown = await api("GET", "/accounts?fields=name,colour");
    expect(unknown.status).toBe(422);
    expect(unknown.body.error.details).toEqual([{ path: ["fields"], message: expect.stringContaining("colour") }]);
    expect((await api("GET", "/mrr?fields=totals")).status).toBe(422);
  });
});

describe("expand=account", () => {
  it("adds the account to deals, devices, tasks and notes, null where none is named", async () => {
    for (const path of ["/deals", "/devices", "/notes"]) {
      const res = await api("GET", `${path}?expand=account`);
      expect(res.status, path).toBe(200);
      for (const record of res.body.data)
        expect(record.account, path).toMatchObject({ id: account.id, name: "Expanded Ltd" });
    }
    const tasks = (await api("GET", "/tasks?expand=account")).body.data;
    expect(
      tasks.map((task: { title: string; account: { id: string } | null }) => [task.title, task.account?.id ?? null]),
    ).toEqual([
      ["Linked", account.id],
      ["Unlinked", null],
    ]);
    const deal = (await api("GET", "/deals")).body.data[0];
    expect((await api("GET", `/deals/${deal.id}?expand=account&fields=name`)).body.data).toEqual({
      id: deal.id,
      name: "Deal",
      account: expect.objectContaining({ id: account.id }),
    });
  });

  it("adds the account to each relationship of a contact", async () => {
    const contacts = (await api("GET", "/contacts?expand=account")).body.data;
    expect(contacts[0].accounts[0]).toMatchObject({ accountId: account.id, account: { name: "Expanded Ltd" } });
  });

  it("is refused where it does not apply", async () => {
    const res = await api("GET", "/accounts?expand=account");
    expect(res.status).toBe(422);
    expect(res.body.error.details[0].path).toEqual(["expand"]);
    expect((await api("GET", "/deals?expand=owner")).status).toBe(422);
  });

  it("is documented: fields and expand parameters, and the optional account", async () => {
    const document = (await client(server.url)("GET", "/openapi.json")).body;
    const names = (path: string) => document.paths[path].get.parameters.map((p: { name: string }) => p.name);
    expect(names("/deals")).toEqual(expect.arrayContaining(["fields", "expand"]));
    expect(names("/accounts")).toContain("fields");
    expect(names("/accounts")).not.toContain("expand");
    expect(document.components.schemas.Deal.properties.account.description).toMatch(/expand=account/);
  });
});
