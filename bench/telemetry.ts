// Section 7 of `npm run bench`: what observing the service costs the read path (docs/architecture.md,
// "Observability"). The REST facade runs on node:http in three configurations at once — as shipped (request log line
// at `info`, OpenTelemetry off), with the log silenced, and with OpenTelemetry on (every span and metric exported over
// OTLP/HTTP to a sink in this process, /metrics served) — and GET /accounts/{id} is measured in alternating slices.
import { readFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { type LoadResult, type LoadSample, runLoad, summariseLoad } from "./load";

/** The three facade servers: `shipped` (the defaults), `silent` (LOG_LEVEL=silent), `traced` (OpenTelemetry on). */
export type ObservedConfig = "shipped" | "silent" | "traced";

/**
 * Requests/s of each configuration, the server's CPU per answered request (µs; null where /proc is unreadable), and
 * what the log line and OpenTelemetry cost: share of throughput lost (0–1), and extra CPU per request (µs). On a
 * machine busy with other work, throughput swings from slice to slice; CPU per request moves much less.
 */
export interface ObservabilityResult {
  get: Record<ObservedConfig, LoadResult>;
  cpuUsPerRequest: Record<ObservedConfig, number | null>;
  costs: { logLine: number; telemetry: number; logLineCpuUs: number | null; telemetryCpuUs: number | null };
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

/** CPU time a process (all its threads) has used, ms; null where /proc is not readable. USER_HZ is 100 on Linux. */
function cpuMs(pid: number | undefined): number | null {
  if (pid === undefined) return null;
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.split(" ") ?? [];
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return null;
  }
}

/**
 * Measures GET /accounts/{id} on the three configurations, `slices` rounds of `durationMs` split evenly, after
 * `warmupMs` each, and each server's CPU over its own slices (`pids`: the server processes).
 */
export async function measureObservability(options: {
  origins: Record<ObservedConfig, string>;
  pids: Record<ObservedConfig, number | undefined>;
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
  const cpu: Record<ObservedConfig, number | null> = { shipped: 0, silent: 0, traced: 0 };
  for (let slice = 0; slice < options.slices; slice++) {
    for (let i = 0; i < configs.length; i++) {
      const config = configs[(slice + i) % configs.length] as ObservedConfig;
      const before = cpuMs(options.pids[config]);
      samples[config].push(await load(config, options.durationMs / options.slices));
      const after = cpuMs(options.pids[config]);
      const used = cpu[config];
      cpu[config] = before === null || after === null || used === null ? null : used + (after - before);
    }
  }
  const get = {
    shipped: summariseLoad(samples.shipped),
    silent: summariseLoad(samples.silent),
    traced: summariseLoad(samples.traced),
  };
  const perRequest = (config: ObservedConfig) => {
    const used = cpu[config];
    const answered = samples[config].reduce((sum, sample) => sum + sample.latencies.length, 0);
    return used === null || answered === 0 ? null : (used * 1000) / answered;
  };
  const cpuUsPerRequest = {
    shipped: perRequest("shipped"),
    silent: perRequest("silent"),
    traced: perRequest("traced"),
  };
  const difference = (a: number | null, b: number | null) => (a === null || b === null ? null : a - b);
  return {
    get,
    cpuUsPerRequest,
    costs: {
      logLine: 1 - get.shipped.rps / get.silent.rps,
      telemetry: 1 - get.traced.rps / get.shipped.rps,
      logLineCpuUs: difference(cpuUsPerRequest.shipped, cpuUsPerRequest.silent),
      telemetryCpuUs: difference(cpuUsPerRequest.traced, cpuUsPerRequest.shipped),
    },
    exports: options.sink.exports() - exportsBefore,
  };
}
