import { generateOpenApiDocument } from "trpc-to-openapi";
import { DATE_TIME_MAX_LENGTH } from "../contract/common";
import { ERROR_CODES, ERROR_LIMITS, type ErrorCode } from "../errors";
import { SCOPES } from "../platform/api-keys/scopes";
import { IDEMPOTENT_METHODS } from "../platform/idempotency";
import { CONDITION_MAX_LENGTH } from "./conditional";
import { v1Router } from "./router";
import { collectRoutes } from "./routes";

type Json = Record<string, unknown>;

const API_DESCRIPTION = `JSON REST API of the MSP CRM: accounts and the rest of an MSP's customer data.

**Authentication.** Every operation except GET /status needs \`Authorization: Bearer <API_KEY>\` (msp_live_… or msp_test_…). Each operation names the scope it requires in its description and in \`x-required-scope\` (an array where any one of several scopes will do: search); the bearerAuth scheme's \`x-scopes\` lists every scope with what it grants. \`x:write\` implies \`x:read\` and \`admin:read\` implies every read scope. Send the header once (two are 400 bad_request). A missing or invalid key gives 401 unauthorized, a missing scope 403 insufficient_scope (so does a test key asking for a test event or a redelivery: test keys send no webhooks). (OpenAPI lists scopes in a security requirement only for OAuth2 and OpenID Connect schemes; these keys are neither, so each requirement names the scheme alone.)

**Browsers (CORS).** API keys are server-side secrets: the API sends no Access-Control-Allow-* headers, so a web page on another origin cannot call it. Call it from your server, never from a browser with a key in it.

**Envelope.** Every response is \`{success, data, hasMore?, nextCursor?, requestId, timestamp}\` or \`{success:false, error:{code, message, docsUrl, details?}, requestId, timestamp}\`; the request id is also in the X-Request-Id header. This document and /postman.json are served as plain documents, without the envelope, and need no key.

**Lists.** \`limit\` 1–100 (default 50; more is refused with 422), keyset pagination with \`cursor\` = the previous page's \`nextCursor\`, the id of the page's last record (any record id of the list continues after that record; signed cursors answered before keep working; anything else, or a record the list does not have, is 400 bad_request), \`updatedAfter\` (strictly later), and \`sort\` (field:direction pairs over a per-endpoint allow-list; an invalid pair is ignored and named in the Sort-Ignored header, or refused with 422 naming the allowed fields when the request sends Prefer: handling=strict). \`nextCursor\` is also returned on the last page, so a client can poll for records created later. The events feed's and quick search's cursors are opaque and signed (the feed also takes an event id).

**Validation.** Bodies are strict: an unknown field is refused with 422 validation_error naming it. Query parameters too, and the error names the parameter an unknown one most likely meant ("Unknown query parameter lifecycleStatus; did you mean lifecycle?"). A malformed path id gives 400 bad_request; a body that is not JSON, 400 invalid_json. Bodies are limited to 1 MiB (1,048,576 bytes) and 32 levels of JSON nesting; larger or deeper bodies get 413 payload_too_large. Every string, array and integer of this document carries its bounds (maxLength, enum or const; maxItems; minimum, maximum and format int32 or int64): requests outside them are refused and answers stay within them. An error's message is at most ${ERROR_LIMITS.message.toLocaleString("en")} characters and its details at most ${ERROR_LIMITS.details.toLocaleString("en")} (the first ones).

**Rate limits.** Two sliding windows of 60 seconds apply at once, per key and per organisation (Starter 30/60, Growth 60/120, Scale 120/240, Pro 120–300/240–600 requests per minute). Every response carries X-RateLimit-Limit, X-RateLimit-Remaining and X-RateLimit-Reset (Unix seconds) of the tighter window and X-RateLimit-Policy: sliding-window, and the IETF draft's RateLimit-Policy and RateLimit; a request over either window gets 429 rate_limited with Retry-After (seconds). Requests without a valid key are counted per client IP.

**Idempotency.** POST, PATCH and DELETE accept an Idempotency-Key header (1–255 of A–Z a–z 0–9 _ -; otherwise 400 bad_request). Within 24 hours the same key with the same method, path and body replays the first response (status, body, Content-Type) with X-Idempotent-Replay: true and X-Original-Request-Id, without running the operation again; with a different request it gives 422 idempotency_conflict; while the first request is still running, 409 idempotency_in_progress with Retry-After: 1. Keys are scoped to the API key (and so the organisation). Failed requests (status 400 or more) are not stored and can be retried with the same key.`;

const INT32_MAX = 2_147_483_647;

/** The operations' tags, declared with descriptions in this order (Postman folders and /docs sections follow it). */
const TAGS = [
  { name: "Status", description: "Whether the service, its database and its rate-limit store answer; no key needed." },
  {
    name: "Accounts",
    description:
      "The MSP's customers: list, search, create, read, update, soft delete (CHURNED) and hard delete, bulk upsert on externalId.",
  },
  {
    name: "Contacts",
    description: "People at accounts with their account relationships; bulk upsert on email; erasure of a person.",
  },
  { name: "Deals", description: "The pipeline: stages, won and lost outcomes, MRR per deal." },
  { name: "Tasks", description: "Follow-ups on accounts and deals." },
  {
    name: "Devices",
    description: "The RMM inventory: online, end-of-life and patch state; bulk upsert on rmmAgentId.",
  },
  { name: "Touchpoints", description: "Logged interactions with accounts." },
  { name: "Notes", description: "Notes on accounts, deals, contracts and leads." },
  {
    name: "Health scores",
    description: "Churn risk per account, 0 to 100, with its breakdown and 90-day history; external signals pushed in.",
  },
  { name: "MRR", description: "Monthly recurring revenue and pipeline by service category, computed on request." },
  {
    name: "Events",
    description:
      "Every change of every resource in order, deletions included, to keep a copy in sync; the payload webhooks carry.",
  },
  {
    name: "Webhooks",
    description:
      "Endpoints that receive signed event deliveries (Standard Webhooks), their delivery attempts, tests and redelivery.",
  },
  {
    name: "Search",
    description:
      "Find accounts, contacts, deals and devices by the words of their names, emails, domains, phone numbers and ids, best first.",
  },
  {
    name: "Usage",
    description: "The organisation's calls to this API per time bucket: status classes, p95 latency and top errors.",
  },
  {
    name: "Custom fields",
    description:
      "The organisation's own typed fields on accounts, contacts, deals, devices and tasks: their definitions, and each resource's fields as JSON Schema. Records carry the values in customFields.",
  },
] as const;

/**
 * `format` of an integer schema from the bounds it declares: int32 when they fit in 32 bits, else int64 (every integer
 * of the document is bounded within ±(2^53 − 1), so int64 holds the rest). Walks the whole document.
 */
function addIntegerFormats(node: unknown): void {
  if (Array.isArray(node)) {
    for (const item of node) addIntegerFormats(item);
    return;
  }
  if (!node || typeof node !== "object") return;
  const schema = node as Json;
  const isInteger = schema.type === "integer" || (Array.isArray(schema.type) && schema.type.includes("integer"));
  if (isInteger && schema.format === undefined) {
    const fits = (bound: unknown) => typeof bound === "number" && Math.abs(bound) <= INT32_MAX;
    schema.format = fits(schema.minimum) && fits(schema.maximum) ? "int32" : "int64";
  }
  for (const value of Object.values(schema)) addIntegerFormats(value);
}

const REQUEST_ID_SCHEMA = {
  type: "string",
  pattern: "^req_[0-9a-f]{24}$",
  maxLength: 28,
  description: "Also in the X-Request-Id header.",
};
const TIMESTAMP_SCHEMA = {
  type: "string",
  format: "date-time",
  maxLength: DATE_TIME_MAX_LENGTH,
  description: "Time of the response, ISO 8601 UTC with milliseconds.",
};

const ErrorEnvelope = {
  type: "object",
  required: ["success", "error", "requestId", "timestamp"],
  properties: {
    success: { const: false, description: "Always false on an error." },
    error: {
      type: "object",
      description: "What went wrong.",
      required: ["code", "message", "docsUrl"],
      properties: {
        code: { type: "string", enum: Object.keys(ERROR_CODES), description: "Error code." },
        message: {
          type: "string",
          maxLength: ERROR_LIMITS.message,
          description: `Human-readable explanation, at most ${ERROR_LIMITS.message.toLocaleString("en")} characters.`,
        },
        docsUrl: { type: "string", format: "uri", maxLength: 2_048, description: "Link to the error reference." },
        details: {
          type: "array",
          maxItems: ERROR_LIMITS.details,
          description: `Validation issues; present for validation_error (and bad_request on malformed parameters). At most ${ERROR_LIMITS.details.toLocaleString("en")}: the first ones.`,
          items: {
            type: "object",
            required: ["path", "message"],
            properties: {
              path: {
                type: "array",
                maxItems: ERROR_LIMITS.pathSegments,
                items: { type: "string", maxLength: ERROR_LIMITS.segment },
                description: `Where the issue is, from the root of the body or query, e.g. ["accounts", "3", "name"]; a segment longer than ${ERROR_LIMITS.segment} characters (an unknown field's name) is cut, ending in "…".`,
              },
              message: { type: "string", maxLength: ERROR_LIMITS.message, description: "What is wrong there." },
            },
          },
        },
      },
    },
    requestId: REQUEST_ID_SCHEMA,
    timestamp: TIMESTAMP_SCHEMA,
  },
};

const envelopeFields = { requestId: REQUEST_ID_SCHEMA, timestamp: TIMESTAMP_SCHEMA };

const COMMON_HEADERS = [
  "X-Request-Id",
  "X-RateLimit-Limit",
  "X-RateLimit-Remaining",
  "X-RateLimit-Reset",
  "X-RateLimit-Policy",
  "RateLimit-Policy",
  "RateLimit",
] as const;
const REQUEST_ID_HEADER = Object.fromEntries(
  COMMON_HEADERS.map((name) => [name, { $ref: `#/components/headers/${name}` }]),
);
const HEADER_DEFINITIONS: Record<string, Json> = {
  "X-Request-Id": {
    description: "The request id, req_<token>; also in the body.",
    schema: { type: "string", pattern: "^req_[0-9a-f]{24}$", maxLength: 28 },
  },
  "X-RateLimit-Limit": {
    description: "Requests per minute allowed by the tighter of the two sliding windows (per key, per organisation).",
    schema: { type: "integer", minimum: 0, maximum: INT32_MAX },
  },
  "X-RateLimit-Remaining": {
    description: "Requests left in that window.",
    schema: { type: "integer", minimum: 0, maximum: INT32_MAX },
  },
  "X-RateLimit-Reset": {
    description: "Unix time in seconds when that window next frees a request.",
    schema: { type: "integer", minimum: 0, maximum: Number.MAX_SAFE_INTEGER },
  },
  "X-RateLimit-Policy": { description: "Always sliding-window.", schema: { const: "sliding-window" } },
  "RateLimit-Policy": {
    description:
      'IETF draft-ietf-httpapi-ratelimit-headers: the policies that apply, as a list of "name";q=<requests>;w=<window seconds>: "key" and "org" for a request with an API key, "ip" without one. Example: "key";q=60;w=60, "org";q=120;w=60.',
    schema: { type: "string", maxLength: 200 },
  },
  RateLimit: {
    description:
      'IETF draft-ietf-httpapi-ratelimit-headers: the tighter policy now, "name";r=<requests remaining>;t=<seconds until it frees one>. Example: "key";r=59;t=60.',
    schema: { type: "string", maxLength: 100 },
  },
  "Retry-After": {
    description: "Seconds to wait before retrying: at most 60, the length of a rate-limit window.",
    schema: { type: "integer", minimum: 1, maximum: 60 },
  },
  ETag: {
    description:
      "Entity tag of the answer's data (a strong validator): send it back in If-None-Match on a GET (304 when unchanged) or in If-Match on a PATCH or DELETE (412 precondition_failed when the record changed).",
    schema: { type: "string", pattern: '^"[A-Za-z0-9_-]{27}"$', maxLength: 29 },
  },
  "X-Idempotent-Replay": {
    description: "true when this is the stored response of an earlier request with the same Idempotency-Key.",
    schema: { const: "true" },
  },
  "X-Original-Request-Id": {
    description: "On a replay: the request id of the request whose response is replayed.",
    schema: { type: "string", pattern: "^req_[0-9a-f]{24}$", maxLength: 28 },
  },
  "Preference-Applied": {
    description:
      "RFC 7240: the handling of sort this answer applied, handling=strict or handling=lenient. Sent when the request gave a sort and either named a handling in Prefer or had a sort pair ignored.",
    schema: { type: "string", enum: ["handling=strict", "handling=lenient"] },
  },
  "Sort-Ignored": {
    description:
      'The pairs of sort that were ignored (an unknown field, a malformed pair, a repeated field, an empty value), as sent, as a structured-field list of strings (RFC 9651): "colour:desc", "name:sideways". Characters outside printable ASCII, and %, are percent-encoded.',
    schema: { type: "string", maxLength: 2_000 },
  },
};
const IDEMPOTENCY_PARAMETER = {
  name: "Idempotency-Key",
  in: "header",
  required: false,
  description:
    "Makes retries safe: the same key with the same request within 24 hours replays the first response instead of running again.",
  schema: { type: "string", pattern: "^[A-Za-z0-9_-]{1,255}$", maxLength: 255 },
};

const PREFER_PARAMETER = {
  name: "Prefer",
  in: "header",
  required: false,
  description:
    "handling=strict (RFC 7240): an invalid sort pair (an unknown field, a malformed pair, a repeated field, an empty value) is refused with 422 validation_error naming the allowed fields. Without it, or with handling=lenient, invalid pairs are ignored (the default order applies when none is valid) and named in the Sort-Ignored header, with Preference-Applied: handling=lenient.",
  schema: { type: "string", maxLength: 1_000, example: "handling=strict" },
};

/** Whether an operation takes `sort`, as a query parameter (lists) or in its body (structured search). */
function takesSort(operation: Json): boolean {
  const inQuery = (operation.parameters as Json[] | undefined)?.some((parameter) => parameter.name === "sort");
  const body = (operation.requestBody as Json | undefined)?.content as Record<string, Json> | undefined;
  const inBody = Object.values(body ?? {}).some(
    (media) => ((media.schema as Json | undefined)?.properties as Json | undefined)?.sort !== undefined,
  );
  return inQuery === true || inBody;
}

const IF_NONE_MATCH_PARAMETER = {
  name: "If-None-Match",
  in: "header",
  required: false,
  description: `An ETag of an earlier answer (or several, comma-separated; * for any): when the record still has it, the answer is 304 Not Modified without a body. At most ${CONDITION_MAX_LENGTH.toLocaleString("en")} characters (400 bad_request otherwise).`,
  schema: { type: "string", maxLength: CONDITION_MAX_LENGTH },
};
const IF_MATCH_PARAMETER = {
  name: "If-Match",
  in: "header",
  required: false,
  description: `The ETag of the record as you read it: the write runs only if the record still has it, else 412 precondition_failed with the current ETag, so two integrations cannot overwrite each other's changes silently. At most ${CONDITION_MAX_LENGTH.toLocaleString("en")} characters (400 bad_request otherwise).`,
  schema: { type: "string", maxLength: CONDITION_MAX_LENGTH },
};

/** The reads that take `expand=account`, and where each record names its account. */
export const EXPANDABLE: Readonly<Record<string, "accountId" | "objectId" | "accounts">> = {
  "/contacts": "accounts",
  "/contacts/{id}": "accounts",
  "/deals": "accountId",
  "/deals/{id}": "accountId",
  "/devices": "accountId",
  "/devices/{id}": "accountId",
  "/tasks": "accountId",
  "/tasks/{id}": "accountId",
  "/notes": "objectId",
  "/notes/{id}": "objectId",
};

/**
 * The fields of the records an operation answers (a list's items or the record itself) when they have an `id`: those
 * operations take `fields`. Undefined otherwise.
 */
function recordFields(
  data: Json,
  list: boolean,
  components: Json & { schemas: Record<string, Json> },
): string[] | undefined {
  const resolve = (schema: Json | undefined): Json | undefined =>
    typeof schema?.$ref === "string" ? resolve(components.schemas[schema.$ref.split("/").pop() as string]) : schema;
  const record = list ? resolve((resolve(data)?.properties as Json | undefined)?.data as Json)?.items : data;
  const properties = resolve(record as Json | undefined)?.properties as Json | undefined;
  return properties?.id ? Object.keys(properties) : undefined;
}

const EXPANDED_ACCOUNT = {
  anyOf: [{ $ref: "#/components/schemas/Account" }, { type: "null" }],
  description: "Only with expand=account: the account it refers to, as GET /accounts/{id} returns it; null when none.",
};

// Codes whose answers carry Retry-After (docs/api-contract.md §7).
const RETRY_AFTER_CODES: ReadonlySet<ErrorCode> = new Set([
  "rate_limited",
  "idempotency_in_progress",
  "timeout",
  "conflict",
]);

function errorResponseFor(codes: ErrorCode[]): Json {
  const retry = codes.some((code) => RETRY_AFTER_CODES.has(code));
  return {
    description: codes.map((code) => `${code}: ${ERROR_CODES[code].description}`).join(" "),
    headers: retry
      ? { ...REQUEST_ID_HEADER, "Retry-After": { $ref: "#/components/headers/Retry-After" } }
      : REQUEST_ID_HEADER,
    content: { "application/json": { schema: { $ref: "#/components/schemas/ErrorEnvelope" } } },
  };
}

/** Which error codes an operation can answer, by HTTP status. */
function errorCodesOf(
  operation: Json,
  isProtected: boolean,
  hasPathParams: boolean,
  hasBody: boolean,
  isIdempotent: boolean,
  extra: readonly ErrorCode[],
): Map<number, ErrorCode[]> {
  const codes: ErrorCode[] = [...extra];
  const refusedParameters = new Set(["cursor", "If-Match", "If-None-Match"]);
  if (
    hasPathParams ||
    isIdempotent ||
    (operation.parameters as Json[] | undefined)?.some((p) => refusedParameters.has(p.name as string))
  )
    codes.push("bad_request");
  if (hasBody) codes.push("invalid_json", "payload_too_large");
  if (isIdempotent) codes.push("idempotency_conflict", "idempotency_in_progress");
  // A write can meet another on the same rows: a deadlock the retries did not clear is 409 (docs/api-contract.md §7).
  if (isIdempotent && !codes.includes("conflict")) codes.push("conflict");
  codes.push("rate_limited");
  if (isProtected) codes.push("unauthorized", "insufficient_scope");
  if (hasPathParams) codes.push("not_found");
  if (hasBody || (operation.parameters as Json[] | undefined)?.length) codes.push("validation_error");
  // Every operation that reads the database runs under the statement timeout (docs/api-contract.md §8.1).
  if (isProtected) codes.push("timeout");
  codes.push("internal_error");
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of codes) {
    const status = ERROR_CODES[code].status;
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  return byStatus;
}

/** The example a schema carries (`example`, or the first of `examples`), following a `$ref` into the components. */
function exampleOf(schema: Json | undefined, components: Json & { schemas: Record<string, Json> }): unknown {
  if (!schema) return undefined;
  if (typeof schema.$ref === "string")
    return exampleOf(components.schemas[schema.$ref.split("/").pop() as string], components);
  if (schema.example !== undefined) return schema.example;
  if (Array.isArray(schema.examples) && schema.examples.length > 0) return schema.examples[0];
  const options = (schema.anyOf ?? schema.oneOf) as Json[] | undefined;
  if (options) return exampleOf(options[0], components);
  if (schema.type === "array") {
    const item = exampleOf(schema.items as Json | undefined, components);
    return item === undefined ? undefined : [item];
  }
  return undefined;
}

const EXAMPLE_REQUEST_ID = "req_5f2c9d0e1a7b4c3d8e6f0a12";
const EXAMPLE_TIMESTAMP = "2026-11-24T09:00:00.123Z";

function build(baseUrl: string): Json {
  const document = generateOpenApiDocument(v1Router, {
    title: "MSP CRM Public API",
    version: "1.0.0",
    description: API_DESCRIPTION,
    baseUrl: `${baseUrl}/api/v1`,
    docsUrl: `${baseUrl}/docs`,
    securitySchemes: {
      bearerAuth: {
        type: "http",
        scheme: "bearer",
        description: `API key msp_live_… or msp_test_…, sent as Authorization: Bearer <key>. Each operation names the scope it needs in x-required-scope; x-scopes lists them all: ${Object.keys(SCOPES).join(", ")}.`,
      },
    },
  }) as unknown as Json;
  const schemes = (document.components as Json & { securitySchemes: Record<string, Json> }).securitySchemes;
  (schemes.bearerAuth as Json)["x-scopes"] = { ...SCOPES };
  document.info = {
    ...(document.info as Json),
    contact: { name: "MSP CRM API reference", url: `${baseUrl}/docs` },
  };
  document.tags = TAGS.map((tag) => ({ ...tag }));
  document.servers = [
    {
      url: `${baseUrl}/api/v1`,
      description: "The API on the server this document was downloaded from (production, staging or local alike).",
      "x-internal": false,
    },
  ];

  const components = document.components as Json & { schemas: Json };
  for (const name of Object.keys(components.schemas)) if (name.startsWith("error.")) delete components.schemas[name];
  components.schemas.ErrorEnvelope = ErrorEnvelope;
  components.headers = HEADER_DEFINITIONS;

  const paths = document.paths as Record<string, Record<string, Json>>;
  for (const route of collectRoutes(v1Router)) {
    const operation = paths[route.path]?.[route.method.toLowerCase()];
    if (!operation) continue;
    // Tools read a parameter's own description (Postman shows it beside the parameter); the generator puts it on
    // the schema.
    for (const parameter of (operation.parameters as Json[] | undefined) ?? []) {
      const description = (parameter.schema as Json | undefined)?.description;
      if (!parameter.description && typeof description === "string") parameter.description = description;
    }
    const body = (operation.requestBody as Json | undefined)?.content as Record<string, Json> | undefined;
    // Input fields a body method takes from the query (`?mode=partial`): out of the body schema, into parameters.
    for (const name of route.meta.query ?? []) {
      for (const media of Object.values(body ?? {})) {
        const schema = media.schema as Json & { properties?: Record<string, Json>; required?: string[] };
        const field = schema?.properties?.[name];
        if (!schema.properties || !field) continue;
        delete schema.properties[name];
        if (Array.isArray(schema.required)) schema.required = schema.required.filter((key: string) => key !== name);
        operation.parameters = [
          ...((operation.parameters as Json[] | undefined) ?? []),
          { name, in: "query", required: false, description: field.description, schema: field },
        ];
      }
    }
    for (const media of Object.values(body ?? {})) {
      const example = exampleOf(media.schema as Json, components as never);
      if (example !== undefined) media.example = example;
    }
    const responses = operation.responses as Record<string, Json>;
    const success = responses["200"] as Json & { content: { "application/json": { schema: Json } } };
    const inner = success.content["application/json"].schema;
    const properties: Json =
      route.meta.envelope === "list"
        ? { success: { const: true }, ...(inner.properties as Json) }
        : { success: { const: true }, data: inner };
    const status = String(route.meta.successStatus ?? 200);
    const isProtected = route.meta.openapi?.protect !== false;
    const dataExample =
      route.meta.envelope === "list"
        ? exampleOf((inner.properties as Json).data as Json, components as never)
        : exampleOf(inner, components as never);
    // A list that is always one page (its nextCursor is typed null) shows so in its example too.
    const onePage = ((inner.properties as Json | undefined)?.nextCursor as Json | undefined)?.type === "null";
    const envelopeExample = {
      success: true,
      data: dataExample,
      ...(route.meta.envelope === "list"
        ? {
            hasMore: !onePage,
            nextCursor: onePage
              ? null
              : ((dataExample as Array<{ id?: string; accountId?: string }>)?.[0]?.id ??
                (dataExample as Array<{ accountId?: string }>)?.[0]?.accountId ??
                null),
          }
        : {}),
      requestId: EXAMPLE_REQUEST_ID,
      timestamp: EXAMPLE_TIMESTAMP,
    };
    const result: Record<string, Json> = {
      [status]: {
        description:
          status === "201" ? "Created" : status === "202" ? "Accepted: the background worker does the rest" : "Success",
        headers: REQUEST_ID_HEADER,
        content: {
          "application/json": {
            schema: {
              type: "object",
              required: [...Object.keys(properties), "requestId", "timestamp"],
              properties: { ...properties, ...envelopeFields },
            },
            ...(dataExample === undefined ? {} : { example: envelopeExample }),
          },
        },
      },
    };
    if (route.meta.envelope !== "list") {
      const success = result[status] as Json & { headers: Json };
      success.headers = { ...success.headers, ETag: { $ref: "#/components/headers/ETag" } };
    }
    const conditionalWrite = route.pathParams.length > 0 && (route.method === "PATCH" || route.method === "DELETE");
    const fields = recordFields(inner, route.meta.envelope === "list", components as never);
    if (route.method === "GET" && fields) {
      operation.parameters = [
        ...((operation.parameters as Json[] | undefined) ?? []),
        {
          name: "fields",
          in: "query",
          required: false,
          description:
            "Sparse fieldset: comma-separated fields of the record to return; id is always included. An unknown field gives 422.",
          schema: { type: "string", maxLength: 1000, example: fields.slice(0, 2).join(",") },
        },
        ...(EXPANDABLE[route.path]
          ? [
              {
                name: "expand",
                in: "query",
                required: false,
                description:
                  "account: adds the referenced account under account (for a contact, under each of its accounts relationships), fetched in one query a page.",
                schema: { type: "string", enum: ["account"] },
              },
            ]
          : []),
      ];
    }
    if (route.method === "GET" && route.meta.envelope !== "list") {
      operation.parameters = [...((operation.parameters as Json[] | undefined) ?? []), IF_NONE_MATCH_PARAMETER];
      result["304"] = {
        description: "Not Modified: the If-None-Match header names the current ETag; no body.",
        headers: { ...REQUEST_ID_HEADER, ETag: { $ref: "#/components/headers/ETag" } },
      };
    }
    if (conditionalWrite) {
      operation.parameters = [...((operation.parameters as Json[] | undefined) ?? []), IF_MATCH_PARAMETER];
    }
    const sorts = takesSort(operation);
    if (sorts) {
      operation.parameters = [...((operation.parameters as Json[] | undefined) ?? []), PREFER_PARAMETER];
      const success = result[status] as Json & { headers: Json };
      success.headers = {
        ...success.headers,
        "Preference-Applied": { $ref: "#/components/headers/Preference-Applied" },
        "Sort-Ignored": { $ref: "#/components/headers/Sort-Ignored" },
      };
    }
    // An output that is a union of the usual answer and another one with a status of its own (a bulk request in
    // partial mode, a dry run): each status documents its own.
    const alternates: Array<[number | undefined, string]> = [
      [
        route.meta.partialStatus,
        "Multi-Status: mode=partial. The valid items were committed together; data has one result per item (created, updated or error), in request order.",
      ],
      [route.meta.dryRunStatus, "Dry run: nothing was done; data says what would be."],
    ];
    for (const [alternate, description] of alternates) {
      if (!alternate) continue;
      const success = result[status] as Json & { content: { "application/json": { schema: Json } } };
      const schema = success.content["application/json"].schema as Json & { properties: Record<string, Json> };
      const [whole, other] = ((schema.properties.data as Json).anyOf ?? []) as Json[];
      if (!whole || !other) continue;
      schema.properties.data = whole;
      // Which of the documented 2xx answers the operation gives unless the request asks for the other one.
      operation["x-success-status"] = Number(status);
      result[String(alternate)] = {
        description,
        headers: REQUEST_ID_HEADER,
        content: {
          "application/json": {
            schema: { ...schema, properties: { ...schema.properties, data: other } },
            example: {
              success: true,
              data: exampleOf(other, components as never),
              requestId: EXAMPLE_REQUEST_ID,
              timestamp: EXAMPLE_TIMESTAMP,
            },
          },
        },
      };
    }
    const isIdempotent = isProtected && IDEMPOTENT_METHODS.has(route.method);
    if (isIdempotent) {
      operation.parameters = [...((operation.parameters as Json[] | undefined) ?? []), IDEMPOTENCY_PARAMETER];
      const success = result[status] as Json & { headers: Json };
      success.headers = {
        ...success.headers,
        "X-Idempotent-Replay": { $ref: "#/components/headers/X-Idempotent-Replay" },
        "X-Original-Request-Id": { $ref: "#/components/headers/X-Original-Request-Id" },
      };
    }
    for (const [code, codes] of errorCodesOf(
      operation,
      isProtected,
      route.pathParams.length > 0,
      "requestBody" in operation,
      isIdempotent,
      route.meta.errors ?? [],
    )) {
      result[String(code)] = errorResponseFor(codes);
    }
    if (conditionalWrite) {
      result["412"] = {
        ...errorResponseFor(["precondition_failed"]),
        headers: { ...REQUEST_ID_HEADER, ETag: { $ref: "#/components/headers/ETag" } },
      };
    }
    const refused = result["422"] as (Json & { headers: Json }) | undefined;
    if (sorts && refused) {
      refused.headers = {
        ...refused.headers,
        "Preference-Applied": { $ref: "#/components/headers/Preference-Applied" },
      };
    }
    for (const [code, description] of Object.entries(route.meta.openapi?.errorResponses ?? {})) {
      if (!result[code]) result[code] = { ...errorResponseFor(["internal_error"]), description };
    }
    operation.responses = result;
    if (isProtected && route.meta.scope) {
      // The scope goes in x-required-scope: OpenAPI names scopes in a requirement for OAuth2 and OpenID Connect only.
      // An operation that accepts any of several scopes lists them there as an array.
      const scope = route.meta.scope;
      operation.security = [{ bearerAuth: [] }];
      operation["x-required-scope"] = typeof scope === "string" ? scope : [...scope];
      const needs =
        typeof scope === "string"
          ? `scope \`${scope}\``
          : `any one of the scopes ${scope.map((one) => `\`${one}\``).join(", ")}`;
      operation.description = `${operation.description ? `${operation.description}\n\n` : ""}Requires ${needs}.`;
    } else {
      operation.security = [];
    }
  }
  for (const name of ["Deal", "Device", "Task", "Note"]) {
    const schema = (components.schemas as Record<string, Json>)[name] as Json & { properties?: Json };
    if (schema?.properties) schema.properties.account = EXPANDED_ACCOUNT;
  }
  const schemas = components.schemas as Record<string, Json>;
  const contact = schemas.Contact as Json & { properties?: { accounts?: { items?: Json & { properties?: Json } } } };
  // The relationship is a component of its own: the expanded account goes there, where generators read it.
  const items = contact?.properties?.accounts?.items;
  const link = (typeof items?.$ref === "string" ? schemas[items.$ref.split("/").pop() as string] : items) as
    | (Json & { properties?: Json })
    | undefined;
  if (link?.properties) link.properties.account = EXPANDED_ACCOUNT;
  addIntegerFormats(document);
  return document;
}

// Documents per public origin, serialised once; few origins are ever seen, and the oldest is dropped past this many.
const MAX_CACHED_ORIGINS = 16;
const cache = new Map<string, string>();

/**
 * The OpenAPI 3.1 document of `/api/v1` as served (docs/api-contract.md §1, §4.8): generated by trpc-to-openapi from
 * the v1 router's zod schemas and completed here (the envelope of docs/api-contract.md §2.1 around every success
 * schema, the success status, every error response with its codes, the Bearer scheme with each operation's scope), with
 * `servers[0].url` = `<origin>/api/v1`. Serialised once per origin; the text never changes once built.
 */
export function openApiText(origin: string): string {
  let text = cache.get(origin);
  if (text === undefined) {
    text = JSON.stringify(build(origin));
    if (cache.size >= MAX_CACHED_ORIGINS) cache.delete(cache.keys().next().value as string);
    cache.set(origin, text);
  }
  return text;
}

/** The document of {@link openApiText} as a new object: callers may change it without touching what is served. */
export function openApiDocument(origin: string): Json {
  return JSON.parse(openApiText(origin)) as Json;
}
