/** @type {import('next').NextConfig} */
const nextConfig = {
  // PGlite loads its WebAssembly and data files from its own package directory at run time.
  serverExternalPackages: ["@electric-sql/pglite", "pglite-prisma-adapter", "@prisma/adapter-pg", "pg", "ioredis"],
  poweredByHeader: false,
  typescript: { ignoreBuildErrors: false },
};

export default nextConfig;
