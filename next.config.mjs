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
  ],
  // The readiness probe compares the build's migration folders with the database's; serverless bundles need them.
  outputFileTracingIncludes: { "/readyz": ["./prisma/migrations/**/*"] },
  poweredByHeader: false,
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
    ];
  },
};

export default nextConfig;
