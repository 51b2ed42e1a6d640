// HTTP client side of the benchmark: a keep-alive load loop and single timed requests, on plain node:http so the
// client costs as little CPU as possible (on 2 cores it competes with the server under test and PostgreSQL).
import { Agent, request as httpRequest } from "node:http";
import { performance } from "node:perf_hooks";

/** Outcome of one HTTP request: status, body text and wall-clock duration in milliseconds. */
export interface TimedResponse {
  status: number;
  body: string;
  ms: number;
}

/** Throughput and latency of one load run; latencies in milliseconds. */
export interface LoadResult {
  requests: number;
  /** Responses whose status was not 2xx (e.g. 401, 429, 500): counted in `requests`, reported separately. */
  non2xx: number;
  /** Requests that got no response at all (socket errors). */
  errors: number;
  durationMs: number;
  rps: number;
  p50: number;
  p99: number;
  mean: number;
  /** CPU the load generator itself used, in cores (1 = one core busy): on a small machine it is taken from the server. */
  clientCores: number;
  /** Requests/s of each merged run: a wide spread means the machine was busy with something else meanwhile. */
  sliceRps: number[];
}

/**
 * The value at quantile `q` (0–1) of `values`, nearest-rank method; NaN for an empty list.
 * Sorts a copy, so callers may pass live arrays.
 */
export function quantile(values: readonly number[], q: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[rank] as number;
}

/** Median of `values` (nearest-rank); NaN for an empty list. */
export function median(values: readonly number[]): number {
  return quantile(values, 0.5);
}

/**
 * Sends one request over `agent` and reads the whole body.
 * @param url absolute `http://` URL.
 * @throws Error on socket errors (connection refused, reset).
 */
export function send(
  agent: Agent,
  url: string,
  options: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<TimedResponse> {
  const target = new URL(url);
  const payload = options.body === undefined ? undefined : Buffer.from(options.body);
  const headers: Record<string, string | number> = { ...options.headers };
  if (payload) headers["content-length"] = payload.length;
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const req = httpRequest(
      {
        agent,
        host: target.hostname,
        port: target.port,
        path: target.pathname + target.search,
        method: options.method ?? "GET",
        headers,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("error", reject);
        res.on("end", () =>
          resolve({
            status: res.statusCode ?? 0,
            body: Buffer.concat(chunks).toString("utf8"),
            ms: performance.now() - started,
          }),
        );
      },
    );
    req.on("error", reject);
    req.end(payload);
  });
}

/** Raw outcome of one {@link runLoad}: every latency, so several runs can be merged before taking quantiles. */
export interface LoadSample {
  latencies: number[];
  non2xx: number;
  errors: number;
  durationMs: number;
  /** User + system CPU time this process spent, in ms. */
  clientCpuMs: number;
}

/**
 * Keeps `connections` keep-alive connections busy with `GET url` (or `request()`) for `durationMs`, one request in
 * flight per connection (closed loop, like autocannon's default).
 */
export async function runLoad(options: {
  url: string;
  headers?: Record<string, string>;
  /** Builds each request (method, headers, body); default `GET url` with `headers`. */
  request?: () => { method: string; headers: Record<string, string>; body?: string };
  connections: number;
  durationMs: number;
}): Promise<LoadSample> {
  // maxSockets = connections pins the connection count; keep-alive so we measure requests, not TCP handshakes.
  const agent = new Agent({ keepAlive: true, maxSockets: options.connections, maxFreeSockets: options.connections });
  const latencies: number[] = [];
  let non2xx = 0;
  let errors = 0;
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  const deadline = started + options.durationMs;

  const worker = async () => {
    while (performance.now() < deadline) {
      try {
        const response = await send(agent, options.url, options.request?.() ?? { headers: options.headers });
        latencies.push(response.ms);
        if (response.status < 200 || response.status >= 300) non2xx++;
      } catch {
        errors++;
        // A refused or reset connection fails instantly; pausing keeps a dead server from turning this into a spin.
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    }
  };
  await Promise.all(Array.from({ length: options.connections }, worker));
  const durationMs = performance.now() - started;
  const cpu = process.cpuUsage(cpuBefore);
  agent.destroy();
  return { latencies, non2xx, errors, durationMs, clientCpuMs: (cpu.user + cpu.system) / 1000 };
}

/** Merges load runs of the same target into requests/s (total requests over total time) and latency quantiles. */
export function summariseLoad(samples: readonly LoadSample[]): LoadResult {
  const latencies = samples.flatMap((sample) => sample.latencies);
  const total = (pick: (sample: LoadSample) => number) => samples.reduce((sum, sample) => sum + pick(sample), 0);
  const durationMs = total((sample) => sample.durationMs);
  const sorted = [...latencies].sort((a, b) => a - b);
  return {
    requests: latencies.length,
    non2xx: total((sample) => sample.non2xx),
    errors: total((sample) => sample.errors),
    durationMs,
    rps: latencies.length / (durationMs / 1000),
    p50: quantile(sorted, 0.5),
    p99: quantile(sorted, 0.99),
    mean: latencies.length ? latencies.reduce((sum, value) => sum + value, 0) / latencies.length : Number.NaN,
    clientCores: total((sample) => sample.clientCpuMs) / durationMs,
    sliceRps: samples.map((sample) => Math.round(sample.latencies.length / (sample.durationMs / 1000))),
  };
}
