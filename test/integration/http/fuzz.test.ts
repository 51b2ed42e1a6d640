// Property-based fuzzing of every operation of the served OpenAPI document (docs/architecture.md, "The REST facade"):
// generated valid and invalid bodies, queries and path ids (NUL, lone surrogates, numbers past 2^53 and past a double,
// broken percent-encoding, odd methods), sent over real HTTP with node:http exactly as generated. Every answer must be
// 2xx or 4xx, in the envelope of docs/api-contract.md §2.1, with a matching X-Request-Id, and never 5xx. Fixed seed and
// a bounded count per operation in CI; FUZZ_RUNS=<n> runs n cases per operation, FUZZ_SEED=<n> another seed.
import { randomBytes } from "node:crypto";
import { request } from "node:http";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ERROR_CODES } from "../../../server/errors";
import { client, createTestOrg, startApi, type TestServer } from "../../helpers/api";
import {
  bodyValue,
  HUGE_NUMBER_TOKEN,
  type JsonSchema,
  nastyValue,
  RAW_PATH_SEGMENTS,
  RAW_QUERY_TAILS,
  validValue,
} from "../../helpers/fuzz";

const RUNS = Number(process.env.FUZZ_RUNS ?? 60);
const SEED = Number(process.env.FUZZ_SEED ?? 20261124);
const METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "HEAD", "TRACE", "PROPFIND", "CONNECTX"];

let server: TestServer;
let key: string;
let document: JsonSchema;
/** Ids of records of the fuzzing organisation, by the first path segment of the resource. */
const ids: Record<string, string[]> = {};
const stats = { requests: 0, operations: 0, statuses: new Map<number, number>() };

interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

function send(
  method: string,
  target: string,
  body?: string,
  headers: Record<string, string> = {},
): Promise<RawResponse> {
  const url = new URL(server.url);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: url.hostname,
        port: url.port,
        method,
        path: `/api/v1${target}`,
        headers: {
          Authorization: `Bearer ${key}`,
          ...(body === undefined
            ? {}
            : { "Content-Type": "application/json", "Content-Length": Buffer.byteLength(body) }),
          ...headers,
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("end", () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString("utf8") }),
        );
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

/** The answer must be 2xx/4xx in the envelope with a matching request id: never a 5xx, never plain text. */
function expectEnvelope(label: string, method: string, response: RawResponse): void {
  stats.requests++;
  stats.statuses.set(response.status, (stats.statuses.get(response.status) ?? 0) + 1);
  const where = `${label}\n→ ${response.status} ${response.body.slice(0, 500)}`;
  expect(response.status, where).toBeLessThan(500);
  expect(response.status, where).toBeGreaterThanOrEqual(200);
  if (response.status === 204 || method === "HEAD") {
    expect(response.body, where).toBe("");
    return;
  }
  expect(String(response.headers["content-type"]), where).toContain("application/json");
  const body = JSON.parse(response.body);
  if (label.includes("/openapi.json") || label.includes("/postman.json")) {
    if (response.status === 200) return;
  }
  expect(typeof body.success, where).toBe("boolean");
  expect(body.requestId, where).toMatch(/^req_[0-9a-f]{24}$/);
  // A replayed answer is the first one byte for byte; its request id is in X-Original-Request-Id.
  const replayed = response.headers["x-idempotent-replay"] === "true";
  expect(response.headers[replayed ? "x-original-request-id" : "x-request-id"], where).toBe(body.requestId);
  expect(response.headers["x-ratelimit-limit"], where).toBeDefined();
  if (body.success) {
    expect(response.status, where).toBeLessThan(300);
    expect("data" in body, where).toBe(true);
  } else {
    const code = body.error?.code as keyof typeof ERROR_CODES;
    expect(Object.keys(ERROR_CODES), where).toContain(code);
    expect(ERROR_CODES[code].status, where).toBe(response.status);
    expect(typeof body.error.message, where).toBe("string");
    expect(body.error.docsUrl, where).toMatch(/\/docs\/errors#/);
  }
}

/** Percent-encodes any text; a lone surrogate (which UTF-8 cannot hold) goes as its three raw bytes, as WTF-8 would. */
function encodeAny(text: string): string {
  return text.replace(/[\ud800-\udbff][\udc00-\udfff]|[\s\S]/g, (char) => {
    try {
      return encodeURIComponent(char);
    } catch {
      const code = char.charCodeAt(0);
      return [0xe0 | (code >> 12), 0x80 | ((code >> 6) & 0x3f), 0x80 | (code & 0x3f)]
        .map((byte) => `%${byte.toString(16).toUpperCase()}`)
        .join("");
    }
  });
}

function serialise(body: unknown): string {
  return JSON.stringify(body).replaceAll(`"${HUGE_NUMBER_TOKEN}"`, "1e400");
}

function pathIdArbitrary(resource: string): fc.Arbitrary<string> {
  return fc.oneof(
    { arbitrary: fc.constantFrom(...(ids[resource] ?? ["none"])), weight: 4 },
    { arbitrary: fc.constantFrom(...Object.values(ids).flat()), weight: 1 },
    { arbitrary: fc.constantFrom(...RAW_PATH_SEGMENTS), weight: 2 },
    { arbitrary: fc.string({ maxLength: 30 }).map(encodeAny), weight: 2 },
  );
}

/** Now and then (one case in six) a raw, malformed query fragment. */
const rawTail = fc.oneof(
  { arbitrary: fc.constant(null), weight: 5 },
  { arbitrary: fc.constantFrom(...RAW_QUERY_TAILS), weight: 1 },
);

/** Existing records' ids for the fields that reference them. */
function known() {
  return {
    accountId: ids.accounts ?? [],
    contactId: ids.contacts ?? [],
    dealId: ids.deals ?? [],
    objectId: [...(ids.accounts ?? []), ...(ids.deals ?? [])],
  };
}

function queryArbitrary(parameters: JsonSchema[]): fc.Arbitrary<string> {
  const pairs = parameters.map((parameter) =>
    fc.option(
      fc
        .oneof(
          { arbitrary: validValue(parameter.schema ?? {}, document, 0, known()), weight: 3 },
          { arbitrary: nastyValue, weight: 2 },
        )
        .map(
          (value) =>
            `${encodeAny(parameter.name)}=${encodeAny(typeof value === "string" ? value : JSON.stringify(value))}`,
        ),
      { freq: 2 },
    ),
  );
  return fc
    .tuple(fc.tuple(...pairs), rawTail)
    .map(([chosen, raw]) =>
      [...chosen.filter((pair): pair is string => pair !== null), ...(raw ? [raw] : [])].join("&"),
    );
}

beforeAll(async () => {
  server = await startApi();
  const org = await createTestOrg();
  key = org.key;
  const api = client(server.url, key);
  const account = (await api("POST", "/accounts", { name: "Fuzz Co", industry: "Legal", externalId: "fuzz-1" })).body
    .data;
  const contact = (await api("POST", "/contacts", { email: "fuzz@example.com", accountId: account.id })).body.data;
  const deal = (await api("POST", "/deals", { name: "Fuzz deal", accountId: account.id })).body.data;
  const device = (await api("POST", "/devices", { rmmAgentId: "fuzz-agent", accountId: account.id, hostname: "FZ-1" }))
    .body.data;
  const task = (await api("POST", "/tasks", { title: "Fuzz task", accountId: account.id })).body.data;
  const touchpoint = (
    await api("POST", "/touchpoints", { accountId: account.id, type: "EMAIL", direction: "OUTBOUND", subject: "Hi" })
  ).body.data;
  const note = (await api("POST", "/notes", { objectType: "Account", objectId: account.id, body: "Fuzz note" })).body
    .data;
  Object.assign(ids, {
    accounts: [account.id],
    contacts: [contact.id],
    deals: [deal.id],
    devices: [device.id],
    tasks: [task.id],
    touchpoints: [touchpoint.id],
    notes: [note.id],
    "health-scores": [account.id],
  });
  document = JSON.parse((await send("GET", "/openapi.json")).body);
}, 60_000);

afterAll(async () => {
  await server?.close();
  const statuses = [...stats.statuses].sort(([a], [b]) => a - b).map(([status, n]) => `${status}×${n}`);
  console.log(
    `fuzz: ${stats.requests} requests over ${stats.operations} operations (seed ${SEED}): ${statuses.join(" ")}`,
  );
});

describe("every operation of the served OpenAPI document answers generated input with 2xx/4xx in the envelope", () => {
  it("the document lists the operations to fuzz", () => {
    expect(Object.keys(document.paths).length).toBeGreaterThan(15);
    expect(Object.keys(ids)).toContain("accounts");
  });

  it("fuzzes bodies, queries and path ids of every operation", { timeout: 600_000 }, async () => {
    for (const [template, item] of Object.entries(document.paths as Record<string, Record<string, JsonSchema>>)) {
      for (const [lowerMethod, operation] of Object.entries(item)) {
        const method = lowerMethod.toUpperCase();
        stats.operations++;
        const resource = template.split("/")[1] ?? "";
        const parameters = ((operation.parameters ?? []) as JsonSchema[]).filter((p) => p.in === "query");
        const bodySchema = operation.requestBody?.content?.["application/json"]?.schema as JsonSchema | undefined;
        const hasPathParam = template.includes("{");
        const caseArbitrary = fc.record({
          id: hasPathParam ? pathIdArbitrary(resource) : fc.constant(""),
          query: parameters.length > 0 ? queryArbitrary(parameters) : rawTail.map((q) => q ?? ""),
          body: bodySchema ? bodyValue(bodySchema, document, known()) : fc.constant(undefined),
          method: fc.oneof(
            { arbitrary: fc.constant(method), weight: 9 },
            { arbitrary: fc.constantFrom(...METHODS), weight: 1 },
          ),
          idempotencyKey: fc.oneof(
            { arbitrary: fc.constant(null), weight: 8 },
            { arbitrary: fc.stringMatching(/^[A-Za-z0-9_-]{1,20}$/), weight: 1 },
            { arbitrary: fc.constantFrom("bad key!", "x".repeat(300)), weight: 1 },
          ),
        });
        await fc.assert(
          fc.asyncProperty(caseArbitrary, async (generated) => {
            const path = template.replace(/\{[^}]+\}/g, generated.id);
            const target = generated.query ? `${path}?${generated.query}` : path;
            const body = generated.body === undefined ? undefined : serialise(generated.body);
            const headers: Record<string, string> = generated.idempotencyKey
              ? { "Idempotency-Key": generated.idempotencyKey }
              : {};
            const response = await send(
              generated.method,
              target,
              ["GET", "HEAD"].includes(generated.method) ? undefined : body,
              headers,
            );
            expectEnvelope(`${generated.method} ${target} ${body?.slice(0, 300) ?? ""}`, generated.method, response);
          }),
          { numRuns: RUNS, seed: SEED, endOnFailure: true },
        );
      }
    }
  });

  it("answers malformed targets and bodies that are not JSON objects in the envelope", async () => {
    const cases: Array<[string, string, string | undefined]> = [
      ["GET", "/accounts/%ZZ", undefined],
      ["GET", "/%2e%2e/%2e%2e/etc/passwd", undefined],
      ["GET", "/accounts?industry=%", undefined],
      ["GET", "/accounts?industry=%25", undefined],
      ["GET", `/accounts?cursor=${"a".repeat(5_000)}`, undefined],
      ["POST", "/accounts", "[1,2,3]"],
      ["POST", "/accounts", '{"name":"\\ud800"}'],
      ["POST", "/accounts", '{"name":"a\\u0000"}'],
      ["POST", "/accounts/bulk", '{"accounts":[{"name":"\\udfff"}]}'],
      ["POST", "/accounts", '{"name":"x","employeeCount":1e400}'],
      ["POST", "/accounts", '{"name":"x","employeeCount":123456789012345678901234567890}'],
      ["POST", "/accounts", `{"name":"${randomBytes(8).toString("hex")}"`],
      [
        "POST",
        "/accounts",
        Buffer.from([0x7b, 0x22, 0x6e, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d]).toString("latin1"),
      ],
      ["PATCH", "/accounts/abc", '{"id":"other"}'],
    ];
    for (const [method, target, body] of cases) {
      expectEnvelope(`${method} ${target} ${body ?? ""}`, method, await send(method, target, body));
    }
  });
});
