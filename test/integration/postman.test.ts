// GET /postman.json: the collection converted from the OpenAPI document imports and its requests run against the server.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { client, createTestOrg, startApi, type TestServer } from "../helpers/api";

let server: TestServer;
// biome-ignore lint/suspicious/noExplicitAny: the collection is walked generically.
let collection: any;

beforeAll(async () => {
  server = await startApi();
  const res = await fetch(`${server.url}/postman.json`);
  expect(res.status).toBe(200);
  collection = await res.json();
});
afterAll(() => server.close());

// biome-ignore lint/suspicious/noExplicitAny: Postman items nest folders and requests.
function requests(items: any[]): any[] {
  return items.flatMap((item) => (item.item ? requests(item.item) : [item]));
}

describe("GET /postman.json", () => {
  it("is a Postman v2.1 collection with baseUrl and apiKey variables and Bearer auth", () => {
    expect(collection.info.schema).toContain("v2.1.0");
    const variables = Object.fromEntries(
      collection.variable.map((v: { key: string; value: string }) => [v.key, v.value]),
    );
    expect(variables.baseUrl).toBe(server.url);
    expect(variables.apiKey).toBeDefined();
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

  it("lists optional query parameters switched off, and takes request bodies from the documented examples", async () => {
    const all = requests(collection.item);
    const query = all.flatMap((item) => item.request.url.query ?? []);
    expect(query.length).toBeGreaterThan(20);
    expect(query.filter((parameter: { disabled: boolean }) => !parameter.disabled)).toEqual([]);
    const document = await fetch(`${server.url}/openapi.json`).then((res) => res.json());
    const create = all.find((item) => item.request.method === "POST" && item.request.url.path.join("/") === "accounts");
    expect(JSON.parse(create.request.body.raw)).toEqual(
      document.paths["/accounts"].post.requestBody.content["application/json"].example,
    );
  });

  it("holds one request per OpenAPI operation", async () => {
    const document = await fetch(`${server.url}/openapi.json`).then((res) => res.json());
    const operations = Object.values(document.paths).flatMap((item) => Object.keys(item as object));
    expect(requests(collection.item)).toHaveLength(operations.length);
  });

  it("runs: the list-accounts request, resolved with the collection variables, answers 200", async () => {
    const org = await createTestOrg();
    const list = requests(collection.item).find(
      (item) => item.request.method === "GET" && item.request.url.path.join("/") === "accounts",
    );
    expect(list).toBeDefined();
    const url = `${list.request.url.host.join("/").replace("{{baseUrl}}", server.url)}/${list.request.url.path.join("/")}`;
    const res = await client("", org.key)("GET", url);
    expect(res.status).toBe(200);
    expect(res.body.success).toBe(true);
  });
});
