import { generateOpenApiDocument } from "trpc-to-openapi";
import { SCOPES } from "./auth/scopes";
import { ERROR_CODES, type ErrorCode } from "./errors";
import { collectRoutes } from "./http/routes";
import { v1Router } from "./routers/v1";

type Json = Record<string, unknown>;

const API_DESCRIPTION = `JSON REST API of the MSP CRM: accounts and the rest of an MSP's customer data.

**Authentication.** Every operation except GET /status needs \`Authorization: Bearer <API_KEY>\` (msp_live_… or msp_test_…). Each operation lists the scope it requires; \`x:write\` implies \`x:read\` and \`admin:read\` implies every read scope. A missing or invalid key gives 401 unauthorized, a missing scope 403 insufficient_scope.

**Envelope.** Every response is \`{success, data, hasMore?, nextCursor?, requestId, timestamp}\` or \`{success:false, error:{code, message, docsUrl, details?}, requestId, timestamp}\`; the request id is also in the X-Request-Id header. This document and /postman.json are served as plain documents, without the envelope, and need no key.

**Lists.** \`limit\` 1–100 (default 50; more is refused with 422), keyset pagination with \`cursor\` = the previous page's \`nextCursor\` (the id of its last record), \`updatedAfter\` (strictly later), and \`sort\` (field:direction pairs over a per-endpoint allow-list; unknown fields ignored). \`nextCursor\` is also returned on the last page, so a client can poll for records created later.

**Validation.** Bodies are strict: an unknown field is refused with 422 validation_error naming it. Query parameters too. A malformed path id gives 400 bad_request; a body that is not JSON, 400 invalid_json.`;

const ErrorEnvelope = {
  type: "object",
  required: ["success", "error", "requestId", "timestamp"],
  properties: {
    success: { const: false },
    error: {
      type: "object",
      required: ["code", "message", "docsUrl"],
      properties: {
        code: { type: "string", enum: Object.keys(ERROR_CODES), description: "Error code (spec §7)." },
        message: { type: "string", description: "Human-readable explanation." },
        docsUrl: { type: "string", format: "uri", description: "Link to the error reference." },
        details: {
          type: "array",
          description: "Validation issues; present for validation_error (and bad_request on malformed parameters).",
          items: {
            type: "object",
            required: ["path", "message"],
            properties: { path: { type: "array", items: { type: "string" } }, message: { type: "string" } },
          },
        },
      },
    },
    requestId: { type: "string", pattern: "^req_[0-9a-f]{24}$" },
    timestamp: { type: "string", format: "date-time" },
  },
};

const envelopeFields = {
  requestId: { type: "string", pattern: "^req_[0-9a-f]{24}$", description: "Also in the X-Request-Id header." },
  timestamp: {
    type: "string",
    format: "date-time",
    description: "Time of the response, ISO 8601 UTC with milliseconds.",
  },
};

const REQUEST_ID_HEADER = { "X-Request-Id": { $ref: "#/components/headers/X-Request-Id" } };

function errorResponseFor(codes: ErrorCode[]): Json {
  return {
    description: codes.map((code) => `${code}: ${ERROR_CODES[code].description}`).join(" "),
    headers: REQUEST_ID_HEADER,
    content: { "application/json": { schema: { $ref: "#/components/schemas/ErrorEnvelope" } } },
  };
}

/** Which error codes an operation can answer, by HTTP status. */
function errorCodesOf(
  operation: Json,
  isProtected: boolean,
  hasPathParams: boolean,
  hasBody: boolean,
): Map<number, ErrorCode[]> {
  const codes: ErrorCode[] = [];
  if (hasPathParams || (operation.parameters as Json[] | undefined)?.some((p) => p.name === "cursor"))
    codes.push("bad_request");
  if (hasBody) codes.push("invalid_json");
  if (isProtected) codes.push("unauthorized", "insufficient_scope");
  if (hasPathParams) codes.push("not_found");
  if (hasBody || (operation.parameters as Json[] | undefined)?.length) codes.push("validation_error");
  codes.push("internal_error");
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of codes) {
    const status = ERROR_CODES[code].status;
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  return byStatus;
}

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
        description: `API key msp_live_… or msp_test_…. Scopes: ${Object.keys(SCOPES).join(", ")}.`,
      },
    },
  }) as unknown as Json;

  const components = document.components as Json & { schemas: Json };
  for (const name of Object.keys(components.schemas)) if (name.startsWith("error.")) delete components.schemas[name];
  components.schemas.ErrorEnvelope = ErrorEnvelope;
  components.headers = {
    "X-Request-Id": { description: "The request id, req_<token>; also in the body.", schema: { type: "string" } },
  };

  const paths = document.paths as Record<string, Record<string, Json>>;
  for (const route of collectRoutes(v1Router)) {
    const operation = paths[route.path]?.[route.method.toLowerCase()];
    if (!operation) continue;
    const responses = operation.responses as Record<string, Json>;
    const success = responses["200"] as Json & { content: { "application/json": { schema: Json } } };
    const inner = success.content["application/json"].schema;
    const properties: Json =
      route.meta.envelope === "list"
        ? { success: { const: true }, ...(inner.properties as Json) }
        : { success: { const: true }, data: inner };
    const status = String(route.meta.successStatus ?? 200);
    const isProtected = route.meta.openapi?.protect !== false;
    const result: Record<string, Json> = {
      [status]: {
        description: status === "201" ? "Created" : "Success",
        headers: REQUEST_ID_HEADER,
        content: {
          "application/json": {
            schema: {
              type: "object",
              required: [...Object.keys(properties), "requestId", "timestamp"],
              properties: { ...properties, ...envelopeFields },
            },
          },
        },
      },
    };
    for (const [code, codes] of errorCodesOf(
      operation,
      isProtected,
      route.pathParams.length > 0,
      "requestBody" in operation,
    )) {
      result[String(code)] = errorResponseFor(codes);
    }
    for (const [code, description] of Object.entries(route.meta.openapi?.errorResponses ?? {})) {
      if (!result[code]) result[code] = { ...errorResponseFor(["internal_error"]), description };
    }
    operation.responses = result;
    if (isProtected && route.meta.scope) {
      operation.security = [{ bearerAuth: [route.meta.scope] }];
      operation["x-required-scope"] = route.meta.scope;
      operation.description = `${operation.description ? `${operation.description}\n\n` : ""}Requires scope \`${route.meta.scope}\`.`;
    } else {
      operation.security = [];
    }
  }
  return document;
}

const cache = new Map<string, Json>();

/**
 * The OpenAPI 3.1 document of `/api/v1` (spec §1, §4.8), generated by trpc-to-openapi from the v1 router's zod schemas
 * and completed here: the spec §2.1 envelope around every success schema, the success status (201 on creates), every
 * error response with its codes, the Bearer scheme with each operation's scope. Cached per base URL.
 */
export function openApiDocument(baseUrl: string): Json {
  let document = cache.get(baseUrl);
  if (!document) {
    document = build(baseUrl);
    cache.set(baseUrl, document);
  }
  return document;
}
