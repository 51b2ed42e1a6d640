import { request } from "node:http";
import { Validator } from "@seriousme/openapi-schema-validator";
import { Ajv2020 } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { resetEnvCache } from "../../../server/env";
import { SCOPES } from "../../../server/platform/api-keys/scopes";
import { startApi, type TestServer } from "../../helpers/api";

let server: TestServer;
// biome-ignore lint/suspicious/noExplicitAny: the document is walked generically below.
let document: any;

beforeAll(async () => {
  server = await startApi();
  const res = await fetch(`${server.url}/openapi.json`);
  expect(res.status).toBe(200);
  expect(res.headers.get("x-request-id")).toMatch(/^req_/);
  document = await res.json();
});
afterAll(() => server.close());

// Every endpoint of docs/api-contract.md §4 with its scope and success status.
const OPERATIONS = [
  ["get", "/status", null, 200],
  ["get", "/accounts", "accounts:read", 200],
  ["post", "/accounts", "accounts:write", 201],
  ["post", "/accounts/bulk", "accounts:write", 200],
  ["get", "/accounts/{id}", "accounts:read", 200],
  ["patch", "/accounts/{id}", "accounts:write", 200],
  ["delete", "/accounts/{id}", "accounts:write", 200],
  ["get", "/contacts", "contacts:read", 200],
  ["post", "/contacts", "contacts:write", 201],
  ["get", "/contacts/{id}", "contacts:read", 200],
  ["patch", "/contacts/{id}", "contacts:write", 200],
  ["post", "/contacts/bulk", "contacts:write", 200],
  ["get", "/deals", "deals:read", 200],
  ["post", "/deals", "deals:write", 201],
  ["get", "/deals/{id}", "deals:read", 200],
  ["patch", "/deals/{id}", "deals:write", 200],
  ["post", "/deals/bulk", "deals:write", 201],
  ["get", "/devices", "devices:read", 200],
  ["post", "/devices", "devices:write", 201],
  ["get", "/devices/{id}", "devices:read", 200],
  ["patch", "/devices/{id}", "devices:write", 200],
  ["delete", "/devices/{id}", "devices:write", 200],
  ["post", "/devices/bulk", "devices:write", 200],
  ["get", "/tasks", "tasks:read", 200],
  ["post", "/tasks", "tasks:write", 201],
  ["get", "/tasks/{id}", "tasks:read", 200],
  ["patch", "/tasks/{id}", "tasks:write", 200],
  ["delete", "/tasks/{id}", "tasks:write", 200],
  ["get", "/notes", "notes:read", 200],
  ["post", "/notes", "notes:write", 201],
  ["get", "/health-scores", "health:read", 200],
  ["get", "/health-scores/{accountId}", "health:read", 200],
  ["post", "/health-scores/{accountId}/signals", "health:write", 201],
  ["get", "/touchpoints", "touchpoints:read", 200],
  ["post", "/touchpoints", "touchpoints:write", 201],
  ["get", "/mrr", "mrr:read", 200],
] as const;

describe("GET /openapi.json", () => {
  it("is a valid OpenAPI 3.1 document served without a key", async () => {
    expect(document.openapi).toBe("3.1.0");
    const result = await new Validator().validate(document);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(document.servers[0].url).toBe(`${server.url}`);
  });

  it("is cached privately while the Host header names its server, publicly once PUBLIC_URL does", async () => {
    // fetch cannot set Host; node:http sends it as given.
    const asHost = (path: string, host: string) =>
      new Promise<{ cacheControl: string | undefined; servers: string | undefined }>((resolve, reject) => {
        const url = new URL(`${server.url}${path}`);
        request({ host: url.hostname, port: url.port, path: url.pathname, headers: { Host: host } }, (res) => {
          let body = "";
          res.on("data", (chunk) => {
            body += chunk;
          });
          res.on("end", () =>
            resolve({
              cacheControl: res.headers["cache-control"],
              servers: /"(?:url|value)":"(http[^"]*\/api\/v1)"/.exec(body)?.[1],
            }),
          );
        })
          .on("error", reject)
          .end();
      });
    // Without PUBLIC_URL a shared cache keyed on the path alone could hand one client the servers entry (and the
    // collection's baseUrl) another client's Host named.
    for (const path of ["/openapi.json", "/postman.json"]) {
      expect(await asHost(path, "attacker.example"), path).toEqual({
        cacheControl: "private, max-age=300",
        servers: "http://attacker.example/api/v1",
      });
    }
    process.env.PUBLIC_URL = "https://crm.example.com";
    resetEnvCache();
    try {
      expect(await asHost("/openapi.json", "attacker.example")).toEqual({
        cacheControl: "public, max-age=300",
        servers: "https://crm.example.com/api/v1",
      });
    } finally {
      delete process.env.PUBLIC_URL;
      resetEnvCache();
    }
  });

  it("documents the Bearer scheme and each operation's scope, success status and errors", () => {
    expect(document.components.securitySchemes.bearerAuth).toMatchObject({ type: "http", scheme: "bearer" });
    for (const [method, path, scope, status] of OPERATIONS) {
      const operation = document.paths[path]?.[method];
      expect(operation, `${method} ${path}`).toBeDefined();
      expect(Object.keys(operation.responses)).toContain(String(status));
      const success = operation.responses[String(status)].content["application/json"].schema;
      expect(success.properties.success).toEqual({ const: true });
      expect(success.required).toEqual(expect.arrayContaining(["success", "data", "requestId", "timestamp"]));
      expect(operation.responses["500"].content["application/json"].schema.$ref).toBe(
        "#/components/schemas/ErrorEnvelope",
      );
      if (scope) {
        expect(operation.security).toEqual([{ bearerAuth: [] }]);
        expect(operation["x-required-scope"]).toBe(scope);
        expect(Object.keys(SCOPES)).toContain(scope);
        expect(operation.responses["401"].description).toContain("unauthorized");
        expect(operation.responses["403"].description).toContain("insufficient_scope");
      } else {
        expect(operation.security).toEqual([]);
      }
    }
    expect(document.paths["/accounts"].post.responses["200"]).toBeUndefined();
    expect(document.paths["/accounts"].get.responses["200"].content["application/json"].schema.required).toEqual(
      expect.arrayContaining(["hasMore", "nextCursor"]),
    );
    expect(document.paths["/accounts/{id}"].get.responses["404"].description).toContain("not_found");
    expect(document.paths["/accounts"].post.responses["400"].description).toContain("invalid_json");
    expect(document.paths["/accounts"].post.responses["422"].description).toContain("validation_error");
    expect(document.paths["/status"].get.responses["503"]).toBeDefined();
  });

  it("documents every error code in the error envelope schema", () => {
    expect(document.components.schemas.ErrorEnvelope.properties.error.properties.code.enum).toEqual(
      expect.arrayContaining([
        "bad_request",
        "invalid_json",
        "unauthorized",
        "insufficient_scope",
        "not_found",
        "method_not_allowed",
        "validation_error",
        "internal_error",
      ]),
    );
  });

  it("documents rate-limit headers, 429, body limits and the Idempotency-Key on every write", () => {
    const create = document.paths["/accounts"].post;
    for (const name of ["X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset", "X-RateLimit-Policy"]) {
      expect(document.components.headers[name]).toBeDefined();
      expect(create.responses["201"].headers[name]).toBeDefined();
      expect(document.paths["/accounts"].get.responses["200"].headers[name]).toBeDefined();
    }
    expect(create.responses["429"].description).toContain("rate_limited");
    expect(create.responses["429"].headers["Retry-After"]).toBeDefined();
    expect(create.responses["413"].description).toContain("payload_too_large");
    expect(create.responses["409"].description).toContain("idempotency_in_progress");
    expect(create.responses["422"].description).toContain("idempotency_conflict");
    expect(create.responses["201"].headers["X-Idempotent-Replay"]).toBeDefined();
    for (const [method, path] of [
      ["post", "/accounts"],
      ["post", "/devices/bulk"],
      ["patch", "/deals/{id}"],
      ["delete", "/accounts/{id}"],
    ] as const) {
      const parameter = document.paths[path][method].parameters.find(
        (p: { name: string }) => p.name === "Idempotency-Key",
      );
      expect(parameter, `${method} ${path}`).toMatchObject({ in: "header", required: false });
    }
    const list = document.paths["/accounts"].get;
    expect(list.parameters.some((p: { name: string }) => p.name === "Idempotency-Key")).toBe(false);
    expect(list.responses["409"]).toBeUndefined();
  });

  it("documents Prefer: handling=strict on every operation that takes sort, and the headers that answer it", () => {
    const sorting: string[] = [];
    for (const [path, item] of Object.entries(document.paths as Record<string, Record<string, Node>>)) {
      for (const [method, operation] of Object.entries(item)) {
        const inQuery = operation.parameters?.some((p: { name: string }) => p.name === "sort");
        const inBody = operation.requestBody?.content["application/json"].schema.properties?.sort !== undefined;
        const prefer = operation.parameters?.find((p: { name: string }) => p.name === "Prefer");
        if (!inQuery && !inBody) {
          expect(prefer, `${method} ${path}`).toBeUndefined();
          continue;
        }
        sorting.push(`${method.toUpperCase()} ${path}`);
        expect(prefer, `${method} ${path}`).toMatchObject({ in: "header", required: false });
        expect(prefer.description).toContain("handling=strict");
        expect(operation.responses["200"].headers).toMatchObject({
          "Preference-Applied": { $ref: "#/components/headers/Preference-Applied" },
          "Sort-Ignored": { $ref: "#/components/headers/Sort-Ignored" },
        });
        expect(operation.responses["422"].headers["Preference-Applied"]).toBeDefined();
      }
    }
    expect(sorting.sort()).toEqual([
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
    expect(document.components.headers["Preference-Applied"].schema.enum).toEqual([
      "handling=strict",
      "handling=lenient",
    ]);
    expect(
      document.paths["/accounts"].get.parameters.find((p: { name: string }) => p.name === "sort").description,
    ).toContain("Sort-Ignored");
  });
});

// biome-ignore lint/suspicious/noExplicitAny: JSON Schema nodes of the document.
type Node = any;

/** Every schema node of the document with its place, `$ref`s not followed (each component is walked once). */
function* schemaNodes(node: Node, where: string): Generator<[string, Node]> {
  if (!node || typeof node !== "object") return;
  yield [where, node];
  for (const [key, value] of Object.entries(node.properties ?? {})) yield* schemaNodes(value, `${where}.${key}`);
  if (node.items) yield* schemaNodes(node.items, `${where}[]`);
  for (const [i, option] of [...(node.anyOf ?? []), ...(node.oneOf ?? []), ...(node.allOf ?? [])].entries())
    yield* schemaNodes(option, `${where}|${i}`);
}

/** A named property (not the root, not an array's item, not one option of a union). */
function isField(where: string): boolean {
  return where.split(".").length > 1 && !where.includes("|") && !where.endsWith("[]");
}

describe("a document tools can use as served", () => {
  it("gives every request body and every success response an example", () => {
    const missing: string[] = [];
    for (const [path, item] of Object.entries(document.paths as Record<string, Record<string, Node>>)) {
      for (const [method, operation] of Object.entries(item)) {
        const body = operation.requestBody?.content?.["application/json"];
        if (body && body.example === undefined) missing.push(`${method} ${path} request body`);
        for (const [status, response] of Object.entries(operation.responses as Record<string, Node>)) {
          if (!status.startsWith("2")) continue;
          if (response.content?.["application/json"]?.example === undefined)
            missing.push(`${method} ${path} ${status}`);
        }
      }
    }
    expect(missing, missing.join("\n")).toEqual([]);
  });

  it("describes every field and parameter", () => {
    const missing: string[] = [];
    for (const [path, item] of Object.entries(document.paths as Record<string, Record<string, Node>>)) {
      for (const [method, operation] of Object.entries(item)) {
        for (const parameter of operation.parameters ?? []) {
          if (!parameter.description) missing.push(`${method} ${path} parameter ${parameter.name}`);
        }
        const body = operation.requestBody?.content?.["application/json"]?.schema;
        for (const [where, node] of schemaNodes(body, `${method} ${path} body`)) {
          if (isField(where) && !node.description && !node.$ref) missing.push(where);
        }
      }
    }
    for (const [name, schema] of Object.entries(document.components.schemas as Record<string, Node>)) {
      for (const [where, node] of schemaNodes(schema, name)) {
        if (isField(where) && !node.description && !node.$ref) missing.push(where);
      }
    }
    expect(missing, missing.join("\n")).toEqual([]);
  });

  it("types the boolean query parameters as booleans, so typed clients pass true rather than the text", () => {
    const found: Record<string, unknown> = {};
    for (const [path, item] of Object.entries(document.paths as Record<string, Record<string, Node>>)) {
      for (const [method, operation] of Object.entries(item)) {
        for (const parameter of operation.parameters ?? []) {
          const schema = parameter.schema as { type?: string; enum?: string[] } | undefined;
          if (parameter.in !== "query") continue;
          if (schema?.type === "boolean" || schema?.enum?.includes("true"))
            found[`${method} ${path} ${parameter.name}`] = schema.type;
        }
      }
    }
    expect(found).toEqual({
      "delete /accounts/{id} force": "boolean",
      "get /devices isOnline": "boolean",
      "get /devices isEndOfLife": "boolean",
      "get /custom-fields includeArchived": "boolean",
    });
  });

  it("names no repository file, specification section or issue number in what it tells readers", () => {
    // A reader of the served document has no clone: a citation of a repository file or an issue helps nobody there.
    const cited: string[] = [];
    const walk = (node: unknown, where: string): void => {
      if (typeof node === "string") {
        if (/§\s*\d|\bissues?\s*#\d|\(#\d+\)|\bdocs\/[\w-]+\.md\b|DESIGN\.md|\bthe spec\b/i.test(node)) {
          cited.push(`${where}: ${node}`);
        }
      } else if (node && typeof node === "object") {
        for (const [key, value] of Object.entries(node)) walk(value, `${where}/${key}`);
      }
    };
    walk(document, "#");
    expect(cited, cited.join("\n")).toEqual([]);
    // Tasks record events like every other resource, and the operations say so.
    expect(document.paths["/tasks"].post.description).toContain("task.created, task.updated and task.deleted");
  });

  it("keeps every integer within ±(2^53 − 1), so every client can hold it", () => {
    const unbounded: string[] = [];
    const check = (where: string, node: Node) => {
      if (node.type !== "integer") return;
      if (!(node.minimum >= -Number.MAX_SAFE_INTEGER) || !(node.maximum <= Number.MAX_SAFE_INTEGER))
        unbounded.push(where);
    };
    for (const [name, schema] of Object.entries(document.components.schemas as Record<string, Node>)) {
      for (const [where, node] of schemaNodes(schema, name)) check(where, node);
    }
    for (const [path, item] of Object.entries(document.paths as Record<string, Record<string, Node>>)) {
      for (const [method, operation] of Object.entries(item)) {
        for (const parameter of operation.parameters ?? [])
          check(`${method} ${path} ${parameter.name}`, parameter.schema ?? {});
        for (const [where, node] of schemaNodes(
          operation.requestBody?.content?.["application/json"]?.schema,
          `${method} ${path}`,
        ))
          check(where, node);
      }
    }
    expect(unbounded).toEqual([]);
  });
});

describe("examples", () => {
  it("every example of a request body and of a success response is valid for its own schema", () => {
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats(ajv);
    ajv.addSchema({ $id: "openapi", components: document.components });
    const refs = (schema: Node): Node =>
      JSON.parse(JSON.stringify(schema).replaceAll('"#/components/', '"openapi#/components/'));
    const invalid: string[] = [];
    for (const [path, item] of Object.entries(document.paths as Record<string, Record<string, Node>>)) {
      for (const [method, operation] of Object.entries(item)) {
        const media = [
          ["request", operation.requestBody?.content?.["application/json"]],
          ...Object.entries(operation.responses as Record<string, Node>)
            .filter(([status]) => status.startsWith("2"))
            .map(([status, response]) => [status, response.content?.["application/json"]]),
        ] as Array<[string, Node]>;
        for (const [which, content] of media) {
          if (!content?.schema || content.example === undefined) continue;
          const validate = ajv.compile(refs(content.schema));
          if (!validate(content.example))
            invalid.push(`${method} ${path} ${which}: ${ajv.errorsText(validate.errors)}`);
        }
      }
    }
    expect(invalid).toEqual([]);
  });
});
