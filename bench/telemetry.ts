// Section 7 of `npm run bench`: what observing the service costs the read path (docs/architecture.md,
// "Observability"). The REST facade runs on node:http in three configurations at once — as shipped (request log line
// at `info`, OpenTelemetry off), with the log silenced, and with OpenTelemetry on (every span and metric exported over
// OTLP/HTTP to a sink in this process, /metrics served) — and GET /accounts/{id} is measured in alternating slices.
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { type LoadResult, type LoadSample, runLoad, summariseLoad } from "./load";

/** The three facade servers: `shipped` (the defaults), `silent` (LOG_LEVEL=silent), `traced` (OpenTelemetry on). */
export type ObservedConfig = "shipped" | "silent" | "traced";

/** Requests/s of each configuration and what the log line and OpenTelemetry cost (share of throughput lost, 0–1). */
export interface ObservabilityResult {
  get: Record<ObservedConfig, LoadResult>;
  costs: { logLine: number; telemetry: number };
  /** OTLP export requests the sink received during the run (spans and metrics), to show telemetry really ran. */
  exports: number;
}

/** A stand-in OTLP/HTTP collector: answers every export 200 and discards it. */
export interface OtlpSink {
  url: string;
  exports(): number;
  close(): Promise<void>;
}

/** Starts an {@link OtlpSink} on a free loopback port. */
export async function startOtlpSink(): Promise<OtlpSink> {
  let exports = 0;
  const server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      exports++;
      res.writeHead(200, { "Content-Type": req.headers["content-type"] ?? "application/x-protobuf" }).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    exports: () => exports,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * The environment of the `silent` and `traced` servers (the `shipped` one gets none): the traced one exports to
 * `sinkUrl` with the SDK's defaults and serves /metrics on `metricsPort`.
 */
export function observedEnv(sinkUrl: string, metricsPort: number): Record<"silent" | "traced", Record<string, string>> {
  return {
    silent: { LOG_LEVEL: "silent" },
    traced: { OTEL_EXPORTER_OTLP_ENDPOINT: sinkUrl, METRICS_PORT: String(metricsPort) },
  };
}

/**
 * Measures GET /accounts/{id} on the three configurations, `slices` rounds of `durationMs` split evenly, after
 * `warmupMs` each.
 */
export async function measureObservability(options: {
  origins: Record<ObservedConfig, string>;
  sink: OtlpSink;
  key: string;
  accountId: string;
  connections: number;
  warmupMs: number;
  durationMs: number;
  slices: number;
}): Promise<ObservabilityResult> {
  const configs: ObservedConfig[] = ["shipped", "silent", "traced"];
  const load = (config: ObservedConfig, durationMs: number) =>
    runLoad({
      url: `${options.origins[config]}/api/v1/accounts/${options.accountId}`,
      headers: { authorization: `Bearer ${options.key}` },
      connections: options.connections,
      durationMs,
    });
  for (const config of configs) await load(config, options.warmupMs);
  const exportsBefore = options.sink.exports();
  const samples: Record<ObservedConfig, LoadSample[]> = { shipped: [], silent: [], traced: [] };
  for (let slice = 0; slice < options.slices; slice++) {
    for (let i = 0; i < configs.length; i++) {
      const config = configs[(slice + i) % configs.length] as ObservedConfig;
      samples[config].push(await load(config, options.durationMs / options.slices));
    }
  }
  const get = {
    shipped: summariseLoad(samples.shipped),
    silent: summariseLoad(samples.silent),
    traced: summariseLoad(samples.traced),
  };
  return {
    get,
    costs: { logLine: 1 - get.shipped.rps / get.silent.rps, telemetry: 1 - get.traced.rps / get.shipped.rps },
    exports: options.sink.exports() - exportsBefore,
  };
}
