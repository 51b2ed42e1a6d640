// Next.js's start-up hook (https://nextjs.org/docs/app/guides/instrumentation): where the app runs without our
// server (Vercel), it starts the same telemetry as `npm start` does (docs/architecture.md, "Observability"). Under
// `npm start` the server has already started it, and this call returns that state.

/**
 * Starts OpenTelemetry in the Node.js runtime when the environment asks for it (`OTEL_EXPORTER_OTLP_ENDPOINT`,
 * `METRICS_PORT`); nothing on the Edge runtime. Called once by Next.js before the first request.
 * Source: docs/architecture.md, "Observability".
 */
export async function register(): Promise<void> {
  if (process.env.NEXT_RUNTIME !== "nodejs") return;
  const { startTelemetry } = await import("./server/observability/telemetry");
  // Bundled code cannot require ioredis by path, and on Vercel the key-value store is Vercel KV over HTTP.
  await startTelemetry({ patchRedis: false });
}
