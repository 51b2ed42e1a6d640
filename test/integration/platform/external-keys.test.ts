// External keys (`externalId` of accounts, `rmmAgentId` of devices) are stored in Unicode NFC and compared exactly,
// case included, in single writes, bulk matching and filters (docs/api-contract.md §2.3, §2.6, §4.9.3;
// docs/architecture.md, "Data and migrations"); the migration that normalised the keys stored before.
import { readFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { prisma } from "../../../server/db/transaction";
import { client, createTestOrg, startApi, type TestServer } from "../../helpers/api";

const NFC = "caf\u00e9";
const NFD = "cafe\u0301";

let server: TestServer;
beforeAll(async () => {
  server = await startApi();
});
afterAll(() => server.close());

describe("externalId", () => {
  it("is one key whether café is sent composed or decomposed: a create clashes, bulk updates, filters find it", async () => {
    const org = await createTestOrg();
    const api = client(server.url, org.key);
    const created = await api("POST", "/accounts", { name: "Composed", externalId: NFD });
    expect(created.status).toBe(201);
    expect(created.body.data.externalId).toBe(NFC);
    const clash = await api("POST", "/accounts", { name: "Decomposed", externalId: NFC });
    expect(clash.status).toBe(422);
    expect(clash.body.error.details[0].path).toEqual(["externalId"]);
    const other = (await api("POST", "/accounts", { name: "Other", externalId: "other" })).body.data;
    expect((await api("PATCH", `/accounts/${other.id}`, { externalId: NFD })).status).toBe(422);

    const bulk = await api("POST", "/accounts/bulk", { accounts: [{ name: "Bulk renamed", externalId: NFD }] });
    expect(bulk.body.data.results).toEqual([{ externalId: NFC, id: created.body.data.id, action: "updated" }]);
    const twice = await api("POST", "/accounts/bulk", {
      accounts: [
        { name: "One", externalId: NFC },
        { name: "Two", externalId: NFD },
      ],
    });
    expect(twice.status).toBe(422);

    for (const query of [`externalId[eq]=${encodeURIComponent(NFD)}`, `externalId[in]=${encodeURIComponent(NFD)},x`]) {
      const found = await api("GET", `/accounts?${query}`);
      expect(
        found.body.data.map((account: { id: string }) => account.id),
        query,
      ).toEqual([created.body.data.id]);
    }
    // contains searches the normalised text too: "fe" plus a combining accent is "fé".
    const search = await api("GET", `/accounts?externalId[contains]=${encodeURIComponent("fe\u0301")}`);
    expect(search.body.data.map((account: { id: string }) => account.id)).toEqual([created.body.data.id]);
    const stored = await prisma().account.findMany({ where: { orgId: org.orgId }, select: { externalId: true } });
    expect(stored.map((row) => row.externalId).sort()).toEqual([NFC, "other"]);
  });

  it("keeps case: EXT-A and ext-a are two accounts, and each filter finds its own", async () => {
    const api = client(server.url, (await createTestOrg()).key);
    const upper = (await api("POST", "/accounts", { name: "Upper", externalId: "EXT-A" })).body.data;
    const lower = (await api("POST", "/accounts", { name: "Lower", externalId: "ext-a" })).body.data;
    expect(upper.id).not.toBe(lower.id);
    const ids = async (query: string) =>
      (await api("GET", `/accounts?${query}`)).body.data.map((account: { id: string }) => account.id);
    expect(await ids("externalId[eq]=ext-a")).toEqual([lower.id]);
    expect(await ids("externalId[in]=EXT-A")).toEqual([upper.id]);
    expect(await ids("externalId[ne]=EXT-A")).toEqual([lower.id]);
    // contains is a search: case-insensitive, as for every text field.
    expect((await ids("externalId[contains]=xt-a")).sort()).toEqual([upper.id, lower.id].sort());
    const bulk = await api("POST", "/accounts/bulk", { accounts: [{ name: "Lower again", externalId: "ext-a" }] });
    expect(bulk.body.data.results).toEqual([{ externalId: "ext-a", id: lower.id, action: "updated" }]);
  });
});

describe("rmmAgentId", () => {
  it("is matched in NFC by single writes, bulk upserts and filters", async () => {
    const org = await createTestOrg();
    const api = client(server.url, org.key);
    const account = (await api("POST", "/accounts", { name: "Devices" })).body.data;
    const agent = `agent-${NFD}`;
    const device = await api("POST", "/devices", { rmmAgentId: agent, accountId: account.id, hostname: "pc-1" });
    expect(device.body.data.rmmAgentId).toBe(`agent-${NFC}`);
    const clash = await api("POST", "/devices", { rmmAgentId: `agent-${NFC}`, accountId: account.id, hostname: "x" });
    expect(clash.status).toBe(422);
    const bulk = await api("POST", "/devices/bulk", {
      devices: [{ rmmAgentId: agent, accountId: account.id, hostname: "pc-1b" }],
    });
    expect(bulk.body.data.results).toEqual([
      { rmmAgentId: `agent-${NFC}`, id: device.body.data.id, action: "updated" },
    ]);
    const found = await api("GET", `/devices?rmmAgentId[eq]=${encodeURIComponent(agent)}`);
    expect(found.body.data.map((row: { hostname: string }) => row.hostname)).toEqual(["pc-1b"]);
    expect((await api("GET", `/devices?rmmAgentId[eq]=${encodeURIComponent(`AGENT-${NFC}`)}`)).body.data).toEqual([]);
  });
});

describe("the migration that normalised stored keys", () => {
  it("normalises keys stored decomposed, and leaves one whose NFC form another record already holds", async () => {
    const org = await createTestOrg();
    const api = client(server.url, org.key);
    const ids: Record<string, string> = {};
    for (const [name, key] of [
      ["plain", NFC],
      ["decomposed twin", NFD],
      ["decomposed alone", `re\u0301sume\u0301`],
    ] as const) {
      ids[name] = (await api("POST", "/accounts", { name, externalId: `tmp-${name}` })).body.data.id;
      // As the service stored keys before it normalised them.
      await prisma().account.update({ where: { id: ids[name] }, data: { externalId: key } });
    }
    const file = path.resolve(
      import.meta.dirname,
      "../../../prisma/migrations/20261127100100_external_keys_nfc/migration.sql",
    );
    for (const statement of readFileSync(file, "utf8").split(/;\n/))
      if (statement.replace(/--.*$/gm, "").trim()) await prisma().$executeRawUnsafe(statement);
    const stored = await prisma().account.findMany({
      where: { orgId: org.orgId },
      select: { id: true, externalId: true },
    });
    const byId = Object.fromEntries(stored.map((row) => [row.id, row.externalId]));
    expect(byId[ids.plain as string]).toBe(NFC);
    expect(byId[ids["decomposed twin"] as string]).toBe(NFD);
    expect(byId[ids["decomposed alone"] as string]).toBe("r\u00e9sum\u00e9");
    const matched = await api("POST", "/accounts/bulk", {
      accounts: [{ name: "Again", externalId: `re\u0301sume\u0301` }],
    });
    expect(matched.body.data.results[0]).toMatchObject({ id: ids["decomposed alone"], action: "updated" });
  });
});
