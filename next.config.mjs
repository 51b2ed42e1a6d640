/** @type {import('next').NextConfig} */
const nextConfig = {
  // `npm run bench` builds into its own directory (with its floor route added for the run), so the app's .next stays
  // as `npm run build` left it.
  distDir: process.env.NEXT_DIST_DIR || ".next",
  // PGlite loads its WebAssembly and data files from its own package directory at run time.
  serverExternalPackages: [
    "@electric-sql/pglite",
    "@electric-sql/pglite-socket",
    "@prisma/adapter-pg",
    "pg",
    "ioredis",
    // One OpenTelemetry API for the server and the bundles (spans join), and the SDK loaded from node_modules as
    // the self-hosted server loads it (instrumentation.ts).
    "@opentelemetry/api",
    "@opentelemetry/sdk-node",
    "@opentelemetry/sdk-metrics",
    "@opentelemetry/exporter-prometheus",
    "@opentelemetry/exporter-metrics-otlp-grpc",
    "@opentelemetry/exporter-metrics-otlp-http",
    "@opentelemetry/exporter-metrics-otlp-proto",
    "@opentelemetry/instrumentation-ioredis",
    "@prisma/instrumentation",
  ],
  // The readiness probe compares the build's migration folders with the database's; serverless bundles need them.
  outputFileTracingIncludes: { "/readyz": ["./prisma/migrations/**/*"] },
  poweredByHeader: false,
  // forbidden() answers 403 with app/forbidden.tsx (a removed member, a role that may not see a page).
  experimental: { authInterrupts: true },
  typescript: { ignoreBuildErrors: false },
  // The signed-in pages must not be framed (click-jacking) nor leak their URLs to other sites.
  async headers() {
    const pageHeaders = [
      { key: "X-Frame-Options", value: "DENY" },
      { key: "Content-Security-Policy", value: "frame-ancestors 'none'" },
      { key: "Referrer-Policy", value: "same-origin" },
      { key: "X-Content-Type-Options", value: "nosniff" },
    ];
    return [
      { source: "/settings/:path*", headers: pageHeaders },
      { source: "/settings", headers: pageHeaders },
      { source: "/signin", headers: pageHeaders },
      { source: "/invite/:path*", headers: pageHeaders },
      { source: "/reset-password", headers: pageHeaders },
    ];
  },
};

export default nextConfig;
