// Dates and times in requests (docs/api-contract.md §2.2): every date and date-time input of the served OpenAPI
// document (query parameters and request-body properties with format date-time or date, bulk items included) refuses
// the extremes PostgreSQL or the answers cannot hold (year 0000, 10000, -000001, offsets past ±14:00, T24:00, a leap
// second) with 422 naming the field, never 500, and accepts the valid edges (0001-01-01T00:00:00Z,
// 9999-12-31T23:59:59Z, ±14:00). The inputs the document cannot describe (structured search values, custom field
// values and filters) are covered by name, and custom datetimes sort in time order.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { client, createTestOrg, startApi, type TestServer } from "../../helpers/api";

let server: TestServer;
let api: ReturnType<typeof client>;
/** A record id of each resource, to fill the path parameters of the document's operations. */
const ids: Record<string, string> = {};

type Json = Record<string, unknown>;
type Detail = { path: string[]; message: string };

beforeAll(async () => {
  server = await startApi();
  api = client(server.url, (await createTestOrg()).key);
  const account = (await api("POST", "/accounts", { name: "Dates Co" })).body.data;
  ids.account = account.id;
  ids.deal = (await api("POST", "/deals", { name: "Dates deal", accountId: account.id })).body.data.id;
  ids.device = (
    await api("POST", "/devices", { rmmAgentId: "dates-1", accountId: account.id, hostname: "D1" })
  ).body.data.id;
  ids.task = (await api("POST", "/tasks", { title: "Dates task" })).body.data.id;
  ids.endpoint = (
    await api("POST", "/webhook-endpoints", { url: "https://psa.example.com/hooks", events: ["*"] })
  ).body.data.id;
});
afterAll(() => server.close());

const DATE_TIME_EXTREMES = [
  "0000-01-01T00:00:00Z",
  "0000-06-15T12:00:00+01:00",
  "10000-01-01T00:00:00Z",
  "-000001-01-01T00:00:00Z",
  "+010000-01-01T00:00:00Z",
  "2026-06-01T12:00:00+14:01",
  "2026-06-01T12:00:00-14:01",
  "2026-06-01T12:00:00+15:59",
  "2026-06-01T12:00:00+16:00",
  "2026-06-01T24:00:00Z",
  "2026-06-30T23:59:60Z",
  // Valid in form, outside the years 0001 to 9999 once in UTC, or rounded there by PostgreSQL.
  "9999-12-31T23:59:59-01:00",
  "0001-01-01T00:00:00+00:30",
  "9999-12-31T23:59:59.9995Z",
];
const DATE_TIME_EDGES = [
  "0001-01-01T00:00:00Z",
  "9999-12-31T23:59:59Z",
  "9999-12-31T23:59:59.999Z",
  "2026-06-01T12:00:00+14:00",
  "2026-06-01T12:00:00-14:00",
];
const DATE_EXTREMES = ["0000-01-01", "0000-02-29", "10000-01-01", "-000001-01-01", "2026-02-29", "2026-13-01"];
const DATE_EDGES = ["0001-01-01", "9999-12-31"];

/** A date or date-time input of the document: where it goes and what its schema admits. */
interface DateInput {
  method: string;
  path: string;
  /** `query`, or the place in the JSON body (`occurredAt`, `devices.0.lastSeenAt`). */
  where: "query" | string[];
  name: string;
  format: "date" | "date-time";
  pattern?: RegExp;
}

/** Every date and date-time input of the document, found by format in parameters and request bodies. */
function dateInputs(document: Json): DateInput[] {
  const schemas = (document.components as { schemas: Record<string, Json> }).schemas;
  const resolve = (schema: Json | undefined): Json | undefined => {
    const ref = schema?.$ref;
    return typeof ref === "string" ? resolve(schemas[ref.split("/").pop() as string]) : schema;
  };
  // A nullable value is `anyOf: [{…}, {type: null}]`.
  const variants = (schema: Json | undefined): Json[] => {
    const resolved = resolve(schema);
    if (!resolved) return [];
    const options = (resolved.anyOf ?? resolved.oneOf) as Json[] | undefined;
    return options ? options.flatMap(variants) : [resolved];
  };
  const found: DateInput[] = [];
  const walk = (schema: Json | undefined, at: string[], base: Omit<DateInput, "where" | "name" | "format">) => {
    for (const variant of variants(schema)) {
      const format = variant.format;
      if (format === "date" || format === "date-time") {
        const pattern = typeof variant.pattern === "string" ? new RegExp(variant.pattern) : undefined;
        found.push({ ...base, where: at, name: at.join("."), format, pattern });
      }
      for (const [key, property] of Object.entries((variant.properties as Record<string, Json>) ?? {}))
        walk(property, [...at, key], base);
      if (variant.type === "array") walk(variant.items as Json, [...at, "0"], base);
    }
  };
  const fill = (path: string) =>
    path.replace(/\{(\w+)\}/g, (_, name: string) => {
      if (path.startsWith("/webhook-endpoints")) return ids.endpoint as string;
      const resource = path.split("/")[1]?.replace(/s$/, "") ?? "";
      return ids[resource] ?? ids.account ?? name;
    });
  for (const [path, item] of Object.entries(document.paths as Record<string, Record<string, Json>>)) {
    for (const [method, operation] of Object.entries(item)) {
      const base = { method: method.toUpperCase(), path: fill(path) };
      for (const parameter of (operation.parameters as Json[] | undefined) ?? []) {
        if (parameter.in !== "query") continue;
        for (const variant of variants(parameter.schema as Json)) {
          const format = variant.format;
          if (format !== "date" && format !== "date-time") continue;
          const pattern = typeof variant.pattern === "string" ? new RegExp(variant.pattern) : undefined;
          found.push({ ...base, where: "query", name: String(parameter.name), format, pattern });
        }
      }
      const body = (operation.requestBody as Json | undefined)?.content as Record<string, Json> | undefined;
      walk(body?.["application/json"]?.schema as Json | undefined, [], base);
    }
  }
  return found;
}

/** Sends `value` in the one input, nothing else. */
function send(input: DateInput, value: string) {
  if (input.where === "query") {
    const joiner = input.path.includes("?") ? "&" : "?";
    return api(input.method, `${input.path}${joiner}${encodeURIComponent(input.name)}=${encodeURIComponent(value)}`);
  }
  const body: Json = {};
  let at: Json | unknown[] = body;
  input.where.forEach((key, index) => {
    const last = index === input.where.length - 1;
    const next = last ? value : input.where[index + 1] === "0" ? [] : {};
    (at as Record<string, unknown>)[key] = next;
    at = next as Json;
  });
  return api(input.method, input.path, body);
}

/** The messages of the details on the input's field. */
function messagesOn(input: DateInput, details: Detail[] | undefined): string[] {
  return (details ?? []).filter((detail) => detail.path.join(".") === input.name).map((detail) => detail.message);
}

/** A message that refuses a date or time for its form (zod's) or its range (docs/api-contract.md §2.2). */
const DATE_REFUSAL = /Invalid ISO|years 0001 to 9999|UTC offset within ±14:00/;

describe("dates and times in requests", () => {
  it("refuses every extreme with 422 naming the field, never 500, and accepts the valid edges, on every input of the document", async () => {
    const document = (await client(server.url)("GET", "/openapi.json")).body as Json;
    const inputs = dateInputs(document);
    // The inputs the document declares; a new one is covered by itself.
    expect(
      inputs.map((input) => `${input.method} ${input.path.replace(/\/[\w-]{20,}/g, "/{id}")} ${input.name}`),
    ).toEqual(
      expect.arrayContaining([
        "GET /accounts updatedAfter",
        "GET /accounts createdAt[gt]",
        "GET /touchpoints occurredAt[lte]",
        "POST /touchpoints occurredAt",
        "POST /deals expectedCloseDate",
        "PATCH /deals/{id} expectedCloseDate",
        "POST /devices/bulk devices.0.lastSeenAt",
        "POST /tasks dueAt",
        "GET /usage from",
        "GET /usage to",
      ]),
    );
    for (const input of inputs) {
      const label = `${input.method} ${input.path} ${input.name}`;
      for (const value of input.format === "date" ? DATE_EXTREMES : DATE_TIME_EXTREMES) {
        const res = await send(input, value);
        expect(res.status, `${label} = ${value}: ${JSON.stringify(res.body)}`).toBe(422);
        expect(messagesOn(input, res.body.error.details), `${label} = ${value}`).toEqual(
          expect.arrayContaining([expect.stringMatching(DATE_REFUSAL)]),
        );
      }
      // The edges the field's documented form admits (a UTC-only field takes no offset).
      const edges = (input.format === "date" ? DATE_EDGES : DATE_TIME_EDGES).filter(
        (value) => !input.pattern || input.pattern.test(value),
      );
      for (const value of edges) {
        const res = await send(input, value);
        expect(res.status, `${label} = ${value}: ${JSON.stringify(res.body)}`).toBeLessThan(500);
        // Other rules of the operation may still refuse (a touchpoint in the future, a range over 90 days), but not
        // the date's form or range.
        expect(
          messagesOn(input, res.body?.error?.details).filter((message) => DATE_REFUSAL.test(message)),
          `${label} = ${value}`,
        ).toEqual([]);
      }
    }
  });

  it("reads and stores the valid edges exactly", async () => {
    for (const value of DATE_TIME_EDGES) {
      const res = await api(
        "GET",
        `/accounts?updatedAfter=${encodeURIComponent(value)}&createdAt[lt]=${encodeURIComponent(value)}`,
      );
      expect(res.status, value).toBe(200);
    }
    const task = await api("POST", "/tasks", { title: "Far", dueAt: "9999-12-31T23:59:59.999Z" });
    expect(task.status).toBe(201);
    expect((await api("GET", `/tasks/${task.body.data.id}`)).body.data.dueAt).toBe("9999-12-31T23:59:59.999Z");
    const early = await api("PATCH", `/tasks/${task.body.data.id}`, { dueAt: "0001-01-01T13:59:00+14:00" });
    expect(early.status, JSON.stringify(early.body)).toBe(422);
    const first = await api("PATCH", `/tasks/${task.body.data.id}`, { dueAt: "0001-01-01T14:00:00+14:00" });
    expect(first.body.data.dueAt).toBe("0001-01-01T00:00:00.000Z");
    const deal = await api("PATCH", `/deals/${ids.deal}`, { expectedCloseDate: "0001-01-01" });
    expect(deal.body.data.expectedCloseDate).toBe("0001-01-01");
  });

  it("bounds the times of structured search, between included", async () => {
    const search = (filters: unknown[]) => api("POST", "/accounts/search", { filterGroups: [{ filters }] });
    for (const value of DATE_TIME_EXTREMES) {
      for (const filter of [
        { field: "createdAt", operator: "gt", value },
        { field: "updatedAt", operator: "between", value: [value, "2026-01-01T00:00:00Z"] },
      ]) {
        const res = await search([filter]);
        expect(res.status, `${filter.operator} ${value}: ${JSON.stringify(res.body)}`).toBe(422);
        expect(res.body.error.details[0].path.slice(0, 5)).toEqual(["filterGroups", "0", "filters", "0", "value"]);
      }
    }
    const edges = await search([
      { field: "createdAt", operator: "between", value: ["0001-01-01T00:00:00Z", "9999-12-31T23:59:59.999Z"] },
      { field: "updatedAt", operator: "gt", value: "2026-06-01T12:00:00+14:00" },
    ]);
    expect(edges.status, JSON.stringify(edges.body)).toBe(200);
  });
});

describe("custom date and datetime values", () => {
  it("are refused outside the years 0001 to 9999 and offsets of ±14:00, in writes and filters, and sort in time order", async () => {
    const org = await createTestOrg();
    const on = client(server.url, org.key);
    for (const [key, type] of [
      ["when", "datetime"],
      ["renewal", "date"],
    ]) {
      expect((await on("POST", "/custom-fields", { resource: "account", key, label: key, type })).status).toBe(201);
    }
    for (const value of DATE_TIME_EXTREMES) {
      const res = await on("POST", "/accounts", { name: "Bad", customFields: { when: value } });
      expect(res.status, `${value}: ${JSON.stringify(res.body)}`).toBe(422);
      expect(res.body.error.details.map((d: Detail) => d.path.join("."))).toEqual(["customFields.when"]);
      const filter = await on("GET", `/accounts?customFields.when[gt]=${encodeURIComponent(value)}`);
      expect(filter.status, value).toBe(422);
      expect(filter.body.error.details.map((d: Detail) => d.path.join("."))).toEqual(["customFields.when[gt]"]);
      const search = await on("POST", "/accounts/search", {
        filterGroups: [{ filters: [{ field: "customFields.when", operator: "between", value: [value, value] }] }],
      });
      expect(search.status, value).toBe(422);
    }
    for (const value of DATE_EXTREMES) {
      const res = await on("POST", "/accounts", { name: "Bad", customFields: { renewal: value } });
      expect(res.status, value).toBe(422);
      expect((await on("GET", `/accounts?customFields.renewal[lt]=${value}`)).status, value).toBe(422);
    }
    // The edges are stored in UTC with milliseconds and sort in time order, whatever the offset they were given in.
    const values = [
      "9999-12-31T23:59:59Z",
      "2026-06-01T12:00:00+14:00",
      "0001-01-01T00:00:00Z",
      "2026-05-31T12:00:00-14:00",
      "2026-06-01T00:00:00Z",
    ];
    for (const [index, when] of values.entries()) {
      const res = await on("POST", "/accounts", { name: `T${index}`, customFields: { when, renewal: "0001-01-01" } });
      expect(res.status, `${when}: ${JSON.stringify(res.body)}`).toBe(201);
    }
    const sorted = (await on("GET", "/accounts?sort=customFields.when:asc&limit=10")).body.data.map(
      (account: { customFields: { when: string } }) => account.customFields.when,
    );
    expect(sorted).toEqual([
      "0001-01-01T00:00:00.000Z",
      "2026-05-31T22:00:00.000Z",
      "2026-06-01T00:00:00.000Z",
      "2026-06-01T02:00:00.000Z",
      "9999-12-31T23:59:59.000Z",
    ]);
    const after = await on("GET", `/accounts?customFields.when[gt]=${encodeURIComponent("2026-06-01T09:00:00+14:00")}`);
    expect(after.body.data.map((account: { name: string }) => account.name).sort()).toEqual(["T0", "T1", "T3", "T4"]);
  });
});
