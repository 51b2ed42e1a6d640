// One observation per HTTP request, whichever way it is served (the REST facade's pipeline, the Next.js pages): the
// log line, the request-duration metric and, with tracing on, the server span and its children
// (docs/architecture.md, "Observability").
import {
  type Context,
  context,
  propagation,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  type Tracer,
  trace,
} from "@opentelemetry/api";
import { env } from "../env";
import { requestLog } from "./logger";
import { knownMethod, recordRequest } from "./metrics";
import { tracingOn } from "./telemetry";

/** Tracer of the service's own spans (requests, pipeline steps, webhook deliveries). */
const TRACER_NAME = "msp-crm-api";

// Taken on first use: the tracer provider is registered by startTelemetry, before any request.
let cachedTracer: Tracer | undefined;
function tracer(): Tracer {
  cachedTracer ??= trace.getTracer(TRACER_NAME);
  return cachedTracer;
}

/** What is known about a request once it is answered (docs/architecture.md, "Observability"). */
export interface RequestOutcome {
  /** The route template (`/api/v1/accounts/{id}`, `/settings/webhooks/{id}`); null when no route matched. */
  route: string | null;
  status: number;
  orgId?: string | null;
  apiKeyId?: string | null;
  /** The code of an error answer (docs/api-contract.md §7). */
  errorCode?: string | null;
}

/** A request being observed; see {@link observeRequest} (docs/architecture.md, "Observability"). */
export interface RequestObservation {
  /** The request's server span, when tracing is on. */
  readonly span: Span | null;
  /** Runs `fn` with the request's span active, so the spans `fn` makes (database, Redis) are its children. */
  run<T>(fn: () => T): T;
  /**
   * Runs one stage of the request (a pipeline step) in a child span named `name`. The span ends when the stage hands
   * over to the rest (`handover(rest)`, which then runs under the request's span, not the stage's) or returns,
   * so stages are siblings whose lengths add up to the request's. Without tracing this is `body(rest => rest())`.
   */
  stage<T>(name: string, body: (handover: <U>(rest: () => U) => U) => Promise<T>): Promise<T>;
  /** Ends the observation: logs the request's line, records its duration and ends its span. Call once. */
  end(outcome: RequestOutcome): void;
}

type HeaderReader = (name: string) => string | undefined;

const headerGetter = {
  get: (read: HeaderReader, key: string) => read(key),
  keys: () => [],
};

function parentContext(header: HeaderReader): Context {
  // Inside a host's own request span (Next.js route handlers) the request is its child.
  const active = context.active();
  if (trace.getSpan(active)) return active;
  // A client's `traceparent` is continued only from a proxy the service trusts (TRUST_PROXY), like its forwarding
  // headers: otherwise anyone could choose our trace ids or switch sampling off for their requests.
  return env().TRUST_PROXY === 0 ? ROOT_CONTEXT : propagation.extract(ROOT_CONTEXT, header, headerGetter);
}

function passOn<U>(rest: () => U): U {
  return rest();
}

// Classes rather than closures: an observation is made for every request, and its methods are then shared, not
// created per request.

/** Writes the request's line and records its duration. */
function finish(requestId: string, method: string, startedAt: number, outcome: RequestOutcome, span: Span | null) {
  const durationMs = performance.now() - startedAt;
  recordRequest(method, outcome.route, outcome.status, durationMs / 1000);
  const ids = span?.spanContext();
  const line = {
    requestId,
    method: method.slice(0, 16),
    route: outcome.route,
    status: outcome.status,
    durationMs: Math.round(durationMs * 10) / 10,
    orgId: outcome.orgId ?? null,
    apiKeyId: outcome.apiKeyId ?? null,
    ...(outcome.errorCode ? { errorCode: outcome.errorCode } : {}),
    ...(ids ? { trace_id: ids.traceId, span_id: ids.spanId } : {}),
  };
  if (outcome.status >= 500) requestLog().error(line, "request");
  else requestLog().info(line, "request");
}

class UntracedObservation implements RequestObservation {
  readonly span = null;
  private readonly startedAt = performance.now();

  constructor(
    private readonly requestId: string,
    private readonly method: string,
  ) {}

  run<T>(fn: () => T): T {
    return fn();
  }

  stage<T>(_name: string, body: (handover: <U>(rest: () => U) => U) => Promise<T>): Promise<T> {
    return body(passOn);
  }

  end(outcome: RequestOutcome): void {
    finish(this.requestId, this.method, this.startedAt, outcome, null);
  }
}

class TracedObservation implements RequestObservation {
  readonly span: Span;
  private readonly startedAt = performance.now();
  private readonly verb: string;
  private readonly active: Context;

  constructor(
    private readonly requestId: string,
    private readonly method: string,
    header: HeaderReader,
  ) {
    const known = knownMethod(method);
    this.verb = known === "_OTHER" ? "HTTP" : known;
    const parent = parentContext(header);
    this.span = tracer().startSpan(
      this.verb,
      { kind: SpanKind.SERVER, attributes: { "http.request.method": known, "crm.request_id": requestId } },
      parent,
    );
    this.active = trace.setSpan(parent, this.span);
  }

  run<T>(fn: () => T): T {
    return context.with(this.active, fn);
  }

  async stage<T>(name: string, body: (handover: <U>(rest: () => U) => U) => Promise<T>): Promise<T> {
    const active = this.active;
    const child = tracer().startSpan(name, undefined, active);
    let open = true;
    const close = () => {
      if (open) {
        open = false;
        child.end();
      }
    };
    const handover = <U>(rest: () => U): U => {
      close();
      return context.with(active, rest);
    };
    try {
      return await context.with(trace.setSpan(active, child), () => body(handover));
    } finally {
      close();
    }
  }

  end(outcome: RequestOutcome): void {
    const span = this.span;
    span.updateName(outcome.route ? `${this.verb} ${outcome.route}` : this.verb);
    span.setAttributes({
      "http.response.status_code": outcome.status,
      ...(outcome.route ? { "http.route": outcome.route } : {}),
      ...(outcome.orgId ? { "crm.org_id": outcome.orgId } : {}),
      ...(outcome.apiKeyId ? { "crm.api_key_id": outcome.apiKeyId } : {}),
      ...(outcome.errorCode ? { "crm.error_code": outcome.errorCode } : {}),
    });
    if (outcome.status >= 500) {
      span.setStatus({ code: SpanStatusCode.ERROR });
      span.setAttribute("error.type", String(outcome.status));
    }
    finish(this.requestId, this.method, this.startedAt, outcome, span);
    span.end();
  }
}

/**
 * Starts observing one HTTP request. With tracing on it opens a SERVER span (renamed `<METHOD> <route template>` at
 * the end, per the HTTP semantic conventions; `HTTP` stands for a method outside the standard nine) carrying
 * `http.request.method`, `http.route`, `http.response.status_code`, `crm.request_id`, `crm.org_id` and
 * `crm.api_key_id`; a 5xx answer marks it as an error. {@link RequestObservation.end} then writes one log line
 * (`msg: "request"`, level `info`, `error` for 5xx) with `requestId`, `method`, `route`, `status`, `durationMs`
 * (ms, 0.1 ms precision), `orgId`, `apiKeyId`, `errorCode` and, when traced, `trace_id` / `span_id`; and records
 * `http.server.request.duration`. Never the path's ids, the query string, headers or the body.
 * Source: docs/architecture.md, "Observability".
 * @param requestId the request id the answer carries (`X-Request-Id`).
 * @param method the method as sent.
 * @param header reads a request header by lower-case name (for a trusted proxy's `traceparent`).
 */
export function observeRequest(requestId: string, method: string, header: HeaderReader): RequestObservation {
  return tracingOn() ? new TracedObservation(requestId, method, header) : new UntracedObservation(requestId, method);
}

/**
 * Runs `fn` outside any trace. For background work a request starts (a poller, a timer): created inside the request,
 * it would otherwise carry the request's trace into every later run.
 * Source: docs/architecture.md, "Observability".
 */
export function detached<T>(fn: () => T): T {
  return tracingOn() ? context.with(ROOT_CONTEXT, fn) : fn();
}

/**
 * Runs `fn` in a CLIENT span named `name` with `attributes` when tracing is on (else just runs it); `describe` may add
 * attributes from the result, and marks the span as an error by returning `error: true`.
 * Source: docs/architecture.md, "Observability".
 */
export async function clientSpan<T>(
  name: string,
  attributes: Record<string, string | number | boolean>,
  fn: () => Promise<T>,
  describe?: (result: T) => { attributes?: Record<string, string | number | boolean>; error?: string | null },
): Promise<T> {
  if (!tracingOn()) return fn();
  const span = tracer().startSpan(name, { kind: SpanKind.CLIENT, attributes });
  try {
    const result = await context.with(trace.setSpan(context.active(), span), fn);
    const described = describe?.(result);
    if (described?.attributes) span.setAttributes(described.attributes);
    if (described?.error) span.setStatus({ code: SpanStatusCode.ERROR, message: described.error });
    return result;
  } catch (error) {
    span.recordException(error as Error);
    span.setStatus({ code: SpanStatusCode.ERROR });
    throw error;
  } finally {
    span.end();
  }
}
