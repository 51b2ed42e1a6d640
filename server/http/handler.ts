import { TRPCError } from "@trpc/server";
import { createOpenApiNodeHttpHandler } from "trpc-to-openapi";
import { ZodError } from "zod";
import { env } from "../env";
import { ApiError, type ErrorDetail } from "../errors";
import { openApiDocument } from "../openapi";
import { postmanCollection } from "../postman";
import { v1Router } from "../routers/v1";
import { authenticateApiKey } from "../services/api-keys";
import type { RequestState } from "../trpc";
import { recordAudit } from "./audit";
import { readJsonBody } from "./body";
import { type EnvelopeContext, ERROR_CODE_HEADER, errorResponse, newRequestId, successResponse } from "./envelope";
import { IDEMPOTENCY_HEADER, IDEMPOTENT_METHODS, parseIdempotencyKey, runIdempotent } from "./idempotency";
import { enforceRateLimit, type RateLimitDecision } from "./rate-limit";
import { collectRoutes, matchRoute, type RouteEntry } from "./routes";

/** Path prefix of the public API (spec §9). */
export const API_PREFIX = "/api/v1";

const routes = collectRoutes(v1Router);
// Only `npm run bench` sets this, to measure what each platform layer costs (comma-separated: rate-limit, audit).
const benchDisabled = new Set((process.env.BENCH_DISABLE_LAYERS ?? "").split(","));
const RATE_LIMIT_ON = !benchDisabled.has("rate-limit");
const AUDIT_ON = !benchDisabled.has("audit");
const BODY_METHODS = new Set(["POST", "PATCH", "PUT"]);

function baseUrlOf(url: URL): string {
  return env().PUBLIC_BASE_URL?.replace(/\/$/, "") ?? url.origin;
}

/** Turns zod issues into spec §2.1 details: unrecognised keys become one issue per key. */
function zodDetails(error: ZodError): ErrorDetail[] {
  return error.issues.flatMap((issue) => {
    const path = issue.path.map(String);
    if (issue.code === "unrecognized_keys") {
      return issue.keys.map((key) => ({ path: [...path, key], message: `Unrecognized field ${key}` }));
    }
    return [{ path, message: issue.message }];
  });
}

/** Maps whatever a procedure threw to the spec §7 code, status and message; internals never reach the body. */
function toApiError(error: unknown, route: RouteEntry, requestId: string): ApiError {
  const cause = error instanceof TRPCError ? error.cause : error;
  if (cause instanceof ApiError) return cause;
  if (error instanceof TRPCError && error.code === "BAD_REQUEST" && cause instanceof ZodError) {
    const details = zodDetails(cause);
    const inPath = details.every(
      (detail) => detail.path.length === 1 && route.pathParams.includes(detail.path[0] as string),
    );
    return inPath
      ? new ApiError("bad_request", "Malformed path parameter", { details })
      : new ApiError("validation_error", "Request validation failed", { details });
  }
  if (error instanceof TRPCError && error.code === "PARSE_ERROR") {
    return new ApiError("invalid_json", "Request body is not valid JSON");
  }
  console.error(
    JSON.stringify({
      level: "error",
      requestId,
      path: route.path,
      error: String(cause ?? error),
      stack: (cause as Error | undefined)?.stack,
    }),
  );
  return new ApiError("internal_error", "Internal error; retry with exponential backoff");
}

interface ProcedureCall {
  state: RequestState;
  req: Request;
  failure?: unknown;
}

const calls = new WeakMap<object, ProcedureCall>();

// Built once. createOpenApiFetchHandler would rebuild it (and its route table) on every request, and outside
// production regenerate the OpenAPI document each time.
const openApiHandler = createOpenApiNodeHttpHandler({
  router: v1Router,
  createContext: ({ req }: { req: object }) => {
    const call = calls.get(req) as ProcedureCall;
    return { req: call.req, state: call.state };
  },
  onError: ({ error, req }: { error: unknown; req: object }) => {
    const call = calls.get(req);
    if (call) call.failure = error;
  },
} as Parameters<typeof createOpenApiNodeHttpHandler>[0]);

/**
 * Runs the trpc-to-openapi operation for `path` (relative to `/api/v1`, with its query) on an already parsed JSON
 * body, the way the library's fetch adapter does: the Request is proxied so the library sees the relative URL and the
 * parsed body, and a minimal response object collects status and body.
 */
function callProcedure(
  req: Request,
  path: string,
  method: string,
  body: unknown,
  state: RequestState,
): Promise<{ status: number; body: string; failure?: unknown }> {
  const call: ProcedureCall = { state, req };
  const proxied = new Proxy(req, {
    get: (target, prop) => {
      if (prop === "url") return path;
      if (prop === "method") return method;
      if (prop === "body") return body;
      if (prop === "headers") return body === undefined ? target.headers : JSON_HEADERS;
      return Reflect.get(target, prop);
    },
  });
  calls.set(proxied, call);
  return new Promise((resolve) => {
    let status = 200;
    const res = {
      setHeader: () => undefined,
      get statusCode() {
        return status;
      },
      set statusCode(code: number) {
        status = code;
      },
      end: (text: string) => resolve({ status, body: text, failure: call.failure }),
    };
    void (openApiHandler as unknown as (req: object, res: object) => Promise<void>)(proxied, res);
  });
}

// The library only needs the content type; authentication reads the original request's headers through the context.
const JSON_HEADERS = new Headers({ "content-type": "application/json" });

function fromApiError(ctx: EnvelopeContext, error: ApiError): Response {
  return errorResponse(ctx, error.code, error.message, {
    details: error.details,
    status: error.status,
    headers: error.headers,
  });
}

/**
 * The REST facade (DESIGN.md §2): serves every request under `/api/v1` — the trpc-to-openapi operations of the v1
 * router plus `GET /openapi.json` — and answers every one of them, errors included (404 unknown path, 405 wrong method
 * with `Allow`, 400 `invalid_json`, 422 `validation_error`, 500 `internal_error`), in the spec §2.1 envelope with
 * `X-Request-Id`. Never throws.
 */
export async function handleApiRequest(req: Request): Promise<Response> {
  const started = performance.now();
  const requestId = newRequestId();
  const url = new URL(req.url);
  const ctx: EnvelopeContext = { requestId, baseUrl: baseUrlOf(url) };
  const state: RequestState = { requestId };
  const limits: { decision?: RateLimitDecision } = {};
  let response: Response;
  let errorCode: string | null = null;
  try {
    response = await dispatch(req, url, ctx, state, limits);
    errorCode = response.headers.get(ERROR_CODE_HEADER);
    response.headers.delete(ERROR_CODE_HEADER);
  } catch (error) {
    console.error(JSON.stringify({ level: "error", requestId, error: String(error), stack: (error as Error).stack }));
    response = errorResponse(ctx, "internal_error", "Internal error; retry with exponential backoff");
    errorCode = "internal_error";
  }
  for (const [name, value] of Object.entries(limits.decision?.headers ?? {})) response.headers.set(name, value);
  if (!AUDIT_ON) return response;
  recordAudit({
    orgId: state.principal?.orgId ?? null,
    apiKeyId: state.principal?.apiKeyId ?? null,
    isTest: state.principal?.isTest ?? false,
    requestId,
    method: req.method,
    path: url.pathname,
    query: url.search ? url.search.slice(1) : null,
    status: response.status,
    errorCode,
    durationMs: Math.round(performance.now() - started),
    ip: clientIp(req),
    userAgent: req.headers.get("user-agent"),
    createdAt: new Date(),
  });
  return response;
}

/** The caller's address as the proxy in front of us reports it; null when served directly without one. */
function clientIp(req: Request): string | null {
  return req.headers.get("x-forwarded-for")?.split(",")[0]?.trim() || req.headers.get("x-real-ip");
}

/**
 * Counts the request against the caller's windows (spec §8): the key's and organisation's when authenticated, else an
 * anonymous per-IP window. Records the decision for the headers every response carries.
 * @returns a 429 `rate_limited` response with `Retry-After` when a window is exhausted, else null.
 */
async function rateLimit(
  req: Request,
  ctx: EnvelopeContext,
  state: RequestState,
  limits: { decision?: RateLimitDecision },
): Promise<Response | null> {
  if (!RATE_LIMIT_ON) return null;
  const principal = state.principal;
  const decision = await enforceRateLimit(
    principal
      ? { kind: "key", apiKeyId: principal.apiKeyId, orgId: principal.orgId, ...principal.rateLimit }
      : { kind: "anonymous", ip: clientIp(req) ?? "local" },
  );
  limits.decision = decision;
  if (decision.allowed) return null;
  return errorResponse(
    ctx,
    "rate_limited",
    `Rate limit exceeded; retry in ${decision.retryAfterSeconds ?? 1} seconds`,
    { headers: { "Retry-After": String(decision.retryAfterSeconds ?? 1) } },
  );
}

async function dispatch(
  req: Request,
  url: URL,
  ctx: EnvelopeContext,
  state: RequestState,
  limits: { decision?: RateLimitDecision },
): Promise<Response> {
  const path = url.pathname.slice(API_PREFIX.length).replace(/\/+$/, "") || "/";
  const isHead = req.method === "HEAD";
  const method = isHead ? "GET" : req.method;

  const documentOf = DOCUMENTS[path];
  const { route, allow } = documentOf ? { route: undefined, allow: undefined } : matchRoute(routes, method, path);
  if (route?.meta.scope) {
    try {
      state.principal = await authenticateApiKey(req.headers.get("authorization"));
    } catch (error) {
      const limited = await rateLimit(req, ctx, state, limits);
      return withoutBody(limited ?? fromApiError(ctx, toApiError(error, route, ctx.requestId)), isHead);
    }
  }
  const limited = await rateLimit(req, ctx, state, limits);
  if (limited) return withoutBody(limited, isHead);

  if (documentOf) {
    if (method !== "GET") {
      const message = `${req.method} is not supported on ${API_PREFIX}${path}`;
      return withoutBody(
        errorResponse(ctx, "method_not_allowed", message, { headers: { Allow: "GET, HEAD" } }),
        isHead,
      );
    }
    return withoutBody(documentResponse(await documentOf(ctx.baseUrl), ctx.requestId), isHead);
  }

  if (!route) {
    if (allow) {
      const methods = allow.includes("GET") ? [...allow, "HEAD"] : allow;
      if (req.method === "OPTIONS") {
        return new Response(null, {
          status: 204,
          headers: { Allow: [...methods, "OPTIONS"].join(", "), "X-Request-Id": ctx.requestId },
        });
      }
      return withoutBody(
        errorResponse(
          ctx,
          "method_not_allowed",
          `${req.method} is not supported on ${API_PREFIX}${path}; allowed: ${methods.join(", ")}`,
          {
            headers: { Allow: methods.join(", ") },
          },
        ),
        isHead,
      );
    }
    return withoutBody(errorResponse(ctx, "not_found", `No endpoint at ${API_PREFIX}${path}`), isHead);
  }

  let idempotencyKey: string | null = null;
  if (IDEMPOTENT_METHODS.has(method) && state.principal) {
    try {
      idempotencyKey = parseIdempotencyKey(req.headers.get(IDEMPOTENCY_HEADER));
    } catch (error) {
      return fromApiError(ctx, error as ApiError);
    }
  }

  let body: unknown;
  if (BODY_METHODS.has(method)) {
    const read = await readJsonBody(req);
    if (!read.ok) return fromApiError(ctx, read.error);
    body = read.body;
  }

  const execute = () => runProcedure(req, route, `${path}${url.search}`, method, body, ctx, state, isHead);
  if (!idempotencyKey || !state.principal) return execute();
  try {
    return await runIdempotent(
      {
        orgId: state.principal.orgId,
        apiKeyId: state.principal.apiKeyId,
        key: idempotencyKey,
        method,
        path: `${path}${url.search}`,
        body,
        requestId: ctx.requestId,
      },
      execute,
    );
  } catch (error) {
    return fromApiError(ctx, toApiError(error, route, ctx.requestId));
  }
}

/** Runs the matched operation and wraps its result in the spec §2.1 envelope. */
async function runProcedure(
  req: Request,
  route: RouteEntry,
  pathWithQuery: string,
  method: string,
  body: unknown,
  ctx: EnvelopeContext,
  state: RequestState,
  isHead: boolean,
): Promise<Response> {
  const result = await callProcedure(req, pathWithQuery, method, body, state);
  if (result.failure !== undefined || result.status >= 400) {
    return withoutBody(fromApiError(ctx, toApiError(result.failure, route, ctx.requestId)), isHead);
  }
  const data: unknown = JSON.parse(result.body);
  const { meta } = route;
  if (meta.envelope === "list") {
    const {
      data: items,
      hasMore,
      nextCursor,
    } = data as { data: unknown[]; hasMore: boolean; nextCursor: string | null };
    return withoutBody(successResponse(ctx, items, 200, { hasMore, nextCursor }), isHead);
  }
  return withoutBody(successResponse(ctx, data, meta.successStatus ?? 200), isHead);
}

// Served as plain documents without the envelope, so API tools import them as they are (README: decisions).
const DOCUMENTS: Record<string, (baseUrl: string) => unknown> = {
  "/openapi.json": openApiDocument,
  "/postman.json": postmanCollection,
};

function documentResponse(document: unknown, requestId: string): Response {
  return new Response(JSON.stringify(document), {
    status: 200,
    headers: {
      "Content-Type": "application/json; charset=utf-8",
      "X-Request-Id": requestId,
      "Cache-Control": "public, max-age=300",
    },
  });
}

function withoutBody(response: Response, isHead: boolean): Response {
  return isHead ? new Response(null, { status: response.status, headers: response.headers }) : response;
}
