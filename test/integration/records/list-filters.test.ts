// Filter operators on lists (docs/api-contract.md §4.9.3), Stripe's syntax (`employeeCount[gte]=50`, `stage[in]=A,B`,
// `name[contains]=acme`), documented per list in the OpenAPI document and refused with 422 when unknown or malformed.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { client, createTestOrg, expectKeysetPaging, startApi, type TestServer } from "../../helpers/api";

let server: TestServer;
let api: ReturnType<typeof client>;
const ids: Record<string, string> = {};

beforeAll(async () => {
  server = await startApi();
  api = client(server.url, (await createTestOrg()).key);
  const accounts = [
    { name: "Acme Dental", industry: "Healthcare", employeeCount: 12, externalId: "a-1" },
    { name: "ACME Legal 100%", industry: "Legal", employeeCount: 55, externalId: "a-2", lifecycleStatus: "ACTIVE" },
    { name: "Globex", industry: null, employeeCount: 300, externalId: "a-3", lifecycleStatus: "AT_RISK" },
    { name: "Initech_", industry: "Legal", employeeCount: null, externalId: "a-4", lifecycleStatus: "CHURNED" },
  ];
  for (const body of accounts) ids[body.externalId] = (await api("POST", "/accounts", body)).body.data.id;
  for (const [name, stage, mrr] of [
    ["Renewal", "NEGOTIATION", 100],
    ["Upsell", "CLOSED_WON", 250.5],
    ["New", "QUALIFICATION", 40],
  ] as const) {
    await api("POST", "/deals", { name, accountId: ids["a-1"], stage, estimatedMrr: mrr });
  }
  await api("POST", "/tasks", { title: "Past", dueAt: "2026-01-01T00:00:00Z", status: "DONE" });
  await api("POST", "/tasks", { title: "Future", dueAt: "2027-01-01T00:00:00Z", priority: "URGENT" });
});
afterAll(() => server.close());

const names = async (path: string) => {
  const res = await api("GET", path);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.data.map((row: { name?: string; title?: string }) => row.name ?? row.title).sort();
};

describe("list filters", () => {
  it("compares numbers with every operator", async () => {
    expect(await names("/accounts?employeeCount[gte]=55")).toEqual(["ACME Legal 100%", "Globex"]);
    expect(await names("/accounts?employeeCount[gt]=55")).toEqual(["Globex"]);
    expect(await names("/accounts?employeeCount[lt]=55")).toEqual(["Acme Dental"]);
    expect(await names("/accounts?employeeCount[lte]=55")).toEqual(["ACME Legal 100%", "Acme Dental"]);
    expect(await names("/accounts?employeeCount[eq]=300")).toEqual(["Globex"]);
    // ne leaves out records whose field is empty, as SQL compares with NULL.
    expect(await names("/accounts?employeeCount[ne]=300")).toEqual(["ACME Legal 100%", "Acme Dental"]);
    expect(await names("/accounts?employeeCount[in]=12,300")).toEqual(["Acme Dental", "Globex"]);
    expect(await names("/deals?estimatedMrr[gt]=100")).toEqual(["Upsell"]);
  });

  it("compares a fraction with an integer field as numbers compare, in lists and structured search", async () => {
    expect(await names("/accounts?employeeCount[gt]=54.5")).toEqual(["ACME Legal 100%", "Globex"]);
    expect(await names("/accounts?employeeCount[gte]=54.5")).toEqual(["ACME Legal 100%", "Globex"]);
    expect(await names("/accounts?employeeCount[lt]=55.5")).toEqual(["ACME Legal 100%", "Acme Dental"]);
    expect(await names("/accounts?employeeCount[lte]=54.9")).toEqual(["Acme Dental"]);
    expect(await names("/accounts?employeeCount[eq]=55.5")).toEqual([]);
    expect(await names("/accounts?employeeCount[ne]=55.5")).toEqual(["ACME Legal 100%", "Acme Dental", "Globex"]);
    expect(await names("/accounts?employeeCount[in]=12.5,300")).toEqual(["Globex"]);
    const searched = async (filters: unknown[]) => {
      const res = await api("POST", "/accounts/search", { filterGroups: [{ filters }] });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      return res.body.data.map((row: { name: string }) => row.name).sort();
    };
    expect(await searched([{ field: "employeeCount", operator: "between", value: [11.5, 55.5] }])).toEqual([
      "ACME Legal 100%",
      "Acme Dental",
    ]);
    expect(await searched([{ field: "employeeCount", operator: "between", value: [12.5, 54.5] }])).toEqual([]);
    expect(await searched([{ field: "employeeCount", operator: "gte", value: 1e12 }])).toEqual([]);
  });

  it("matches text case-insensitively and literally", async () => {
    expect(await names("/accounts?name[contains]=acme")).toEqual(["ACME Legal 100%", "Acme Dental"]);
    expect(await names("/accounts?name[contains]=%25")).toEqual(["ACME Legal 100%"]);
    expect(await names("/accounts?name[contains]=_")).toEqual(["Initech_"]);
    expect(await names("/accounts?name[eq]=globex")).toEqual(["Globex"]);
    expect(await names("/accounts?industry[in]=legal,healthcare")).toEqual([
      "ACME Legal 100%",
      "Acme Dental",
      "Initech_",
    ]);
    expect(await names("/accounts?industry[ne]=Legal")).toEqual(["Acme Dental"]);
    // The plain form is unchanged: equal, case-insensitive.
    expect(await names("/accounts?industry=LEGAL")).toEqual(["ACME Legal 100%", "Initech_"]);
  });

  it("filters enums, references and dates, and combines with the other parameters", async () => {
    expect(await names("/accounts?lifecycleStatus[in]=AT_RISK,CHURNED")).toEqual(["Globex", "Initech_"]);
    expect(await names("/accounts?lifecycleStatus[ne]=PROSPECT&employeeCount[gte]=50")).toEqual([
      "ACME Legal 100%",
      "Globex",
    ]);
    expect(await names("/deals?stage[in]=NEGOTIATION,CLOSED_WON")).toEqual(["Renewal", "Upsell"]);
    expect(await names(`/deals?accountId[eq]=${ids["a-1"]}&stage[ne]=CLOSED_WON`)).toEqual(["New", "Renewal"]);
    expect(await names("/tasks?dueAt[lt]=2026-06-01T00:00:00Z")).toEqual(["Past"]);
    expect(await names("/tasks?dueAt[gte]=2026-06-01T00:00:00%2B02:00&priority[eq]=URGENT")).toEqual(["Future"]);
    expect(await names("/tasks?status[in]=DONE")).toEqual(["Past"]);
    const future = new Date(Date.now() + 60_000).toISOString();
    expect(await names(`/accounts?createdAt[lt]=${future}&sort=name:desc&limit=2`)).toEqual(["Globex", "Initech_"]);
  });

  it("pages through a filtered list without gaps or repeats", async () => {
    await expectKeysetPaging(api, "/accounts?employeeCount[gte]=0", ["name:asc", "employeeCount:desc"]);
  });

  it("refuses unknown fields and operators and malformed values with 422 naming the parameter", async () => {
    for (const [query, parameter] of [
      ["colour[eq]=red", "colour[eq]"],
      ["employeeCount[contains]=5", "employeeCount[contains]"],
      ["createdAt[eq]=2026-01-01T00:00:00Z", "createdAt[eq]"],
      ["employeeCount[gte]=many", "employeeCount[gte]"],
      ["lifecycleStatus[in]=ACTIVE,LOST", "lifecycleStatus[in]"],
      ["createdAt[gt]=yesterday", "createdAt[gt]"],
    ] as const) {
      const res = await api("GET", `/accounts?${query}`);
      expect(res.status, query).toBe(422);
      expect(res.body.error.code).toBe("validation_error");
      expect(
        res.body.error.details.map((d: { path: string[] }) => d.path.join(".")),
        query,
      ).toContain(parameter);
    }
  });

  it("refuses an unknown parameter naming the one it most likely meant, in the message and its details entry", async () => {
    const refused = await api("GET", "/accounts?lifecycleStatus=ACTIVE");
    expect(refused.status).toBe(422);
    expect(refused.body).toMatchObject({ success: false, error: { code: "validation_error" } });
    expect(refused.body.error.message).toBe("Unknown query parameter lifecycleStatus; did you mean lifecycle?");
    expect(refused.body.error.details).toEqual([
      { path: ["lifecycleStatus"], message: "unknown query parameter; did you mean lifecycle?" },
    ]);
    // The hint names a parameter that works; the name sent stays refused (one name per filter).
    expect(await names("/accounts?lifecycle=ACTIVE")).toEqual(["ACME Legal 100%"]);

    const hints: Array<[string, string, string]> = [
      ["/accounts?Limit=2", "Limit", "did you mean limit?"],
      ["/accounts?sortBy=name", "sortBy", "did you mean sort?"],
      ["/accounts?name=Globex", "name", "did you mean name[eq]?"],
      ["/accounts?Name[EQ]=Globex", "Name[EQ]", "did you mean name[eq]?"],
      [
        "/accounts?createdAt=2026-01-01T00:00:00Z",
        "createdAt",
        "did you mean one of createdAt[gt], createdAt[gte], createdAt[lt] or createdAt[lte]?",
      ],
      ["/deals?owner=u1", "owner", "did you mean ownerId?"],
      ["/health-scores?lifecycleStatus=ACTIVE", "lifecycleStatus", "did you mean lifecycle?"],
      [`/accounts/${ids["a-1"]}?Force=true`, "Force", "did you mean force?"],
    ];
    for (const [path, name, hint] of hints) {
      const method = path.includes("Force") ? "DELETE" : "GET";
      const res = await api(method, path);
      expect(res.status, path).toBe(422);
      expect(res.body.error.message, path).toBe(`Unknown query parameter ${name}; ${hint}`);
      expect(res.body.error.details, path).toEqual([{ path: [name], message: `unknown query parameter; ${hint}` }]);
    }
    expect((await api("GET", `/accounts/${ids["a-1"]}`)).body.data.lifecycleStatus).toBe("PROSPECT");

    // Nothing close: the parameter is named without a hint.
    const colour = await api("GET", "/accounts?colour=red");
    expect(colour.status).toBe(422);
    expect(colour.body.error.message).toBe("Unknown query parameter colour");
    expect(colour.body.error.details).toEqual([{ path: ["colour"], message: "unknown query parameter" }]);

    // Several unknown parameters and another issue: each named, the other issue still listed.
    const several = await api("GET", "/accounts?lifecycleStatus=ACTIVE&colour=red&limit=0");
    expect(several.status).toBe(422);
    expect(several.body.error.message).toBe(
      "Unknown query parameters lifecycleStatus (did you mean lifecycle?), colour",
    );
    expect(several.body.error.details).toEqual([
      { path: ["lifecycleStatus"], message: "unknown query parameter; did you mean lifecycle?" },
      { path: ["colour"], message: "unknown query parameter" },
      { path: ["limit"], message: expect.any(String) },
    ]);

    // A body method's query: its documented parameter is hinted, anything else belongs in the body.
    const bulk = await api("POST", "/accounts/bulk?Mode=partial", { accounts: [{ name: "Hinted" }] });
    expect(bulk.status).toBe(422);
    expect(bulk.body.error.details).toEqual([
      { path: ["Mode"], message: "unknown query parameter; did you mean mode?" },
    ]);
    const create = await api("POST", "/accounts?name=Hinted", { name: "Hinted" });
    expect(create.status).toBe(422);
    expect(create.body.error.details).toEqual([
      { path: ["name"], message: "unknown query parameter; send fields in the body" },
    ]);
  });

  it("bounds a request's filters: contains at most 100 characters, in at most 50 values, 30 filters a list, each 422 naming it", async () => {
    const refusal = async (query: string) => {
      const res = await api("GET", `/accounts?${query}`);
      expect(res.status, query.slice(0, 80)).toBe(422);
      return res.body.error.details as Array<{ path: string[]; message: string }>;
    };
    // 100 characters is the longest contains, on text fields and external keys alike; 101 names the limit.
    const hundred = "a".repeat(100);
    expect(await names(`/accounts?name[contains]=${hundred}`)).toEqual([]);
    expect(await names(`/accounts?externalId[contains]=${hundred}`)).toEqual([]);
    for (const field of ["name", "externalId", "domain"]) {
      expect(await refusal(`${field}[contains]=${hundred}b`)).toEqual([
        { path: [`${field}[contains]`], message: expect.stringContaining("at most 100 characters") },
      ]);
    }
    // Matching stays case-insensitive beyond ASCII, and literal.
    await api("POST", "/accounts", { name: "Zürich Ärzte AG" });
    expect(await names("/accounts?name[contains]=ZÜRICH%20ä")).toEqual(["Zürich Ärzte AG"]);
    expect(await names("/accounts?name[in]=zürich%20ärzte%20ag,globex")).toEqual(["Globex", "Zürich Ärzte AG"]);
    expect(await names("/accounts?name[contains]=100%25")).toEqual(["ACME Legal 100%"]);
    const fifty = Array.from({ length: 50 }, (_, i) => `n${i}`);
    expect(await names(`/accounts?name[in]=${fifty.join(",")}`)).toEqual([]);
    expect((await refusal(`name[in]=${[...fifty, "n50"].join(",")}`))[0]?.path).toEqual(["name[in]"]);
    // 30 filter parameters are taken; the 31st is refused by name.
    const filters = [
      ...["name", "industry", "domain", "externalId"].flatMap((field) => [
        `${field}[eq]=x`,
        `${field}[ne]=y`,
        `${field}[in]=x,y`,
        `${field}[contains]=x`,
      ]),
      ...["gt", "gte", "lt", "lte", "ne", "in", "eq"].map((op) => `employeeCount[${op}]=1`),
      "lifecycleStatus[eq]=ACTIVE",
      "lifecycleStatus[ne]=CHURNED",
      "lifecycleStatus[in]=ACTIVE",
      ...["gt", "gte"].map((op) => `createdAt[${op}]=2020-01-01T00:00:00Z`),
      ...["lt", "lte"].map((op) => `createdAt[${op}]=2999-01-01T00:00:00Z`),
      "updatedAt[gt]=2020-01-01T00:00:00Z",
    ];
    expect(filters).toHaveLength(31);
    expect((await api("GET", `/accounts?${filters.slice(0, 30).join("&")}`)).status).toBe(200);
    expect(await refusal(filters.join("&"))).toEqual([
      { path: ["updatedAt[gt]"], message: expect.stringContaining("at most 30") },
    ]);
  });

  it("documents every field[op] parameter in the OpenAPI document", async () => {
    const document = (await client(server.url)("GET", "/openapi.json")).body;
    const parameters = (document.paths["/accounts"].get.parameters as Array<{ name: string; description: string }>)
      .map((parameter) => parameter.name)
      .filter((name) => name.includes("["));
    expect(parameters).toEqual(
      expect.arrayContaining(["employeeCount[gte]", "name[contains]", "lifecycleStatus[in]", "createdAt[lt]"]),
    );
    for (const path of ["/contacts", "/deals", "/devices", "/tasks", "/notes", "/touchpoints"]) {
      const listed = (document.paths[path].get.parameters as Array<{ name: string; description?: string }>).filter(
        (parameter) => parameter.name.includes("["),
      );
      expect(listed.length, path).toBeGreaterThan(5);
      for (const parameter of listed) expect(parameter.description, parameter.name).toBeTruthy();
    }
  });
});
