// Custom fields (docs/api-contract.md §2.13, §4.9.5, §4.16): definitions and their events, typed values on every
// resource (create, update, bulk, reads, lists, events), every refusal, filters and sort with cursors, the JSON Schema
// of an organisation's fields, isolation between organisations, the purge of archived values, and the OpenAPI
// document staying the same bytes whatever an organisation defines.
import { InngestTestEngine } from "@inngest/test";
import Ajv2020 from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { purgeArchivedCustomFieldsFunction } from "../../../inngest/functions/purge-archived-custom-fields";
import { prisma } from "../../../server/db/transaction";
import { createCustomField } from "../../../server/records/custom-fields/service";
import { bumpFieldsVersion } from "../../../server/records/custom-fields/values";
import { SEED_ORIGIN } from "../../../server/records/events";
import { client, createKey, createTestOrg, expectKeysetPaging, startApi, type TestServer } from "../../helpers/api";

let server: TestServer;
let api: ReturnType<typeof client>;
let orgId: string;

type Api = ReturnType<typeof client>;

beforeAll(async () => {
  server = await startApi();
  const org = await createTestOrg();
  orgId = org.orgId;
  api = client(server.url, org.key);
});
afterAll(() => server.close());

/** Defines a field and expects 201. */
async function define(on: Api, body: Record<string, unknown>) {
  const res = await on("POST", "/custom-fields", body);
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.data;
}

/** The paths of a 422 answer's details, joined with dots. */
function paths(res: { status: number; body: { error?: { details?: Array<{ path: string[] }> } } }): string[] {
  expect(res.status, JSON.stringify(res.body)).toBe(422);
  return (res.body.error?.details ?? []).map((detail) => detail.path.join("."));
}

/** A fresh organisation with one field of every type on accounts. */
async function orgWithFields() {
  const org = await createTestOrg();
  const on = client(server.url, org.key);
  const fields = [
    {
      key: "tier",
      label: "Tier",
      type: "select",
      options: [
        { value: "gold", label: "Gold" },
        { value: "silver", label: "Silver" },
        { value: "bronze", label: "Bronze" },
      ],
    },
    { key: "seats", label: "Seats", type: "number" },
    { key: "managed", label: "Managed", type: "boolean" },
    { key: "renewal", label: "Renewal", type: "date" },
    { key: "onboarded_at", label: "Onboarded", type: "datetime" },
    {
      key: "stack",
      label: "Stack",
      type: "multiSelect",
      options: [
        { value: "m365", label: "Microsoft 365" },
        { value: "gws", label: "Google Workspace" },
        { value: "edr", label: "EDR" },
      ],
    },
    { key: "portal", label: "Portal", type: "url" },
    { key: "billing_email", label: "Billing email", type: "email" },
    { key: "arr", label: "ARR", type: "currency" },
    { key: "psa_note", label: "PSA note", type: "text" },
  ];
  const defined: Record<string, { id: string }> = {};
  for (const field of fields) defined[field.key] = await define(on, { resource: "account", ...field });
  return { ...org, api: on, defined };
}

const FULL = {
  tier: "gold",
  seats: 25,
  managed: true,
  renewal: "2027-03-31",
  onboarded_at: "2026-05-01T10:00:00+02:00",
  stack: ["m365", "edr"],
  portal: "https://portal.example.com/acme",
  billing_email: "billing@acme.example",
  arr: { amount: 42000.5, currency: "EUR" },
  psa_note: "  Key account  ",
};

describe("definitions", () => {
  it("creates, reads, lists, changes and archives a field, with its events", async () => {
    const created = await define(api, {
      resource: "account",
      key: "contract_tier",
      label: "Contract tier",
      type: "select",
      description: "Support tier",
      options: [
        { value: "gold", label: "Gold" },
        { value: "silver", label: "Silver" },
      ],
      searchable: true,
    });
    expect(created).toEqual({
      id: expect.any(String),
      resource: "account",
      key: "contract_tier",
      label: "Contract tier",
      type: "select",
      description: "Support tier",
      options: [
        { value: "gold", label: "Gold", archivedAt: null },
        { value: "silver", label: "Silver", archivedAt: null },
      ],
      required: false,
      searchable: true,
      createdAt: expect.any(String),
      updatedAt: created.createdAt,
      archivedAt: null,
    });
    expect((await api("GET", `/custom-fields/${created.id}`)).body.data).toEqual(created);
    const text = await define(api, { resource: "deal", key: "po_number", label: "PO", type: "text" });
    expect(text.options).toBeNull();

    const accountsOnly = await api("GET", "/custom-fields?resource=account");
    expect(accountsOnly.body.data.map((field: { key: string }) => field.key)).toContain("contract_tier");
    expect(accountsOnly.body.data.map((field: { key: string }) => field.key)).not.toContain("po_number");

    const patched = await api("PATCH", `/custom-fields/${created.id}`, {
      label: "Tier",
      required: true,
      options: [
        { value: "gold", label: "Gold" },
        { value: "silver", label: "Silver", archived: true },
        { value: "platinum", label: "Platinum" },
      ],
    });
    expect(patched.status, JSON.stringify(patched.body)).toBe(200);
    expect(patched.body.data).toMatchObject({ label: "Tier", required: true });
    expect(
      patched.body.data.options.map((o: { value: string; archivedAt: string | null }) => [o.value, !!o.archivedAt]),
    ).toEqual([
      ["gold", false],
      ["silver", true],
      ["platinum", false],
    ]);
    // The same change again changes nothing.
    const again = await api("PATCH", `/custom-fields/${created.id}`, { label: "Tier", required: true });
    expect(again.body.data.updatedAt).toBe(patched.body.data.updatedAt);

    const archived = await api("DELETE", `/custom-fields/${created.id}`);
    expect(archived.status).toBe(200);
    expect(archived.body.data.archivedAt).toEqual(expect.any(String));
    const twice = await api("DELETE", `/custom-fields/${created.id}`);
    expect(twice.body.data).toEqual(archived.body.data);
    expect((await api("GET", "/custom-fields?resource=account")).body.data).toEqual([]);
    const withArchived = await api("GET", "/custom-fields?resource=account&includeArchived=true");
    expect(withArchived.body.data.map((field: { id: string }) => field.id)).toEqual([created.id]);
    expect(paths(await api("PATCH", `/custom-fields/${created.id}`, { label: "Again" }))).toEqual(["id"]);

    const events = await api("GET", "/events?resource=custom_field");
    const mine = events.body.data.filter((event: { data: { id: string } }) => event.data.id === created.id);
    expect(mine.map((event: { event: string }) => event.event)).toEqual([
      "custom_field.created",
      "custom_field.updated",
      "custom_field.archived",
    ]);
    expect(mine[1].changedFields).toEqual(["label", "options", "required"]);
    expect(mine[1].previous).toMatchObject({ label: "Contract tier", required: false });
    expect(mine[2].changedFields).toEqual(["archivedAt"]);
    expect(mine[2].previous).toEqual({ archivedAt: null });
  });

  it("refuses bad definitions with 422 naming the field", async () => {
    const { api: on } = await orgWithFields();
    expect(
      paths(await on("POST", "/custom-fields", { resource: "account", key: "Bad-Key", label: "x", type: "text" })),
    ).toEqual(["key"]);
    expect(
      paths(await on("POST", "/custom-fields", { resource: "account", key: "seats", label: "x", type: "text" })),
    ).toEqual(["key"]);
    expect(paths(await on("POST", "/custom-fields", { resource: "lead", key: "a", label: "x", type: "text" }))).toEqual(
      ["resource"],
    );
    expect(
      paths(await on("POST", "/custom-fields", { resource: "account", key: "a", label: "x", type: "colour" })),
    ).toEqual(["type"]);
    expect(
      paths(
        await on("POST", "/custom-fields", {
          resource: "account",
          key: "a",
          label: "x",
          type: "text",
          options: [{ value: "a", label: "A" }],
        }),
      ),
    ).toEqual(["options"]);
    expect(
      paths(await on("POST", "/custom-fields", { resource: "account", key: "a", label: "x", type: "select" })),
    ).toEqual(["options"]);
    expect(
      paths(
        await on("POST", "/custom-fields", {
          resource: "account",
          key: "a",
          label: "x",
          type: "select",
          options: [
            { value: "a", label: "A" },
            { value: "a", label: "B" },
          ],
        }),
      ),
    ).toEqual(["options.1.value"]);
    const tier = (await on("GET", "/custom-fields?resource=account")).body.data.find(
      (field: { key: string }) => field.key === "tier",
    );
    expect(paths(await on("PATCH", `/custom-fields/${tier.id}`, { type: "text", key: "other" }))).toEqual([
      "type",
      "key",
    ]);
    expect(
      paths(await on("PATCH", `/custom-fields/${tier.id}`, { options: [{ value: "gold", label: "Gold" }] })),
    ).toEqual(["options"]);
    const seats = (await on("GET", "/custom-fields?resource=account")).body.data.find(
      (field: { key: string }) => field.key === "seats",
    );
    expect(paths(await on("PATCH", `/custom-fields/${seats.id}`, { options: [{ value: "a", label: "A" }] }))).toEqual([
      "options",
    ]);
    // An archived field keeps its key until its values are purged.
    await on("DELETE", `/custom-fields/${seats.id}`);
    const reused = await on("POST", "/custom-fields", { resource: "account", key: "seats", label: "x", type: "text" });
    expect(paths(reused)).toEqual(["key"]);
    expect(reused.body.error.message).toContain("archived");
    // Another resource may use the same key.
    await define(on, { resource: "device", key: "seats", label: "Seats", type: "number" });
  });

  it("refuses the 101st active field of a resource with 422 naming the limit, and takes one after an archive", async () => {
    const org = await createTestOrg();
    const on = client(server.url, org.key);
    for (let i = 0; i < 100; i++) {
      await createCustomField(
        org.orgId,
        { resource: "task", key: `f${i}`, label: `F${i}`, type: "number" },
        SEED_ORIGIN,
      );
    }
    const refused = await on("POST", "/custom-fields", { resource: "task", key: "f100", label: "F100", type: "text" });
    expect(paths(refused)).toEqual(["resource"]);
    expect(refused.body.error.message).toContain("100");
    await define(on, { resource: "contact", key: "f100", label: "F100", type: "text" });
    const first = (await on("GET", "/custom-fields?resource=task&limit=1")).body.data[0];
    await on("DELETE", `/custom-fields/${first.id}`);
    await define(on, { resource: "task", key: "f100", label: "F100", type: "text" });
  });

  it("needs custom_fields:read to read and custom_fields:write to change; admin:read reads", async () => {
    const reader = client(server.url, await createKey(orgId, ["custom_fields:read"]));
    const admin = client(server.url, await createKey(orgId, ["admin:read"]));
    const other = client(server.url, await createKey(orgId, ["accounts:write"]));
    expect((await reader("GET", "/custom-fields")).status).toBe(200);
    expect((await admin("GET", "/custom-fields/schema?resource=deal")).status).toBe(200);
    expect(
      (await reader("POST", "/custom-fields", { resource: "task", key: "x", label: "x", type: "text" })).status,
    ).toBe(403);
    expect((await other("GET", "/custom-fields")).status).toBe(403);
  });
});

describe("values", () => {
  it("creates with every type, answers typed values in reads, lists, bulk answers and events", async () => {
    const org = await orgWithFields();
    const res = await org.api("POST", "/accounts", { name: "Typed", customFields: FULL });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const expected = {
      ...FULL,
      onboarded_at: "2026-05-01T08:00:00.000Z",
      psa_note: "Key account",
    };
    expect(res.body.data.customFields).toEqual(expected);
    const account = res.body.data;
    expect((await org.api("GET", `/accounts/${account.id}`)).body.data).toEqual(account);
    const listed = await org.api("GET", "/accounts?limit=100");
    expect(listed.body.data.find((a: { id: string }) => a.id === account.id)).toEqual(account);
    const [event] = (await org.api("GET", "/events?resource=account")).body.data;
    expect(event.data).toEqual(account);

    const bulk = await org.api("POST", "/accounts/bulk", {
      accounts: [{ name: "Bulk one", externalId: "b-1", customFields: { seats: 3, tier: "bronze" } }],
    });
    expect(bulk.status, JSON.stringify(bulk.body)).toBe(200);
    const bulkId = bulk.body.data.results[0].id;
    expect((await org.api("GET", `/accounts/${bulkId}`)).body.data.customFields).toEqual({ seats: 3, tier: "bronze" });
    // A field without a value is absent, never null.
    const bare = await org.api("POST", "/accounts", { name: "Bare" });
    expect(bare.body.data.customFields).toEqual({});
  });

  it("merges a PATCH by key, clears a key with null, and names customFields.<key> in changedFields and previous", async () => {
    const org = await orgWithFields();
    const account = (await org.api("POST", "/accounts", { name: "Merge", customFields: { seats: 10, tier: "gold" } }))
      .body.data;
    const patched = await org.api("PATCH", `/accounts/${account.id}`, {
      employeeCount: 12,
      customFields: { seats: 11, tier: null, managed: false },
    });
    expect(patched.status, JSON.stringify(patched.body)).toBe(200);
    expect(patched.body.data.customFields).toEqual({ seats: 11, managed: false });
    const events = (await org.api("GET", "/events?types=account.updated")).body.data;
    expect(events).toHaveLength(1);
    expect([...events[0].changedFields].sort()).toEqual(
      ["employeeCount", "customFields.seats", "customFields.tier", "customFields.managed"].sort(),
    );
    expect(events[0].previous).toEqual({
      employeeCount: null,
      "customFields.seats": 10,
      "customFields.tier": "gold",
      "customFields.managed": null,
    });
    // The same values in another key order change nothing: no event, updatedAt kept.
    const same = await org.api("PATCH", `/accounts/${account.id}`, { customFields: { managed: false, seats: 11 } });
    expect(same.body.data.updatedAt).toBe(patched.body.data.updatedAt);
    const bulkSame = await org.api("POST", "/accounts/bulk", {
      accounts: [{ name: "Merge", customFields: { managed: false, seats: 11 } }],
    });
    expect(bulkSame.status).toBe(200);
    expect((await org.api("GET", "/events?types=account.updated")).body.data).toHaveLength(1);
  });

  it("refuses unknown keys, wrong types, archived options and fields, and missing required values with 422 naming customFields.<key>", async () => {
    const org = await orgWithFields();
    const create = (customFields: unknown) => org.api("POST", "/accounts", { name: "Refused", customFields });
    expect(paths(await create({ nope: 1 }))).toEqual(["customFields.nope"]);
    expect(paths(await create({ seats: "12" }))).toEqual(["customFields.seats"]);
    expect(paths(await create({ managed: "yes" }))).toEqual(["customFields.managed"]);
    expect(paths(await create({ renewal: "31/03/2027" }))).toEqual(["customFields.renewal"]);
    expect(paths(await create({ onboarded_at: "2026-05-01T10:00:00" }))).toEqual(["customFields.onboarded_at"]);
    expect(paths(await create({ tier: "platinum" }))).toEqual(["customFields.tier"]);
    expect(paths(await create({ stack: ["m365", "m365"] }))).toEqual(["customFields.stack.1"]);
    expect(paths(await create({ stack: Array.from({ length: 51 }, () => "m365") }))).toContain("customFields.stack");
    expect(paths(await create({ portal: "ftp://files.example.com" }))).toEqual(["customFields.portal"]);
    expect(paths(await create({ billing_email: "not-an-email" }))).toEqual(["customFields.billing_email"]);
    expect(paths(await create({ arr: { amount: 1, currency: "XYZ" } }))).toEqual(["customFields.arr.currency"]);
    expect(paths(await create({ arr: 100 }))).toEqual(["customFields.arr"]);
    expect(paths(await create({ psa_note: "x".repeat(1_001) }))).toEqual(["customFields.psa_note"]);
    expect(paths(await create({ "Bad Key": 1 }))).toEqual(["customFields.Bad Key"]);
    expect(paths(await create({ seats: 1, nope: 2, tier: 3 })).sort()).toEqual(
      ["customFields.nope", "customFields.tier"].sort(),
    );

    // An archived option is refused on writes; records that hold it keep it.
    const account = (await create({ tier: "silver" })).body.data;
    await org.api("PATCH", `/custom-fields/${org.defined.tier?.id}`, {
      options: [
        { value: "gold", label: "Gold" },
        { value: "silver", label: "Silver", archived: true },
        { value: "bronze", label: "Bronze" },
      ],
    });
    const refused = await create({ tier: "silver" });
    expect(paths(refused)).toEqual(["customFields.tier"]);
    expect(refused.body.error.message).toContain("archived");
    expect((await org.api("GET", `/accounts/${account.id}`)).body.data.customFields).toEqual({ tier: "silver" });

    // Required: on create, and never cleared.
    await org.api("PATCH", `/custom-fields/${org.defined.seats?.id}`, { required: true });
    expect(paths(await create({}))).toEqual(["customFields.seats"]);
    expect(paths(await org.api("POST", "/accounts", { name: "No values" }))).toEqual(["customFields.seats"]);
    const withSeats = (await create({ seats: 4 })).body.data;
    expect(paths(await org.api("PATCH", `/accounts/${withSeats.id}`, { customFields: { seats: null } }))).toEqual([
      "customFields.seats",
    ]);
    // A record made before the field became required may be changed without it.
    expect((await org.api("PATCH", `/accounts/${account.id}`, { name: "Renamed" })).status).toBe(200);

    // An archived field is refused on writes, and gone from reads.
    await org.api("DELETE", `/custom-fields/${org.defined.managed?.id}`);
    const archivedField = await org.api("PATCH", `/accounts/${withSeats.id}`, { customFields: { managed: true } });
    expect(paths(archivedField)).toEqual(["customFields.managed"]);
    expect(archivedField.body.error.details[0].message).toContain("archived");
  });

  it("refuses more than 16,384 bytes of values on one record with 422 naming customFields", async () => {
    const org = await createTestOrg();
    const on = client(server.url, org.key);
    for (let i = 0; i < 20; i++)
      await define(on, { resource: "contact", key: `note_${i}`, label: `Note ${i}`, type: "text" });
    const big = Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`note_${i}`, "x".repeat(1_000)]));
    const created = await on("POST", "/contacts", { email: "big@values.test", customFields: big });
    expect(paths(created)).toEqual(["customFields"]);
    expect(created.body.error.message).toContain("16384");
    const fits = Object.fromEntries(Array.from({ length: 15 }, (_, i) => [`note_${i}`, "x".repeat(1_000)]));
    const contact = (await on("POST", "/contacts", { email: "fits@values.test", customFields: fits })).body.data;
    expect(
      paths(
        await on("PATCH", `/contacts/${contact.id}`, {
          customFields: { note_15: "y".repeat(1_000), note_16: "z".repeat(1_000) },
        }),
      ),
    ).toEqual(["customFields"]);
    const bulk = await on("POST", "/contacts/bulk", {
      contacts: [
        { email: "fits@values.test", customFields: { note_15: "y".repeat(1_000), note_16: "z".repeat(1_000) } },
      ],
    });
    expect(paths(bulk)).toEqual(["contacts.0.customFields"]);
  });

  it("checks bulk items one by one: paths name the item, partial mode answers per item, required fields only for creates", async () => {
    const org = await orgWithFields();
    await org.api("PATCH", `/custom-fields/${org.defined.seats?.id}`, { required: true });
    const existing = (
      await org.api("POST", "/accounts", { name: "Existing", externalId: "e-1", customFields: { seats: 1 } })
    ).body.data;
    const items = [
      { name: "Update without seats", externalId: "e-1", customFields: { tier: "gold" } },
      { name: "Create without seats", externalId: "e-2" },
      { name: "Wrong type", externalId: "e-3", customFields: { seats: "many" } },
      { name: "Fine", externalId: "e-4", customFields: { seats: 9 } },
    ];
    const all = await org.api("POST", "/accounts/bulk", { accounts: items });
    expect(paths(all)).toEqual(["accounts.2.customFields.seats"]);
    const partial = await org.api("POST", "/accounts/bulk?mode=partial", { accounts: items });
    expect(partial.status, JSON.stringify(partial.body)).toBe(207);
    expect(partial.body.data.results.map((r: { status: string }) => r.status)).toEqual([
      "updated",
      "error",
      "error",
      "created",
    ]);
    expect(partial.body.data.results[1].error.details[0].path).toEqual(["customFields", "seats"]);
    expect(partial.body.data.results[2].error.details[0].path).toEqual(["customFields", "seats"]);
    expect((await org.api("GET", `/accounts/${existing.id}`)).body.data.customFields).toEqual({
      seats: 1,
      tier: "gold",
    });
  });

  it("works the same on contacts, deals, devices and tasks", async () => {
    const org = await createTestOrg();
    const on = client(server.url, org.key);
    const account = (await on("POST", "/accounts", { name: "Owner" })).body.data.id;
    const cases: Array<[string, string, Record<string, unknown>]> = [
      ["contact", "/contacts", { email: "cf@contact.test" }],
      ["deal", "/deals", { name: "Deal", accountId: account }],
      ["device", "/devices", { rmmAgentId: "ninja-1", accountId: account, hostname: "WS-1" }],
      ["task", "/tasks", { title: "Task" }],
    ];
    for (const [resource, path, body] of cases) {
      await define(on, { resource, key: "ninja_id", label: "NinjaOne id", type: "text" });
      await define(on, { resource, key: "sla_hours", label: "SLA", type: "number" });
      const created = await on("POST", path, { ...body, customFields: { ninja_id: "N-1", sla_hours: 4 } });
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      expect(created.body.data.customFields).toEqual({ ninja_id: "N-1", sla_hours: 4 });
      const patched = await on("PATCH", `${path}/${created.body.data.id}`, { customFields: { sla_hours: 8 } });
      expect(patched.body.data.customFields).toEqual({ ninja_id: "N-1", sla_hours: 8 });
      const listed = await on("GET", `${path}?customFields.sla_hours[gte]=8`);
      expect(
        listed.body.data.map((r: { id: string }) => r.id),
        resource,
      ).toEqual([created.body.data.id]);
      expect(paths(await on("POST", path, { ...body, customFields: { sla_hours: "4" } }))).toEqual([
        "customFields.sla_hours",
      ]);
    }
    const deals = await on("POST", "/deals/bulk", {
      deals: [
        { name: "Bulk deal", accountId: account, customFields: { ninja_id: "D-2" } },
        { name: "Bad", accountId: account, customFields: { sla_hours: true } },
      ],
    });
    expect(paths(deals)).toEqual(["deals.1.customFields.sla_hours"]);
    const devices = await on("POST", "/devices/bulk", {
      devices: [{ rmmAgentId: "ninja-1", accountId: account, hostname: "WS-1", customFields: { sla_hours: 2 } }],
    });
    expect(devices.status).toBe(200);
    const events = (await on("GET", "/events?types=device.updated")).body.data;
    expect(events.at(-1).changedFields).toEqual(["customFields.sla_hours"]);
    expect(events.at(-1).previous).toEqual({ "customFields.sla_hours": 8 });
  });
});

describe("keys that name members of Object.prototype", () => {
  it("are refused at definition with 422 naming key, every name of Object.prototype", async () => {
    const names = Object.getOwnPropertyNames(Object.prototype);
    expect(names).toEqual(expect.arrayContaining(["constructor", "__proto__", "toString", "hasOwnProperty"]));
    for (const key of names) {
      const res = await api("POST", "/custom-fields", { resource: "task", key, label: key, type: "number" });
      expect([...new Set(paths(res))], key).toEqual(["key"]);
    }
    expect((await api("GET", "/custom-fields?resource=task")).body.data).toEqual([]);
  });

  it("keep working where a field was defined before the rule: writes, required values in bulk, archiving, events", async () => {
    const org = await createTestOrg();
    const on = client(server.url, org.key);
    // Defined as the API allowed until now (every POST /tasks of such an organisation answered 422 since).
    const legacy = async (resource: "task" | "account", type: "number" | "text") => {
      const row = await prisma().customField.create({
        data: { orgId: org.orgId, resource, key: "constructor", label: "Constructor", type },
      });
      await bumpFieldsVersion(org.orgId);
      return row.id;
    };
    const taskField = await legacy("task", "number");
    await define(on, { resource: "task", key: "seats", label: "Seats", type: "number" });
    const task = await on("POST", "/tasks", { title: "Plain" });
    expect(task.status, JSON.stringify(task.body)).toBe(201);
    expect(task.body.data.customFields).toEqual({});
    const valued = await on("POST", "/tasks", { title: "Valued", customFields: { constructor: 5 } });
    expect(valued.body.data.customFields).toEqual({ constructor: 5 });
    // An update that sets another field leaves constructor out of changedFields; one that sets it names null before.
    await on("PATCH", `/tasks/${task.body.data.id}`, { customFields: { seats: 2 } });
    await on("PATCH", `/tasks/${task.body.data.id}`, { customFields: { constructor: 7 } });
    const events = (await on("GET", "/events?types=task.updated")).body.data;
    expect(events.map((event: { changedFields: string[] }) => event.changedFields)).toEqual([
      ["customFields.seats"],
      ["customFields.constructor"],
    ]);
    expect(events[1].previous).toEqual({ "customFields.constructor": null });
    // Archived, it no longer blocks writes that leave it out, and refuses those that name it.
    await on("DELETE", `/custom-fields/${taskField}`);
    expect((await on("POST", "/tasks", { title: "After archive" })).status).toBe(201);
    expect((await on("PATCH", `/tasks/${task.body.data.id}`, { title: "Renamed" })).status).toBe(200);
    expect(paths(await on("POST", "/tasks", { title: "Named", customFields: { constructor: 1 } }))).toEqual([
      "customFields.constructor",
    ]);

    // A required constructor field is required in bulk creates too.
    await legacy("account", "text");
    const field = (await on("GET", "/custom-fields?resource=account")).body.data[0];
    await on("PATCH", `/custom-fields/${field.id}`, { required: true });
    expect(paths(await on("POST", "/accounts/bulk", { accounts: [{ name: "Bulk", externalId: "b-1" }] }))).toEqual([
      "accounts.0.customFields.constructor",
    ]);
    const bulk = await on("POST", "/accounts/bulk", {
      accounts: [{ name: "Bulk", externalId: "b-1", customFields: { constructor: "Acme builders" } }],
    });
    expect(bulk.status, JSON.stringify(bulk.body)).toBe(200);
    expect(paths(await on("POST", "/accounts", { name: "Single" }))).toEqual(["customFields.constructor"]);
  });
});

describe("archived fields' limits", () => {
  it("count archived values toward a record's 16,384 bytes, but never refuse a write that adds none", async () => {
    const org = await createTestOrg();
    const on = client(server.url, org.key);
    for (const prefix of ["old", "new"])
      for (let i = 0; i < (prefix === "old" ? 10 : 7); i++)
        await define(on, { resource: "account", key: `${prefix}_${i}`, label: `${prefix} ${i}`, type: "text" });
    const values = (prefix: string, count: number) =>
      Object.fromEntries(Array.from({ length: count }, (_, i) => [`${prefix}_${i}`, prefix[0]?.repeat(1_000)]));
    const account = (
      await on("POST", "/accounts", { name: "Heavy", externalId: "h-1", customFields: values("old", 10) })
    ).body.data;
    const fields = (await on("GET", "/custom-fields?resource=account&limit=100")).body.data;
    for (const field of fields.filter((one: { key: string }) => one.key.startsWith("old_")))
      await on("DELETE", `/custom-fields/${field.id}`);
    // 10,111 bytes of archived values wait in the record for their purge: 7 values of 1,000 characters more would
    // make 17,188, 6 make 16,177.
    const refused = await on("PATCH", `/accounts/${account.id}`, { customFields: values("new", 7) });
    expect(paths(refused)).toEqual(["customFields"]);
    expect(refused.body.error.message).toContain("of them of archived fields");
    const refusedBulk = await on("POST", "/accounts/bulk", {
      accounts: [{ name: "Heavy", externalId: "h-1", customFields: values("new", 7) }],
    });
    expect(paths(refusedBulk)).toEqual(["accounts.0.customFields"]);
    expect((await on("PATCH", `/accounts/${account.id}`, { customFields: values("new", 6) })).status).toBe(200);
    // A record without archived values takes the seven.
    expect((await on("POST", "/accounts", { name: "Light", customFields: values("new", 7) })).status).toBe(201);

    // A record over the limit (values stored before the limit counted archived ones) can still be changed and emptied,
    // but not grown.
    await prisma().$executeRaw`
      UPDATE "Account" SET "customFields" = jsonb_set("customFields", '{old_0}', to_jsonb(repeat('o', 3000)))
      WHERE "id" = ${account.id}`;
    expect((await on("PATCH", `/accounts/${account.id}`, { name: "Heavy Ltd" })).status).toBe(200);
    expect((await on("PATCH", `/accounts/${account.id}`, { customFields: { new_0: "short" } })).status).toBe(200);
    expect(paths(await on("PATCH", `/accounts/${account.id}`, { customFields: { new_0: "longer" } }))).toEqual([
      "customFields",
    ]);
    const bulk = await on("POST", "/accounts/bulk", {
      accounts: [{ name: "Heavy Ltd.", externalId: "h-1", customFields: { new_1: null } }],
    });
    expect(bulk.status, JSON.stringify(bulk.body)).toBe(200);
  });

  it("refuses a new field while the resource has 200 archived fields awaiting their purge, naming the limit", async () => {
    const org = await createTestOrg();
    const on = client(server.url, org.key);
    const archivedAt = new Date(Date.now() - 86_400_000);
    await prisma().customField.createMany({
      data: Array.from({ length: 200 }, (_, i) => ({
        orgId: org.orgId,
        resource: "deal" as const,
        key: `gone_${i}`,
        label: `Gone ${i}`,
        type: "text" as const,
        archivedAt,
      })),
    });
    await bumpFieldsVersion(org.orgId);
    const refused = await on("POST", "/custom-fields", { resource: "deal", key: "late", label: "Late", type: "text" });
    expect(paths(refused)).toEqual(["resource"]);
    expect(refused.body.error.details[0].message).toContain("200 archived custom fields");
    expect(refused.body.error.details[0].message).toContain(
      new Date(archivedAt.getTime() + 30 * 86_400_000).toISOString(),
    );
    // Other resources are not concerned, and the purge frees room.
    await define(on, { resource: "account", key: "late", label: "Late", type: "text" });
    await prisma().customField.deleteMany({ where: { orgId: org.orgId, key: "gone_0" } });
    await bumpFieldsVersion(org.orgId);
    await define(on, { resource: "deal", key: "late", label: "Late", type: "text" });
  });
});

describe("erasure", () => {
  it("erases a contact's custom field values in its stored events, customFields.<key> of previous included", async () => {
    const org = await createTestOrg();
    const on = client(server.url, org.key);
    await define(on, { resource: "contact", key: "private_note", label: "Private note", type: "text" });
    const contact = (
      await on("POST", "/contacts", {
        email: "erase.me@values.test",
        customFields: { private_note: "Lives at 1 Elm St" },
      })
    ).body.data;
    await on("PATCH", `/contacts/${contact.id}`, { customFields: { private_note: "Moved to 9 Oak Rd" } });
    expect((await on("POST", `/contacts/${contact.id}/erase`)).status).toBe(200);
    const events = await prisma().event.findMany({
      where: { orgId: org.orgId, resourceId: contact.id, name: { in: ["contact.created", "contact.updated"] } },
      orderBy: { sequence: "asc" },
    });
    const stored = JSON.stringify(events.map((event) => [event.data, event.previous]));
    expect(stored).not.toContain("Elm St");
    expect(stored).not.toContain("Oak Rd");
    expect(events[1]?.previous).toMatchObject({ "customFields.private_note": "[erased]" });
  });
});

describe("archiving and purging", () => {
  it("hides an archived field's values at once and purges them 30 days later, freeing its key", async () => {
    const org = await orgWithFields();
    const account = (await org.api("POST", "/accounts", { name: "Purge", customFields: { seats: 7, tier: "gold" } }))
      .body.data;
    await org.api("DELETE", `/custom-fields/${org.defined.seats?.id}`);
    const read = (await org.api("GET", `/accounts/${account.id}`)).body.data;
    expect(read.customFields).toEqual({ tier: "gold" });
    expect(read.updatedAt).toBe(account.updatedAt);
    expect((await org.api("GET", "/accounts?limit=100")).body.data[0].customFields).toEqual({ tier: "gold" });
    // The value waits in the row for its purge.
    const stored = await prisma().account.findUniqueOrThrow({ where: { id: account.id } });
    expect(stored.customFields).toEqual({ seats: 7, tier: "gold" });
    // A change of another value keeps it for the purge too.
    await org.api("PATCH", `/accounts/${account.id}`, { customFields: { tier: "bronze" } });
    expect((await prisma().account.findUniqueOrThrow({ where: { id: account.id } })).customFields).toEqual({
      seats: 7,
      tier: "bronze",
    });

    // 29 days: kept.
    await prisma().customField.update({
      where: { id: org.defined.seats?.id },
      data: { archivedAt: new Date(Date.now() - 29 * 86_400_000) },
    });
    const early = await new InngestTestEngine({ function: purgeArchivedCustomFieldsFunction }).execute();
    expect(early.error).toBeUndefined();
    expect((await prisma().account.findUniqueOrThrow({ where: { id: account.id } })).customFields).toMatchObject({
      seats: 7,
    });

    await prisma().customField.update({
      where: { id: org.defined.seats?.id },
      data: { archivedAt: new Date(Date.now() - 31 * 86_400_000) },
    });
    const { result, error } = await new InngestTestEngine({ function: purgeArchivedCustomFieldsFunction }).execute();
    expect(error).toBeUndefined();
    expect(result).toMatchObject({ fields: expect.any(Number), records: expect.any(Number) });
    const after = await prisma().account.findUniqueOrThrow({ where: { id: account.id } });
    expect(after.customFields).toEqual({ tier: "bronze" });
    expect(after.updatedAt.toISOString()).toBe((await org.api("GET", `/accounts/${account.id}`)).body.data.updatedAt);
    expect((await org.api("GET", `/custom-fields/${org.defined.seats?.id}`)).status).toBe(404);
    // The key is free: a field of another type may take it, and sees none of the old values.
    await define(org.api, { resource: "account", key: "seats", label: "Seats (text)", type: "text" });
    expect((await org.api("GET", `/accounts/${account.id}`)).body.data.customFields).toEqual({ tier: "bronze" });
  });
});

describe("lists", () => {
  let on: Api;
  let ids: string[];
  beforeAll(async () => {
    const org = await orgWithFields();
    on = org.api;
    const tiers = ["gold", "silver", "bronze", "gold"];
    ids = [];
    for (let i = 0; i < 12; i++) {
      const customFields: Record<string, unknown> = {
        tier: tiers[i % 4],
        renewal: `2027-0${(i % 9) + 1}-15`,
        stack: i % 2 === 0 ? ["m365"] : ["gws", "edr"],
        psa_note: i % 3 === 0 ? "Priority customer" : "Standard",
        arr: { amount: 1_000 * i, currency: "EUR" },
        onboarded_at: new Date(Date.UTC(2026, 0, 1 + i)).toISOString(),
      };
      // Some records have no seats: they sort last in both directions.
      if (i % 5 !== 4) customFields.seats = (i * 7) % 20;
      ids.push(
        (await on("POST", "/accounts", { name: `List ${i}`, industry: i % 2 ? "Legal" : "Dental", customFields })).body
          .data.id,
      );
    }
  });

  it("filters with the operators of each type, combined with the record's own filters", async () => {
    const keys = async (query: string) => {
      const res = await on("GET", `/accounts?limit=100&${query}`);
      expect(res.status, `${query}: ${JSON.stringify(res.body)}`).toBe(200);
      return res.body.data.map((a: { name: string }) => Number(a.name.slice(5)));
    };
    expect(await keys("customFields.tier=gold")).toEqual([0, 3, 4, 7, 8, 11]);
    expect(await keys("customFields.tier[ne]=gold")).toEqual([1, 2, 5, 6, 9, 10]);
    expect(await keys("customFields.tier[in]=silver,bronze&industry=legal")).toEqual([1, 5, 9]);
    expect(await keys("customFields.seats[gte]=10")).toEqual([2, 5, 8, 10, 11]);
    expect(await keys("customFields.seats[lt]=5&customFields.tier=gold")).toEqual([0, 3]);
    expect(await keys("customFields.seats=14")).toEqual([2]);
    expect(await keys("customFields.stack=edr")).toEqual([1, 3, 5, 7, 9, 11]);
    expect(await keys("customFields.stack[in]=m365,edr")).toHaveLength(12);
    expect(await keys("customFields.psa_note=priority%20customer")).toEqual([0, 3, 6, 9]);
    expect(await keys("customFields.psa_note[contains]=PRIOR")).toEqual([0, 3, 6, 9]);
    expect(await keys("customFields.renewal[lt]=2027-03-01")).toEqual([0, 1, 9, 10]);
    expect(await keys("customFields.onboarded_at[gte]=2026-01-11T00:00:00Z")).toEqual([10, 11]);
    expect(await keys("customFields.arr[gt]=9500")).toEqual([10, 11]);
  });

  it("refuses unknown or archived keys, operators a type has not and malformed values with 422 naming the parameter", async () => {
    expect(paths(await on("GET", "/accounts?customFields.nope=1"))).toEqual(["customFields.nope"]);
    expect(paths(await on("GET", "/accounts?customFields.tier[gt]=gold"))).toEqual(["customFields.tier[gt]"]);
    expect(paths(await on("GET", "/accounts?customFields.seats[gte]=ten"))).toEqual(["customFields.seats[gte]"]);
    expect(paths(await on("GET", "/accounts?customFields.tier=diamond"))).toEqual(["customFields.tier"]);
    expect(paths(await on("GET", "/accounts?customFields.renewal=tomorrow"))).toEqual(["customFields.renewal"]);
    expect(paths(await on("GET", "/accounts?customFields.Seats=1"))).toEqual(["customFields.Seats"]);
    expect(paths(await on("GET", "/accounts?customField.seats=1"))).toEqual(["customField.seats"]);
    // The bounds of a request's filters (docs/api-contract.md §8.1): contains 100 characters, in 50 values, 30 filters.
    const hundred = "x".repeat(100);
    expect((await on("GET", `/accounts?customFields.psa_note[contains]=${hundred}`)).status).toBe(200);
    const long = await on("GET", `/accounts?customFields.psa_note[contains]=${hundred}x`);
    expect(paths(long)).toEqual(["customFields.psa_note[contains]"]);
    expect(long.body.error.details[0].message).toContain("at most 100 characters");
    const values = Array.from({ length: 51 }, (_, i) => `v${i}`);
    expect(paths(await on("GET", `/accounts?customFields.psa_note[in]=${values.join(",")}`))).toEqual([
      "customFields.psa_note[in]",
    ]);
    expect((await on("GET", `/accounts?customFields.psa_note[in]=${values.slice(1).join(",")}`)).status).toBe(200);
    // 31 distinct filters across fields and operators: the 31st is refused by name.
    const filters = [
      ...["eq", "ne", "gt", "gte", "lt", "lte", "in"].map((op) => `customFields.seats[${op}]=1`),
      ...["eq", "ne", "in", "contains"].map((op) => `customFields.psa_note[${op}]=x`),
      ...["eq", "ne", "gt", "gte", "lt", "lte", "in"].map((op) => `customFields.renewal[${op}]=2027-01-01`),
      ...["gt", "gte", "lt", "lte"].map((op) => `customFields.onboarded_at[${op}]=2026-01-01T00:00:00Z`),
      ...["eq", "ne", "in"].map((op) => `customFields.tier[${op}]=gold`),
      ...["eq", "ne", "in"].map((op) => `customFields.stack[${op}]=m365`),
      ...["eq", "ne", "gt"].map((op) => `customFields.arr[${op}]=1`),
    ];
    expect(filters).toHaveLength(31);
    expect((await on("GET", `/accounts?${filters.slice(0, 30).join("&")}`)).status).toBe(200);
    const over = await on("GET", `/accounts?${filters.join("&")}`);
    expect(paths(over)).toEqual(["customFields.arr[gt]"]);
    expect(over.body.error.details[0].message).toContain("at most 30");
  });

  it("sorts by a custom field, values missing last in both directions, and pages with cursors", async () => {
    const asc = (await on("GET", "/accounts?limit=100&sort=customFields.seats:asc")).body.data;
    const seats = asc.map((a: { customFields: { seats?: number } }) => a.customFields.seats ?? null);
    const present = seats.filter((s: number | null) => s !== null);
    expect(present).toEqual([...present].sort((a, b) => a - b));
    expect(seats.slice(-2)).toEqual([null, null]);
    const desc = (await on("GET", "/accounts?limit=100&sort=customFields.seats:desc")).body.data;
    expect(desc.map((a: { customFields: { seats?: number } }) => a.customFields.seats ?? null).slice(-2)).toEqual([
      null,
      null,
    ]);
    const renewals = (await on("GET", "/accounts?limit=100&sort=customFields.renewal:desc,name:asc")).body.data.map(
      (a: { customFields: { renewal: string } }) => a.customFields.renewal,
    );
    expect(renewals).toEqual([...renewals].sort().reverse());
    await expectKeysetPaging(on, "/accounts", [
      "customFields.seats:asc",
      "customFields.seats:desc",
      "customFields.renewal:asc",
      "customFields.tier:desc,customFields.seats:asc",
      "customFields.arr:desc",
      "customFields.onboarded_at:asc",
    ]);
    await expectKeysetPaging(on, "/accounts?customFields.tier[in]=gold,silver", ["customFields.seats:desc"]);
    expect(ids).toHaveLength(12);
  });
});

describe("isolation and the documents", () => {
  it("keeps definitions and values within their organisation", async () => {
    const a = await orgWithFields();
    const b = await createTestOrg();
    const onB = client(server.url, b.key);
    expect((await onB("GET", `/custom-fields/${a.defined.tier?.id}`)).status).toBe(404);
    expect((await onB("PATCH", `/custom-fields/${a.defined.tier?.id}`, { label: "Mine" })).status).toBe(404);
    expect((await onB("DELETE", `/custom-fields/${a.defined.tier?.id}`)).status).toBe(404);
    expect((await onB("GET", "/custom-fields?includeArchived=true")).body.data).toEqual([]);
    expect(paths(await onB("POST", "/accounts", { name: "B", customFields: { tier: "gold" } }))).toEqual([
      "customFields.tier",
    ]);
    expect(paths(await onB("GET", "/accounts?customFields.tier=gold"))).toEqual(["customFields.tier"]);
    // The same key in B is B's own field, with its own type.
    await define(onB, { resource: "account", key: "tier", label: "Tier", type: "number" });
    await a.api("POST", "/accounts", { name: "A gold", customFields: { tier: "gold" } });
    const bAccount = (await onB("POST", "/accounts", { name: "B one", customFields: { tier: 1 } })).body.data;
    expect((await onB("GET", "/accounts?customFields.tier=1")).body.data.map((x: { id: string }) => x.id)).toEqual([
      bAccount.id,
    ]);
    expect((await onB("GET", "/custom-fields/schema?resource=account")).body.data.properties.tier.type).toBe("number");
  });

  it("serves each resource's fields as JSON Schema 2020-12 that the records' values satisfy", async () => {
    const org = await orgWithFields();
    await org.api("PATCH", `/custom-fields/${org.defined.seats?.id}`, {
      required: true,
      description: "Licensed seats",
    });
    const res = await org.api("GET", "/custom-fields/schema?resource=account");
    expect(res.status).toBe(200);
    const schema = res.body.data;
    expect(schema).toMatchObject({
      $schema: "https://json-schema.org/draft/2020-12/schema",
      type: "object",
      additionalProperties: false,
    });
    expect(Object.keys(schema.properties).sort()).toEqual(Object.keys(FULL).sort());
    expect(schema.properties.seats).toMatchObject({
      type: "number",
      title: "Seats",
      description: "Licensed seats",
      "x-required": true,
    });
    expect(schema.properties.tier).toMatchObject({ type: "string", enum: ["gold", "silver", "bronze"] });
    expect(schema.properties.stack).toMatchObject({ type: "array", items: { enum: ["m365", "gws", "edr"] } });
    const ajv = new Ajv2020({ strict: false });
    addFormats(ajv);
    const validate = ajv.compile(schema);
    const account = (await org.api("POST", "/accounts", { name: "Valid", customFields: FULL })).body.data;
    expect(validate(account.customFields), JSON.stringify(validate.errors)).toBe(true);
    expect(validate({ ...account.customFields, seats: "x" })).toBe(false);
    expect(validate({ unknown: 1 })).toBe(false);
    const empty = (await org.api("GET", "/custom-fields/schema?resource=task")).body.data;
    expect(empty.properties).toEqual({});
    expect(paths(await org.api("GET", "/custom-fields/schema?resource=lead"))).toEqual(["resource"]);
  });

  it("serves the same OpenAPI document, byte for byte, before and after an organisation defines fields", async () => {
    const fresh = await startApi();
    const before = await (await fetch(`${fresh.url}/openapi.json`)).text();
    await fresh.close();
    await orgWithFields();
    const later = await startApi();
    const after = await (await fetch(`${later.url}/openapi.json`)).text();
    await later.close();
    const origin = (url: string) => new URL(url).origin;
    // Each server is its own origin (the document names it): everything else is the same bytes.
    expect(after.replaceAll(origin(later.url), origin(fresh.url))).toBe(before);
    const document = JSON.parse(before);
    expect(document.components.schemas.Account.properties.customFields).toEqual({
      $ref: "#/components/schemas/CustomFieldValues",
    });
  });
});
