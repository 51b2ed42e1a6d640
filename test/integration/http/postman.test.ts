// GET /postman.json: the collection converted from the OpenAPI document imports, is chained (creates first, the ids
// they answer kept in collection variables for the requests after them) and runs as downloaded in newman with only
// apiKey set, against a fresh organisation with nothing in it.
import newman from "newman";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { resetEnvCache } from "../../../server/env";
import { createTestOrg, startApi, type TestServer } from "../../helpers/api";

/**
 * The rate-limit window of this file's server (server/env.ts `RATE_LIMIT_WINDOW_MS`), ms: a refused request waits
 * seconds for a free slot instead of a minute.
 */
const WINDOW_MS = 4_000;
process.env.RATE_LIMIT_WINDOW_MS = String(WINDOW_MS);
resetEnvCache();

let server: TestServer;
// biome-ignore lint/suspicious/noExplicitAny: the collection is walked generically.
let collection: any;
// biome-ignore lint/suspicious/noExplicitAny: the document is walked generically.
let document: any;

beforeAll(async () => {
  server = await startApi();
  const res = await fetch(`${server.url}/postman.json`);
  expect(res.status).toBe(200);
  collection = await res.json();
  document = await fetch(`${server.url}/openapi.json`).then((response) => response.json());
});
afterAll(() => server.close());

// biome-ignore lint/suspicious/noExplicitAny: Postman items nest folders and requests.
function requests(items: any[]): any[] {
  return items.flatMap((item) => (item.item ? requests(item.item) : [item]));
}

// biome-ignore lint/suspicious/noExplicitAny: one request of the collection.
const route = (item: any) => `${item.request.method} /${item.request.url.path.join("/")}`;
// biome-ignore lint/suspicious/noExplicitAny: one request of the collection.
const testScript = (item: any): string =>
  (item.event ?? []).find((event: { listen: string }) => event.listen === "test")?.script.exec.join("\n") ?? "";

/** What newman reports of one request it ran. */
interface NewmanExecution {
  item: { name: string };
  request: { method: string; url: { getPath(): string } };
  response?: { code: number };
  assertions?: Array<{ assertion: string; error?: { message: string } }>;
}

/** Runs the collection in newman with only `apiKey` set; what each request (each attempt) answered. */
async function runCollection(apiKey: string): Promise<Array<{ request: string; code: number; failed: string[] }>> {
  const executions = await new Promise<NewmanExecution[]>((resolve, reject) => {
    newman.run(
      { collection, envVar: [{ key: "apiKey", value: apiKey }], reporters: [], timeoutRequest: 20_000 },
      (error: Error | null, summary: { run: { executions: NewmanExecution[] } }) =>
        error ? reject(error) : resolve(summary.run.executions),
    );
  });
  return executions.map((execution) => ({
    request: `${execution.request.method} ${execution.request.url.getPath()}`,
    code: execution.response?.code ?? 0,
    failed: (execution.assertions ?? []).filter((assertion) => assertion.error).map((a) => a.assertion),
  }));
}

describe("GET /postman.json", () => {
  it("is a Postman v2.1 collection with baseUrl, apiKey and the chained variables, and Bearer auth", () => {
    expect(collection.info.schema).toContain("v2.1.0");
    const variables = Object.fromEntries(
      collection.variable.map((v: { key: string; value: string }) => [v.key, v.value]),
    );
    expect(variables.baseUrl).toBe(server.url);
    expect(variables.apiKey).toBeDefined();
    expect(variables).toMatchObject({ accountId: "", contactId: "", dealId: "", webhookEndpointId: "" });
    expect(collection.auth).toEqual({
      type: "bearer",
      bearer: [{ key: "token", value: "{{apiKey}}", type: "string" }],
    });
  });

  it("authenticates every request from the collection's apiKey: no request brings auth or a variable of its own", () => {
    const all = requests(collection.item);
    expect(all.filter((item) => item.request.auth)).toEqual([]);
    expect(JSON.stringify(collection)).not.toContain("{{bearerToken}}");
  });

  it("lists optional query parameters switched off, and takes bodies from the documented examples", () => {
    const all = requests(collection.item);
    const query = all.flatMap((item) => item.request.url.query ?? []);
    expect(query.length).toBeGreaterThan(20);
    // The required query parameters are switched on: search's q, and the resource whose custom fields' JSON Schema
    // is asked for.
    expect(
      query.filter((parameter: { disabled: boolean }) => !parameter.disabled).map((p: { key: string }) => p.key),
    ).toEqual(["q", "resource"]);
    const body = (path: string) => {
      const item = all.find((request) => route(request) === path);
      return JSON.parse(item.request.body.raw);
    };
    const example = (path: string) => document.paths[path].post.requestBody.content["application/json"].example;
    // A create's unique key is made fresh per run, so the collection runs again in the same organisation.
    expect(body("POST /accounts")).toEqual({
      ...example("/accounts"),
      externalId: `${example("/accounts").externalId}-{{$guid}}`,
    });
    expect(body("POST /contacts")).toMatchObject({
      email: "anna.lopez+{{$guid}}@northwind-dental.example",
      accountId: "{{accountId}}",
    });
    expect(body("POST /tasks")).toMatchObject({ accountId: "{{accountId}}", dealId: "{{dealId}}" });
    expect(body("POST /notes")).toMatchObject({ objectType: "Account", objectId: "{{accountId}}" });
    expect(body("POST /accounts/bulk")).toEqual(example("/accounts/bulk"));
  });

  it("offers Prefer: handling=strict, switched off, on every request that takes sort", () => {
    const all = requests(collection.item);
    const preferring = all.filter((item) =>
      (item.request.header ?? []).some((header: { key: string }) => header.key === "Prefer"),
    );
    expect(preferring.map(route).sort()).toEqual([
      "GET /accounts",
      "GET /contacts",
      "GET /custom-fields",
      "GET /deals",
      "GET /devices",
      "GET /health-scores",
      "GET /notes",
      "GET /tasks",
      "GET /touchpoints",
      "POST /accounts/search",
      "POST /contacts/search",
      "POST /deals/search",
      "POST /devices/search",
      "POST /notes/search",
      "POST /tasks/search",
      "POST /touchpoints/search",
    ]);
    for (const item of preferring) {
      const prefer = item.request.header.find((header: { key: string }) => header.key === "Prefer");
      expect(prefer, route(item)).toMatchObject({ value: "handling=strict", disabled: true });
    }
  });

  it("holds one request per OpenAPI operation", () => {
    const operations = Object.values(document.paths).flatMap((item) => Object.keys(item as object));
    expect(requests(collection.item)).toHaveLength(operations.length);
  });

  it("creates before it reads, updates and deletes: every variable a request uses is stored by a request before it", () => {
    const all = requests(collection.item);
    const stored = new Set<string>();
    const unset: string[] = [];
    for (const item of all) {
      const used = JSON.stringify([item.request.url.variable ?? [], item.request.body?.raw ?? ""]).matchAll(
        /\{\{(\w+)\}\}/g,
      );
      for (const [, variable] of used) if (!stored.has(variable as string)) unset.push(`${route(item)}: ${variable}`);
      for (const [, variable] of testScript(item).matchAll(/collectionVariables\.set\("(\w+)"/g))
        stored.add(variable as string);
    }
    expect(unset).toEqual([]);
    expect(collection.item.map((folder: { name: string }) => folder.name)).toEqual(
      document.tags.map((tag: { name: string }) => tag.name),
    );
    const accounts = collection.item.find((folder: { name: string }) => folder.name === "Accounts").item.map(route);
    expect(accounts[0]).toBe("POST /accounts");
    expect(accounts.at(-1)).toBe("DELETE /accounts/:id");
    for (const item of all) expect(testScript(item), route(item)).toMatch(/pm\.test\("answers 2\d\d"/);
  });

  it("runs as downloaded in newman with only apiKey set, on a fresh organisation: every request 2xx", async () => {
    const org = await createTestOrg();
    const outcomes = await runCollection(org.key);
    const succeeded = outcomes.filter((outcome) => outcome.code >= 200 && outcome.code < 300);
    console.log(`newman, fresh organisation: ${succeeded.length} of ${outcomes.length} requests answered 2xx`);
    expect(outcomes).toHaveLength(requests(collection.item).length);
    expect(outcomes.filter((outcome) => outcome.code < 200 || outcome.code >= 300)).toEqual([]);
    expect(outcomes.filter((outcome) => outcome.failed.length > 0)).toEqual([]);
  }, 120_000);

  it("runs to the end on a key allowed fewer requests a window than it holds: a 429 waits Retry-After, then resends", async () => {
    const total = requests(collection.item).length;
    const perKey = Math.ceil(total / 2);
    const org = await createTestOrg(undefined, { limits: { perKey, perOrg: 1_000 } });
    // The key's window is full when newman starts, however fast this machine sends: its first request is refused.
    const spent = await Promise.all(
      Array.from({ length: perKey }, () =>
        fetch(`${server.url}/accounts?limit=1`, { headers: { Authorization: `Bearer ${org.key}` } }).then(
          (res) => res.status,
        ),
      ),
    );
    expect(spent.filter((status) => status !== 200)).toEqual([]);
    const outcomes = await runCollection(org.key);
    const refused = outcomes.filter((outcome) => outcome.code === 429);
    expect(refused.length).toBeGreaterThan(0);
    expect(refused.length).toBeLessThan(total);
    const answered = outcomes.filter((outcome) => outcome.code !== 429);
    expect(answered).toHaveLength(total);
    expect(answered.filter((outcome) => outcome.code < 200 || outcome.code >= 300)).toEqual([]);
    expect(outcomes.filter((outcome) => outcome.failed.length > 0)).toEqual([]);
  }, 120_000);
});
