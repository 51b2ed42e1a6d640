// The REST facade as one pipeline (docs/architecture.md, "Layers and the request pipeline"): every request under
// /api/v1 goes through the steps of PIPELINE in order; a step answers or hands over to the next. Errors thrown anywhere
// become the error envelope of docs/api-contract.md §2.1; the rate-limit headers go on every answer; the audit row is
// recorded once the answer exists.
import { databaseRefusal, measureDatabaseTime, sqlState } from "../db/statement-budget";
import { env } from "../env";
import { ApiError } from "../errors";
import { log } from "../observability/logger";
import { observeOutbox } from "../observability/metrics";
import { observeRequest, type RequestObservation } from "../observability/requests";
import { chargeDatabaseTime } from "../platform/limits/organisation-budgets";
import { auditQuery, recordAudit } from "../platform/request-log/record";
import type { Meta } from "../trpc";
import { outboxBacklog } from "../webhooks/worker";
import { identify, refuse } from "./authenticate";
import { budget } from "./budget";
import { conditionalRequests } from "./conditional";
import { apiErrorReply, errorReply, newRequestId } from "./envelope";
import type { ApiRequest, Exchange, Reply, Step } from "./exchange";
import { idempotency } from "./idempotency";
import { readInput } from "./input";
import { openApiText } from "./openapi";
import { clientAddress, publicOrigin } from "./origin";
import { API_PREFIX, parseTarget } from "./parse";
import { postmanText } from "./postman";
import { preferences } from "./preferences";
import { callProcedure } from "./procedure";
import { rateLimit } from "./rate-limit";
import { representation } from "./representation";
import { v1Router } from "./router";
import { collectRoutes, documentRoute, matchRoute, type RouteEntry } from "./routes";

const DOCUMENT_META: Meta = { openapi: { method: "GET", path: "/", protect: false } };

/**
 * Every operation of `/api/v1`: the v1 router's procedures and the two served documents (docs/api-contract.md §4.8).
 */
export const ROUTES: readonly RouteEntry[] = [
  ...collectRoutes(v1Router),
  documentRoute("/openapi.json", "openapi", DOCUMENT_META),
  documentRoute("/postman.json", "postman", DOCUMENT_META),
];

/**
 * Route: takes the target apart and matches it once against {@link ROUTES}. What cannot be served is recorded as the
 * exchange's refusal (answered after the rate limit by `refuse`): 400 `bad_request` for malformed percent-encoding or
 * dot segments, 422 for a repeated query parameter, 404 `not_found` for an unknown path, 405 `method_not_allowed` with
 * `Allow` for a method the path does not support (TRACE, PROPFIND, …). OPTIONS records the allowed methods.
 */
const route: Step = async (exchange, next) => {
  try {
    const parsed = parseTarget(exchange.request.target);
    if (!parsed) throw new ApiError("not_found", `No endpoint at ${exchange.request.target.split("?")[0]}`);
    exchange.path = parsed.segments.length === 0 ? "/" : `/${parsed.segments.join("/")}`;
    exchange.query = parsed.query;
    const found = matchRoute(ROUTES, exchange.method, parsed.segments);
    if (found.route) {
      exchange.route = found.route;
      exchange.pathParams = found.params ?? {};
      return next();
    }
    const where = `${API_PREFIX}${exchange.path === "/" ? "" : exchange.path}`;
    if (!found.allow) throw new ApiError("not_found", `No endpoint at ${where}`);
    const allow = [...found.allow, ...(found.allow.includes("GET") ? ["HEAD"] : [])];
    if (exchange.request.method === "OPTIONS") {
      exchange.allow = allow;
      return next();
    }
    throw new ApiError(
      "method_not_allowed",
      `${exchange.request.method} is not supported on ${where}; allowed: ${allow.join(", ")}`,
      { headers: { Allow: allow.join(", ") } },
    );
  } catch (error) {
    exchange.refusal = error;
    return next();
  }
};

/**
 * Documents: serves `/openapi.json` and `/postman.json` as plain documents without the envelope (docs/api-contract.md §4.8),
 * built for the request's public origin and never changed once built. Shared caches may keep them 300 s only when
 * `PUBLIC_URL` fixes that origin; otherwise the request's `Host` (or forwarding headers) chose it, and a shared cache
 * could hand one client a collection whose `baseUrl` sends its key to a host another client named, so they are
 * `private` (docs/architecture.md, "The REST facade").
 */
const serveDocument: Step = async (exchange, next) => {
  const document = exchange.route?.document;
  if (!document) return next();
  const body = document === "openapi" ? openApiText(exchange.origin) : await postmanText(exchange.origin);
  return {
    status: 200,
    body,
    headers: {
      "Content-Type": "application/json; charset=utf-8",
      "X-Request-Id": exchange.requestId,
      "Cache-Control": env().PUBLIC_URL ? "public, max-age=300" : "private, max-age=300",
    },
  };
};

/** The steps every request goes through, in order (docs/architecture.md, "Layers and the request pipeline"). */
export const PIPELINE: readonly Step[] = [
  route,
  identify,
  rateLimit,
  refuse,
  serveDocument,
  representation,
  preferences,
  readInput,
  budget,
  idempotency,
  conditionalRequests(ROUTES),
  callProcedure,
];

/**
 * Options of {@link createApiHandler}: `npm run bench` turns layers off to measure what each costs, and
 * {@link handleInProcessRequest} leaves out what its caller did already.
 */
export interface ApiHandlerOptions {
  /** Steps to leave out of {@link PIPELINE}. */
  without?: ReadonlyArray<Step>;
  /** Record no audit rows. */
  audit?: boolean;
  /**
   * Observe no request (no log line, duration metric or server span of its own): for calls a caller observes as part
   * of its own request, whose span the database's spans then join.
   */
  observe?: boolean;
}

/** The observation of a request that is part of another one: nothing of its own. */
const UNOBSERVED: RequestObservation = {
  span: null,
  run: (fn) => fn(),
  stage: (_name, body) => body((rest) => rest()),
  end: () => undefined,
};

function compose(steps: readonly Step[], exchange: Exchange, observation: RequestObservation): Promise<Reply> {
  const run = (index: number): Promise<Reply> => {
    const step = steps[index];
    if (!step) throw new Error("the pipeline ended without an answer");
    // With tracing on each step is a child span of the request, ended when it hands over (docs/architecture.md, "Layers and the request pipeline").
    if (observation.span) {
      return observation.stage(`pipeline.${step.name}`, (handover) =>
        step(exchange, () => handover(() => run(index + 1))),
      );
    }
    return step(exchange, () => run(index + 1));
  };
  return run(0);
}

function errorToReply(exchange: Exchange, error: unknown): Reply {
  if (error instanceof ApiError) return apiErrorReply(exchange.requestId, exchange.origin, error);
  const refusal = databaseRefusal(error);
  if (refusal) {
    log().warn(
      { requestId: exchange.requestId, sqlState: sqlState(error) ?? null },
      `the database did not finish the request; answered ${refusal.status} ${refusal.code}`,
    );
    return apiErrorReply(exchange.requestId, exchange.origin, refusal);
  }
  log().error({ requestId: exchange.requestId, err: error }, "unexpected error; answered 500 internal_error");
  return errorReply(
    exchange.requestId,
    exchange.origin,
    "internal_error",
    "Internal error; retry with exponential backoff",
  );
}

/** The route template of an exchange for logs, spans and metrics (`/api/v1/accounts/{id}`); null when none matched. */
function routeTemplate(exchange: Exchange): string | null {
  const path = exchange.route?.path;
  if (path === undefined) return null;
  return `${API_PREFIX}${path === "/" ? "" : path}`;
}

/**
 * Builds the REST facade's handler (docs/architecture.md, "Layers and the request pipeline"): runs {@link PIPELINE} for
 * a request and always answers, in the docs/api-contract.md §2.1 envelope with `X-Request-Id` and the rate-limit
 * headers, errors included (400, 401, 403, 404, 405, 409, 413, 422, 429, 500). HEAD is served as GET without a body.
 * Never throws. Each request is observed once (`observeRequest`: one log line, the request-duration metric, and with
 * tracing on a server span named `<METHOD> /api/v1/<template>` with one child span per step; docs/architecture.md,
 * "Observability").
 */
export function createApiHandler(options: ApiHandlerOptions = {}): (request: ApiRequest) => Promise<Reply> {
  const steps = PIPELINE.filter((step) => !options.without?.includes(step));
  const audit = options.audit !== false;
  const observe = options.observe !== false;
  // The process that serves the API reports the outbox its writes feed (once per process, with metrics on).
  observeOutbox(outboxBacklog);
  return async (request) => {
    const read = (name: string) => request.header(name);
    const exchange: Exchange = {
      request,
      requestId: request.inProcess?.requestId ?? newRequestId(),
      startedAt: performance.now(),
      origin: publicOrigin(read, request.encrypted),
      clientIp: clientAddress(read, request.socketAddress),
      userAgent: read("user-agent")?.slice(0, 512) ?? null,
      method: request.method === "HEAD" ? "GET" : request.method,
      path: "",
      query: new Map(),
      pathParams: {},
      principal: request.inProcess?.principal,
    };
    const observation = observe ? observeRequest(exchange.requestId, request.method, read) : UNOBSERVED;
    const measured = await measureDatabaseTime(() =>
      observation.run(async () => {
        try {
          return await compose(steps, exchange, observation);
        } catch (error) {
          return errorToReply(exchange, error);
        }
      }),
    );
    let reply = measured.result;
    // What the request cost the database counts against its organisation's budget (docs/api-contract.md §8.5).
    if (exchange.principal)
      chargeDatabaseTime(exchange.principal.orgId, exchange.principal.rateLimit.perOrg, measured.databaseMs);
    if (exchange.rateLimit) Object.assign(reply.headers, exchange.rateLimit.headers);
    if (request.method === "HEAD") reply = { ...reply, body: null };
    if (audit) {
      recordAudit({
        orgId: exchange.principal?.orgId ?? null,
        apiKeyId: exchange.principal?.apiKeyId ?? null,
        isTest: exchange.principal?.isTest ?? false,
        requestId: exchange.requestId,
        method: request.method.slice(0, 16),
        // A target that could not be parsed is recorded as it came.
        path: (exchange.path
          ? `${API_PREFIX}${exchange.path === "/" ? "" : exchange.path}`
          : (request.target.split("?")[0] ?? "")
        ).slice(0, 2048),
        query: auditQuery(exchange.query, exchange.principal !== undefined),
        status: reply.status,
        errorCode: reply.errorCode ?? null,
        durationMs: Math.round(performance.now() - exchange.startedAt),
        ip: exchange.clientIp,
        userAgent: exchange.userAgent,
        createdAt: new Date(),
      });
    }
    observation.end({
      route: routeTemplate(exchange),
      status: reply.status,
      orgId: exchange.principal?.orgId,
      apiKeyId: exchange.principal?.apiKeyId,
      errorCode: reply.errorCode,
    });
    return reply;
  };
}

/** The facade with every layer on: what `npm start` and the route handlers serve. */
export const handleApiRequest = createApiHandler();

/**
 * The facade for a caller inside this process that has authenticated the key and counted the call in the key's
 * rate-limit windows itself, and records the call in the request log under its own name: the MCP server's tools
 * (docs/architecture.md, "The MCP server"). Every other step runs as for `/api/v1` (scope, validation, budgets,
 * idempotency, preconditions, the procedure), with the principal and request id of `request.inProcess`; the caller's
 * own request is what the log, the metrics and the trace show.
 */
export const handleInProcessRequest = createApiHandler({
  without: [identify, rateLimit],
  audit: false,
  observe: false,
});
