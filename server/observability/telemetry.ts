// OpenTelemetry for the service (docs/architecture.md, "Observability"): off unless asked for, and then started before
// anything it instruments is loaded. The SDK and its exporters are imported only when on, so a server without
// telemetry loads none of them.
import { timingSafeEqual } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { createRequire } from "node:module";
import type { MetricReader } from "@opentelemetry/sdk-metrics";
import { env } from "../env";
import { log, setTraceFields } from "./logger";

/** Which parts of the telemetry run in this process (docs/architecture.md, "Observability"). */
export interface TelemetryState {
  /** Spans are exported over OTLP. */
  tracing: boolean;
  /** Metrics are recorded (exported over OTLP, served on `METRICS_PORT`, or both). */
  metrics: boolean;
  /** The port `/metrics` is served on; null when `METRICS_PORT` is unset. */
  metricsPort: number | null;
  /** Exports what is buffered and stops the exporters and the metrics server. */
  shutdown(): Promise<void>;
}

const OFF: TelemetryState = { tracing: false, metrics: false, metricsPort: null, shutdown: async () => undefined };

// One state per process: Next.js bundles its own copy of this module (instrumentation.ts), which must see what the
// server started.
const holder = globalThis as unknown as {
  __crmTelemetry?: Promise<TelemetryState>;
  __crmTelemetryState?: TelemetryState;
};

function set(name: string): boolean {
  return Boolean(process.env[name]?.trim());
}

function listed(name: string, fallback: string): string[] {
  return (process.env[name] ?? fallback)
    .split(",")
    .map((item) => item.trim().toLowerCase())
    .filter(Boolean);
}

/**
 * What the environment asks for: OTLP export when `OTEL_EXPORTER_OTLP_ENDPOINT` (or a signal's own
 * `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` / `_METRICS_ENDPOINT`) is set and `OTEL_SDK_DISABLED` is not `true`; the
 * Prometheus endpoint when `METRICS_PORT` is set. `OTEL_TRACES_EXPORTER=none` / `OTEL_METRICS_EXPORTER=none` turn a
 * signal's OTLP export off, as the SDK's own variables say. Source: docs/architecture.md, "Observability".
 */
export function telemetryWanted(): { traces: boolean; otlpMetrics: boolean; metricsPort: number | null } {
  if (process.env.OTEL_SDK_DISABLED?.trim().toLowerCase() === "true")
    return { traces: false, otlpMetrics: false, metricsPort: null };
  const endpoint = set("OTEL_EXPORTER_OTLP_ENDPOINT");
  return {
    traces:
      (endpoint || set("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")) &&
      !listed("OTEL_TRACES_EXPORTER", "otlp").includes("none"),
    otlpMetrics:
      (endpoint || set("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT")) &&
      !listed("OTEL_METRICS_EXPORTER", "otlp").includes("none"),
    metricsPort: env().METRICS_PORT ?? null,
  };
}

/**
 * The OTLP metric reader the SDK would build from the environment (`OTEL_EXPORTER_OTLP_METRICS_PROTOCOL` or
 * `OTEL_EXPORTER_OTLP_PROTOCOL`, `OTEL_METRIC_EXPORT_INTERVAL`, `OTEL_METRIC_EXPORT_TIMEOUT`; the exporter reads its
 * endpoint and headers itself). Built here only because the SDK takes readers from the environment or from code, not
 * both, and the Prometheus reader comes from code.
 */
async function otlpMetricReader(): Promise<MetricReader> {
  const { PeriodicExportingMetricReader } = await import("@opentelemetry/sdk-metrics");
  const protocol = (process.env.OTEL_EXPORTER_OTLP_METRICS_PROTOCOL ?? process.env.OTEL_EXPORTER_OTLP_PROTOCOL ?? "")
    .trim()
    .toLowerCase();
  const { OTLPMetricExporter } =
    protocol === "grpc"
      ? await import("@opentelemetry/exporter-metrics-otlp-grpc")
      : protocol === "http/json"
        ? await import("@opentelemetry/exporter-metrics-otlp-http")
        : await import("@opentelemetry/exporter-metrics-otlp-proto");
  const interval = Number(process.env.OTEL_METRIC_EXPORT_INTERVAL) || 60_000;
  const timeout = Math.min(Number(process.env.OTEL_METRIC_EXPORT_TIMEOUT) || 30_000, interval);
  return new PeriodicExportingMetricReader({
    exporter: new OTLPMetricExporter(),
    exportIntervalMillis: interval,
    exportTimeoutMillis: timeout,
  });
}

function sameToken(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

/**
 * Serves `GET /metrics` (Prometheus text) on its own port, all interfaces; with a token, only to
 * `Authorization: Bearer <token>` (401 otherwise). Any other path is 404.
 */
async function serveMetrics(
  port: number,
  token: string | undefined,
  handle: (req: IncomingMessage, res: ServerResponse) => void,
): Promise<Server> {
  const server = createServer((req, res) => {
    const path = (req.url ?? "/").split("?")[0];
    if (path !== "/metrics" || (req.method !== "GET" && req.method !== "HEAD")) {
      res.writeHead(404, { "Content-Type": "text/plain; charset=utf-8" }).end("Not found: metrics are at /metrics\n");
      return;
    }
    const presented = /^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? "")?.[1];
    if (token && !(presented && sameToken(presented, token))) {
      res
        .writeHead(401, { "Content-Type": "text/plain; charset=utf-8", "WWW-Authenticate": 'Bearer realm="metrics"' })
        .end("Unauthorized: send Authorization: Bearer <METRICS_TOKEN>\n");
      return;
    }
    handle(req, res);
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, () => {
      server.off("error", reject);
      resolve();
    });
  });
  return server;
}

/**
 * Has the ioredis instrumentation patch the Redis client class. ioredis is CommonJS: an ES module importing it shares
 * the one `module.exports`, and requiring it through the instrumentation's `require` hook patches that object whether
 * or not it was imported before (a bundled server hoists its imports above any start-up code), with no ES module
 * loader hook. Prisma needs none either (its client reads a global); pg is left alone (Prisma's spans cover its
 * queries) and the webhook client makes its own spans.
 */
function patchRedisClient(): void {
  createRequire(import.meta.url)("ioredis");
}

/** How often one OpenTelemetry diagnostic (an export failing against a collector that is down) is logged, ms. */
const DIAGNOSTIC_INTERVAL_MS = 60_000;

/**
 * The SDK's own diagnostics (an exporter that cannot reach its collector, a bad variable) as JSON log lines, at
 * `OTEL_LOG_LEVEL` (default `WARN`), each message at most once a minute: the SDK would otherwise print plain text, or
 * nothing at all.
 */
function diagnosticsToLog(api: typeof import("@opentelemetry/api")): void {
  const lastLogged = new Map<string, number>();
  const write =
    (level: "error" | "warn" | "info" | "debug") =>
    (message: string, ...args: unknown[]) => {
      const now = Date.now();
      const topic = message.slice(0, 120);
      if (now - (lastLogged.get(topic) ?? 0) < DIAGNOSTIC_INTERVAL_MS) return;
      lastLogged.set(topic, now);
      const detail = args.map((arg) => (arg instanceof Error ? arg.message : typeof arg === "string" ? arg : ""));
      log()[level]({ component: "opentelemetry", detail: detail.filter(Boolean).join("; ") || undefined }, message);
    };
  const named = process.env.OTEL_LOG_LEVEL?.trim().toUpperCase() as keyof typeof api.DiagLogLevel | undefined;
  const level = named && named in api.DiagLogLevel ? api.DiagLogLevel[named] : api.DiagLogLevel.WARN;
  api.diag.setLogger(
    { error: write("error"), warn: write("warn"), info: write("info"), debug: write("debug"), verbose: write("debug") },
    { logLevel: level, suppressOverrideMessage: true },
  );
}

async function start(options: { patchRedis: boolean }): Promise<TelemetryState> {
  const wanted = telemetryWanted();
  if (!wanted.traces && !wanted.otlpMetrics && wanted.metricsPort === null) return OFF;

  const [{ NodeSDK }, { PrismaInstrumentation }, { IORedisInstrumentation }, api] = await Promise.all([
    import("@opentelemetry/sdk-node"),
    import("@prisma/instrumentation"),
    import("@opentelemetry/instrumentation-ioredis"),
    import("@opentelemetry/api"),
  ]);

  const readers: MetricReader[] = [];
  let prometheus: import("@opentelemetry/exporter-prometheus").PrometheusExporter | null = null;
  if (wanted.metricsPort !== null) {
    const { PrometheusExporter } = await import("@opentelemetry/exporter-prometheus");
    prometheus = new PrometheusExporter({ preventServerStart: true });
    readers.push(prometheus);
  }
  if (wanted.otlpMetrics) readers.push(await otlpMetricReader());

  const named = Boolean(
    process.env.OTEL_SERVICE_NAME?.trim() || process.env.OTEL_RESOURCE_ATTRIBUTES?.includes("service.name="),
  );
  const sdk = new NodeSDK({
    // The SDK's own default would be `unknown_service:node`.
    serviceName: named ? undefined : "msp-crm-api",
    // Spans of the database and Redis only when spans are exported: with metrics alone they would cost every query
    // and command for nothing.
    instrumentations: wanted.traces
      ? [
          // The operation and its SQL; the client's own serialise and compile steps would double the spans per query.
          new PrismaInstrumentation({ ignoreSpanTypes: ["prisma:client:serialize", "prisma:client:compile"] }),
          // Redis spans only inside a trace, with the command's name alone: keys and arguments (window members,
          // hashed sign-in emails) tell a reader nothing and would grow every span.
          new IORedisInstrumentation({ requireParentSpan: true, dbStatementSerializer: (command) => command }),
        ]
      : [],
    metricReaders: readers,
    // Without an endpoint the SDK would export spans to localhost:4318; logs go to stdout, not OTLP.
    ...(wanted.traces ? {} : { spanProcessors: [] }),
    logRecordProcessors: [],
  });
  diagnosticsToLog(api);
  sdk.start();
  if (options.patchRedis && wanted.traces) patchRedisClient();
  // Some resource attributes (host.id, read from the system) are detected asynchronously. The OTLP exporters wait for
  // them before their first export; the Prometheus exporter reads them at every scrape without waiting, and until they
  // have settled the SDK logs "Accessing resource attributes before async attributes settled" at error level each
  // time and leaves them out of `target_info`. A collection hands over the one resource every reader and span shares:
  // settled here (a few ms), before anything is served.
  const [firstReader] = readers;
  if (firstReader) await (await firstReader.collect()).resourceMetrics.resource.waitForAsyncAttributes?.();

  let metricsServer: Server | null = null;
  if (prometheus && wanted.metricsPort !== null) {
    const reader = prometheus;
    try {
      metricsServer = await serveMetrics(wanted.metricsPort, env().METRICS_TOKEN, (req, res) =>
        reader.getMetricsRequestHandler(req, res),
      );
    } catch (error) {
      await sdk.shutdown().catch(() => undefined);
      const busy = (error as NodeJS.ErrnoException).code === "EADDRINUSE";
      throw new Error(
        busy
          ? `METRICS_PORT ${wanted.metricsPort} is in use: stop what holds it or choose another port.`
          : `METRICS_PORT ${wanted.metricsPort}: ${String(error)}`,
      );
    }
  }

  if (wanted.traces) {
    setTraceFields(() => {
      const span = api.trace.getActiveSpan();
      if (!span) return undefined;
      const { traceId, spanId } = span.spanContext();
      return { trace_id: traceId, span_id: spanId };
    });
  }
  log().info(
    {
      traces: wanted.traces,
      otlpMetrics: wanted.otlpMetrics,
      metricsPort: wanted.metricsPort,
      metricsToken: Boolean(env().METRICS_TOKEN),
    },
    "telemetry on",
  );
  return {
    tracing: wanted.traces,
    metrics: readers.length > 0,
    metricsPort: wanted.metricsPort,
    shutdown: async () => {
      setTraceFields(undefined);
      if (metricsServer) {
        const closing = metricsServer;
        await new Promise<void>((resolve) => closing.close(() => resolve()));
        closing.closeAllConnections();
      }
      // A collector that does not answer must not hold the shutdown up for long.
      await Promise.race([sdk.shutdown(), new Promise((resolve) => setTimeout(resolve, 5_000).unref())]).catch(
        () => undefined,
      );
    },
  };
}

/**
 * Starts OpenTelemetry once per process when the environment asks for it ({@link telemetryWanted}); otherwise does
 * nothing and loads nothing. When on: the Node SDK configured by the standard `OTEL_*` variables (service name
 * default `msp-crm-api`), Prisma's and ioredis's instrumentations, OTLP export of spans and metrics, and `/metrics`
 * on `METRICS_PORT` (Prometheus text; `METRICS_TOKEN` bearer). Run it first, before serving: spans and metrics
 * start when it has finished. Later calls return the first call's state.
 * @param options.patchRedis instrument ioredis (the self-hosted server, default); false inside Next.js's own start-up
 *        (`instrumentation.ts`), whose bundles cannot `require` by path (and reach Vercel KV over HTTP).
 * @throws Error when `METRICS_PORT` cannot be listened on (in use, no permission).
 * Source: docs/architecture.md, "Observability".
 */
export function startTelemetry(options: { patchRedis?: boolean } = {}): Promise<TelemetryState> {
  holder.__crmTelemetry ??= start({ patchRedis: options.patchRedis ?? true }).then((state) => {
    holder.__crmTelemetryState = state;
    return state;
  });
  return holder.__crmTelemetry;
}

/**
 * Whether spans are being recorded in this process (false until {@link startTelemetry} has finished).
 * Source: docs/architecture.md, "Observability".
 */
export function tracingOn(): boolean {
  return holder.__crmTelemetryState?.tracing === true;
}

/**
 * Whether metrics are being recorded in this process (false until {@link startTelemetry} has finished).
 * Source: docs/architecture.md, "Observability".
 */
export function metricsOn(): boolean {
  return holder.__crmTelemetryState?.metrics === true;
}

/**
 * Exports what is buffered and stops the telemetry started by {@link startTelemetry}, within 5 s; safe to call when
 * off. Source: docs/architecture.md, "Observability".
 */
export async function stopTelemetry(): Promise<void> {
  const state = await holder.__crmTelemetry;
  holder.__crmTelemetry = undefined;
  holder.__crmTelemetryState = undefined;
  await state?.shutdown();
}
