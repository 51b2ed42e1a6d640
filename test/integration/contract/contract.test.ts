// The contract test driven by the route table: for every route of `ROUTES`, generated cases check
// its place in the served OpenAPI document, the scope it needs (401 without a key, 403 with another resource's scope,
// past authorization with exactly its scope), tenancy (another organisation's id is 404) and the envelope. A new route
// gets these cases by being in the table; a route whose path parameter names an unknown record type fails until
// someone adds it below.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ROUTES } from "../../../server/http/pipeline";
import type { RouteEntry } from "../../../server/http/routes";
import { FULL_ACCESS_SCOPES } from "../../../server/platform/api-keys/scopes";
import { client, createKey, createTestOrg, startApi, type TestServer } from "../../helpers/api";

type Api = ReturnType<typeof client>;
type Answer = Awaited<ReturnType<Api>>;
// biome-ignore lint/suspicious/noExplicitAny: the OpenAPI document is inspected field by field.
type Json = any;

const procedures = ROUTES.filter((route) => route.procedure);
const documents = ROUTES.filter((route) => route.document);

/**
 * Creates one record of a kind in an organisation and returns its id (the value of a path parameter); `ids` holds the
 * route's path parameters made before it (a replay belongs to the endpoint of `{id}`).
 */
const CREATORS: Record<string, (api: Api, ids: Record<string, string>) => Promise<string>> = {
  account: async (api) => (await api("POST", "/accounts", { name: "Contract account" })).body.data.id,
  contact: async (api) =>
    (await api("POST", "/contacts", { email: `c${Math.random().toString(36).slice(2)}@contract.example` })).body.data
      .id,
  deal: async (api) =>
    (await api("POST", "/deals", { name: "Contract deal", accountId: await CREATORS.account?.(api, {}) })).body.data.id,
  device: async (api) =>
    (
      await api("POST", "/devices", {
        rmmAgentId: `agent-${Math.random().toString(36).slice(2)}`,
        hostname: "pc",
        accountId: await CREATORS.account?.(api, {}),
      })
    ).body.data.id,
  task: async (api) => (await api("POST", "/tasks", { title: "Contract task" })).body.data.id,
  note: async (api) =>
    (
      await api("POST", "/notes", {
        objectType: "Account",
        objectId: await CREATORS.account?.(api, {}),
        body: "Contract note",
      })
    ).body.data.id,
  touchpoint: async (api) =>
    (
      await api("POST", "/touchpoints", {
        accountId: await CREATORS.account?.(api, {}),
        type: "CALL",
        direction: "OUTBOUND",
      })
    ).body.data.id,
  webhookEndpoint: async (api) =>
    (await api("POST", "/webhook-endpoints", { url: "https://hooks.invalid/crm", events: ["*"] })).body.data.id,
  delivery: async (api) => {
    const endpoint = await CREATORS.webhookEndpoint?.(api, {});
    return (await api("POST", `/webhook-endpoints/${endpoint}/test`)).body.data.attempt.deliveryId;
  },
  customField: async (api) =>
    (
      await api("POST", "/custom-fields", {
        resource: "account",
        key: `f_${Math.random().toString(36).slice(2, 12)}`,
        label: "Contract field",
        type: "text",
      })
    ).body.data.id,
  replay: async (api, ids) =>
    (
      await api("POST", `/webhook-endpoints/${ids.id}/replays`, {
        since: new Date(Date.now() - 3_600_000).toISOString(),
      })
    ).body.data.id,
  event: async (api) => {
    await CREATORS.account?.(api, {});
    return (await api("GET", "/events?limit=100")).body.data.at(-1).id;
  },
};

/** The record type a path parameter names, by the route's first segment and the parameter. */
function recordTypeOf(route: RouteEntry, parameter: string): string {
  const resource = route.path.split("/")[1] ?? "";
  const byResource: Record<string, string> = {
    accounts: "account",
    contacts: "contact",
    deals: "deal",
    devices: "device",
    tasks: "task",
    notes: "note",
    touchpoints: "touchpoint",
    events: "event",
    "health-scores": "account",
    "webhook-endpoints": "webhookEndpoint",
    deliveries: "delivery",
    "custom-fields": "customField",
  };
  // A record under another: /webhook-endpoints/{id}/replays/{replayId}.
  if (resource === "webhook-endpoints" && parameter === "replayId") return "replay";
  const type = byResource[resource];
  if (!type || (parameter !== "id" && parameter !== "accountId")) {
    throw new Error(
      `${route.method} ${route.path}: path parameter {${parameter}} names no known record type; add it to recordTypeOf and CREATORS in test/integration/contract/contract.test.ts`,
    );
  }
  return type;
}

/** A body the route accepts for a record of the organisation (writes with a path parameter). */
function bodyOf(route: RouteEntry): unknown {
  const key = `${route.method} ${route.path}`;
  const bodies: Record<string, unknown> = {
    "PATCH /accounts/{id}": { name: "Renamed" },
    "PATCH /contacts/{id}": { firstName: "Renamed" },
    "POST /contacts/{id}/erase": undefined,
    "PATCH /deals/{id}": { name: "Renamed" },
    "PATCH /devices/{id}": { hostname: "renamed" },
    "PATCH /tasks/{id}": { title: "Renamed" },
    "POST /health-scores/{accountId}/signals": { source: "nps", type: "detractor", severity: "HIGH", score: 60 },
    "PATCH /webhook-endpoints/{id}": { description: "Renamed" },
    "PATCH /custom-fields/{id}": { label: "Renamed" },
    "POST /webhook-endpoints/{id}/rotate-secret": undefined,
    "POST /webhook-endpoints/{id}/test": undefined,
    "POST /deliveries/{id}/redeliver": undefined,
    "POST /webhook-endpoints/{id}/replays": { since: new Date(Date.now() - 3_600_000).toISOString() },
    "POST /webhook-endpoints/{id}/replays/{replayId}/cancel": undefined,
  };
  if (route.method === "GET" || route.method === "DELETE") return undefined;
  if (!(key in bodies)) {
    throw new Error(
      `${key}: no body for the tenancy case; add one to bodyOf in test/integration/contract/contract.test.ts`,
    );
  }
  return bodies[key];
}

/** Another resource's scope: never admin:read, never one the route's scope implies. */
function wrongScope(scope: string): string {
  return scope.startsWith("mrr:") ? "accounts:write" : "mrr:read";
}

function expectEnvelope(answer: Answer, code?: string): void {
  expect(answer.headers.get("x-ratelimit-limit")).not.toBeNull();
  if (answer.body === undefined) return;
  expect(answer.headers.get("x-request-id")).toBe(answer.body.requestId);
  expect(answer.body.requestId).toMatch(/^req_[0-9a-f]{24}$/);
  expect(answer.body.timestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  if (code) {
    expect(answer.body).toMatchObject({ success: false, error: { code, message: expect.any(String) } });
    expect(answer.body.error.docsUrl).toMatch(new RegExp(`/docs/errors#${code}$`));
  } else {
    expect(answer.body.success).toBe(true);
  }
}

/** The route's path with each parameter replaced. */
function pathWith(route: RouteEntry, ids: Record<string, string>): string {
  return route.path.replace(/\{([^}]+)\}/g, (_, name: string) => ids[name] ?? "missing0000000000");
}

let server: TestServer;
let document: Json;
let orgA: { orgId: string; key: string };
let apiA: Api;
let apiB: Api;
const keys = new Map<string, Api>();

/** A client whose key (in organisation A) has exactly these scopes; keys are made once per scope set. */
async function withScopes(...scopes: string[]): Promise<Api> {
  const name = scopes.join(",");
  let api = keys.get(name);
  if (!api) {
    api = client(server.url, await createKey(orgA.orgId, scopes));
    keys.set(name, api);
  }
  return api;
}

beforeAll(async () => {
  server = await startApi();
  orgA = await createTestOrg(FULL_ACCESS_SCOPES);
  apiA = client(server.url, orgA.key);
  apiB = client(server.url, (await createTestOrg(FULL_ACCESS_SCOPES)).key);
  document = (await client(server.url)("GET", "/openapi.json")).body;
});
afterAll(() => server.close());

it("has one route per documented operation, and the two documents", () => {
  const documented = Object.entries(document.paths as Record<string, Record<string, unknown>>).flatMap(([path, item]) =>
    Object.keys(item).map((method) => `${method.toUpperCase()} ${path}`),
  );
  expect(procedures.map((route) => `${route.method} ${route.path}`).sort()).toEqual(documented.sort());
  expect(documents.map((route) => route.path).sort()).toEqual(["/openapi.json", "/postman.json"]);
});

for (const route of documents) {
  it(`GET ${route.path} answers without a key and is not an operation of the document`, async () => {
    const res = await fetch(`${server.url}${route.path}`);
    expect(res.status).toBe(200);
    expect(res.headers.get("x-request-id")).toMatch(/^req_/);
    expect(res.headers.get("x-ratelimit-limit")).not.toBeNull();
    expect(document.paths[route.path]).toBeUndefined();
  });
}

for (const route of procedures) {
  // An operation that accepts any of several scopes (search) is checked with the first.
  const scope = [route.meta.scope ?? []].flat()[0];
  const success = route.meta.successStatus ?? 200;
  describe(`${route.method} ${route.path}`, () => {
    if (!scope) {
      it("is public: documented without security and answers without a key", async () => {
        const operation = document.paths[route.path][route.method.toLowerCase()];
        expect(operation.security).toEqual([]);
        expect(operation["x-required-scope"]).toBeUndefined();
        const res = await client(server.url)(route.method, route.path);
        expect(res.status).toBeLessThan(500);
        expectEnvelope(res);
      });
      return;
    }

    it(`is documented with scope ${scope} and its answers`, () => {
      const operation = document.paths[route.path]?.[route.method.toLowerCase()];
      expect(operation).toBeDefined();
      expect(operation.security).toEqual([{ bearerAuth: [] }]);
      expect(operation["x-required-scope"]).toEqual(route.meta.scope);
      const statuses = Object.keys(operation.responses);
      expect(statuses).toEqual(expect.arrayContaining([String(success), "401", "403"]));
      if (route.pathParams.length > 0) expect(statuses).toContain("404");
    });

    it("refuses a request without a key: 401 unauthorized", async () => {
      const res = await client(server.url)(route.method, pathWith(route, {}), bodyOfSafe(route));
      expect(res.status).toBe(401);
      expectEnvelope(res, "unauthorized");
    });

    it("refuses another resource's scope: 403 insufficient_scope", async () => {
      const res = await (await withScopes(wrongScope(scope)))(route.method, pathWith(route, {}), bodyOfSafe(route));
      expect(res.status).toBe(403);
      expectEnvelope(res, "insufficient_scope");
      if (scope.endsWith(":write")) {
        const readOnly = await withScopes(scope.replace(":write", ":read"), "admin:read");
        const refused = await readOnly(route.method, pathWith(route, {}), bodyOfSafe(route));
        expect(refused.status).toBe(403);
        expectEnvelope(refused, "insufficient_scope");
      }
    });

    it(`lets exactly ${scope} past authorization`, async () => {
      const res = await (await withScopes(scope))(route.method, pathWith(route, {}), bodyOfSafe(route));
      expect(res.status).not.toBe(401);
      expect(res.status).not.toBe(403);
      expect(res.status).toBeLessThan(500);
      expectEnvelope(res, res.status >= 400 ? res.body?.error?.code : undefined);
    });

    if (route.pathParams.length > 0) {
      it("answers 404 to another organisation, then serves its owner", async () => {
        const ids: Record<string, string> = {};
        for (const parameter of route.pathParams) {
          const create = CREATORS[recordTypeOf(route, parameter)];
          if (!create) throw new Error(`no creator for ${recordTypeOf(route, parameter)}`);
          ids[parameter] = await create(apiA, ids);
        }
        const body = bodyOf(route);
        const foreign = await apiB(route.method, pathWith(route, ids), body);
        expect(foreign.status).toBe(404);
        expectEnvelope(foreign, "not_found");
        const own = await apiA(route.method, pathWith(route, ids), body);
        expect(own.status, JSON.stringify(own.body)).toBe(success);
        expectEnvelope(own);
      });
    }
  });
}

/** A body for authorization checks: any JSON object for writes (validation comes after authorization). */
function bodyOfSafe(route: RouteEntry): unknown {
  return route.method === "GET" || route.method === "DELETE" ? undefined : {};
}
