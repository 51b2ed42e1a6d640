// The in-process reference of the throughput benchmark: the REST facade's pipeline behind the node:http listener
// (server/http/node.ts), without Next.js. Started by bench/run.ts as a child process: env DATABASE_URL, REDIS_URL,
// PORT, and BENCH_DISABLE_LAYERS (comma-separated: rate-limit, audit), which this bench file turns into pipeline
// options; product code reads no benchmark setting. Telemetry starts as `npm start` starts it: only when the
// environment asks (OTEL_EXPORTER_OTLP_ENDPOINT, METRICS_PORT), before the pipeline is loaded. Listens on 127.0.0.1.
import { startTelemetry } from "../server/observability/telemetry";

await startTelemetry();
const { rateLimit } = await import("../server/http/rate-limit");
const { startApi } = await import("../test/helpers/http-server");

const off = new Set((process.env.BENCH_DISABLE_LAYERS ?? "").split(",").filter(Boolean));
const server = await startApi(Number(process.env.PORT ?? 0), {
  without: off.has("rate-limit") ? [rateLimit] : [],
  audit: !off.has("audit"),
});
for (const signal of ["SIGTERM", "SIGINT"] as const) {
  process.on(signal, () => {
    void server.close();
    process.exit(0);
  });
}
