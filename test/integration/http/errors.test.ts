import { request } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ERROR_CODES } from "../../../server/errors";
import { client, createTestOrg, startApi, type TestServer } from "../../helpers/api";

let server: TestServer;
let api: ReturnType<typeof client>;

beforeAll(async () => {
  server = await startApi();
  api = client(server.url, (await createTestOrg()).key);
});
afterAll(() => server.close());

function expectErrorEnvelope(res: Awaited<ReturnType<typeof api>>, status: number, code: keyof typeof ERROR_CODES) {
  expect(res.status).toBe(status);
  expect(res.headers.get("content-type")).toContain("application/json");
  expect(res.body).toMatchObject({ success: false, error: { code, message: expect.any(String) } });
  expect(res.body.error.docsUrl).toMatch(new RegExp(`/docs/errors#${code}$`));
  expect(res.body.requestId).toMatch(/^req_[0-9a-f]{24}$/);
  expect(res.headers.get("x-request-id")).toBe(res.body.requestId);
  expect(Number.isNaN(Date.parse(res.body.timestamp))).toBe(false);
  expect(JSON.stringify(res.body)).not.toMatch(/at .*\.ts:\d+|prisma|stack/i);
}

describe("error envelope (docs/api-contract.md §2.1, §7)", () => {
  it("links docsUrl to the origin called, and to localhost when the Host is no host name (longer than a DNS name)", async () => {
    const url = new URL(server.url);
    const docsUrlFor = (host: string) =>
      new Promise<string>((resolve, reject) => {
        request({ host: url.hostname, port: url.port, path: "/api/v1/accounts", headers: { Host: host } }, (res) => {
          let text = "";
          res.on("data", (chunk) => {
            text += chunk;
          });
          res.on("end", () => resolve(JSON.parse(text).error.docsUrl));
        })
          .on("error", reject)
          .end();
      });
    expect(await docsUrlFor("crm.lan:8080")).toBe("http://crm.lan:8080/docs/errors#unauthorized");
    const long = `${Array.from({ length: 40 }, () => "a".repeat(60)).join(".")}.example`;
    expect(await docsUrlFor(long)).toMatch(/^http:\/\/localhost:\d+\/docs\/errors#unauthorized$/);
  });
  it("keeps the details within their documented bounds, whatever the request names", async () => {
    const long = "x".repeat(5_000);
    const one = await api("POST", "/accounts", { name: "Bounded", [long]: 1 });
    expectErrorEnvelope(one, 422, "validation_error");
    const [detail] = one.body.error.details;
    expect(detail.path[0]).toHaveLength(256);
    expect(detail.path[0].endsWith("…")).toBe(true);
    expect(detail.message.length).toBeLessThanOrEqual(1_000);

    const many = Object.fromEntries(Array.from({ length: 1_500 }, (_, i) => [`unknown${i}`, i]));
    const res = await api("POST", "/accounts", { name: "Bounded", ...many });
    expectErrorEnvelope(res, 422, "validation_error");
    expect(res.body.error.details).toHaveLength(1_000);
    expect(res.body.error.details[0]).toEqual({ path: ["unknown0"], message: "Unrecognized field unknown0" });
  });

  it("400 invalid_json for a body that is not JSON", async () => {
    expectErrorEnvelope(await api("POST", "/accounts", "{not json"), 400, "invalid_json");
    expectErrorEnvelope(
      await api("POST", "/accounts", "{not json", { "Content-Type": "text/plain" }),
      400,
      "invalid_json",
    );
  });

  it("422 validation_error for JSON that is not an object", async () => {
    const res = await api("POST", "/accounts", "[1,2]");
    expectErrorEnvelope(res, 422, "validation_error");
    expect(res.body.error.details).toEqual([{ path: [], message: "expected a JSON object" }]);
  });

  it("422 validation_error naming a __proto__ field name, at any depth of a body and in a query, never dropped", async () => {
    const cases: Array<[string, string, string, string[]]> = [
      ["POST", "/accounts", '{"name":"Proto","__proto__":{"admin":true}}', ["__proto__"]],
      ["POST", "/accounts", '{"name":"Proto","customFields":{"__proto__":{"x":1}}}', ["customFields", "__proto__"]],
      [
        "POST",
        "/accounts/bulk",
        '{"accounts":[{"name":"A"},{"name":"B","__proto__":null}]}',
        ["accounts", "1", "__proto__"],
      ],
      [
        "POST",
        "/accounts/search",
        '{"filterGroups":[{"filters":[{"__proto__":{},"field":"name"}]}]}',
        ["filterGroups", "0", "filters", "0", "__proto__"],
      ],
    ];
    for (const [method, path, body, at] of cases) {
      const res = await api(method, path, body);
      expectErrorEnvelope(res, 422, "validation_error");
      expect(res.body.error.details, body).toEqual([{ path: at, message: expect.stringContaining("__proto__") }]);
    }
    const query = await api("GET", "/accounts?__proto__=1&limit=1");
    expectErrorEnvelope(query, 422, "validation_error");
    expect(query.body.error.details).toEqual([{ path: ["__proto__"], message: expect.stringContaining("__proto__") }]);
    // Nothing was written.
    expect((await api("GET", "/accounts?name[eq]=Proto")).body.data).toEqual([]);
  });

  it("400 bad_request for a malformed path parameter", async () => {
    const res = await api("GET", `/accounts/${"x".repeat(65)}`);
    expectErrorEnvelope(res, 400, "bad_request");
    expect(res.body.error.details[0].path).toEqual(["id"]);
  });

  it("401 unauthorized without a key", async () => {
    expectErrorEnvelope(await client(server.url)("GET", "/accounts"), 401, "unauthorized");
  });

  it("403 insufficient_scope", async () => {
    const readOnly = client(server.url, (await createTestOrg(["accounts:read"])).key);
    expectErrorEnvelope(await readOnly("POST", "/accounts", { name: "x" }), 403, "insufficient_scope");
  });

  it("404 not_found for unknown paths, with every method, and for /api/v1 itself", async () => {
    expectErrorEnvelope(await api("GET", "/nope"), 404, "not_found");
    expectErrorEnvelope(await api("POST", "/nope/deeper", {}), 404, "not_found");
    const root = await fetch(server.url);
    expect(root.status).toBe(404);
  });

  it("405 method_not_allowed with Allow", async () => {
    const res = await api("PUT", "/accounts", { name: "x" });
    expectErrorEnvelope(res, 405, "method_not_allowed");
    expect(res.headers.get("allow")).toBe("GET, POST, HEAD");
    const bulk = await api("GET", "/accounts/bulk");
    expectErrorEnvelope(bulk, 405, "method_not_allowed");
    expect(bulk.headers.get("allow")).toBe("POST");
    expectErrorEnvelope(await api("DELETE", "/status"), 405, "method_not_allowed");
  });

  it("OPTIONS lists the allowed methods; HEAD answers without a body", async () => {
    const options = await fetch(`${server.url}/accounts/abc`, { method: "OPTIONS" });
    expect(options.status).toBe(204);
    expect(options.headers.get("allow")).toBe("GET, PATCH, DELETE, HEAD, OPTIONS");
    const head = await fetch(`${server.url}/status`, { method: "HEAD" });
    expect(head.status).toBe(200);
    expect(head.headers.get("x-request-id")).toMatch(/^req_/);
    expect(await head.text()).toBe("");
  });

  it("every code of docs/api-contract.md §7, plus our seven documented extensions, has a reference entry", () => {
    expect(Object.keys(ERROR_CODES).sort()).toEqual(
      [
        "idempotency_in_progress",
        "conflict",
        "payload_too_large",
        "headers_too_large",
        "cursor_expired",
        "precondition_failed",
        "timeout",
        "bad_request",
        "invalid_json",
        "unauthorized",
        "insufficient_scope",
        "not_found",
        "method_not_allowed",
        "validation_error",
        "idempotency_conflict",
        "rate_limited",
        "internal_error",
      ].sort(),
    );
    expect(Object.fromEntries(Object.entries(ERROR_CODES).map(([code, entry]) => [code, entry.status]))).toEqual({
      bad_request: 400,
      invalid_json: 400,
      unauthorized: 401,
      insufficient_scope: 403,
      not_found: 404,
      conflict: 409,
      method_not_allowed: 405,
      validation_error: 422,
      idempotency_conflict: 422,
      idempotency_in_progress: 409,
      payload_too_large: 413,
      headers_too_large: 431,
      cursor_expired: 410,
      precondition_failed: 412,
      rate_limited: 429,
      timeout: 503,
      internal_error: 500,
    });
  });
});
