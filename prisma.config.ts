import { defineConfig } from "prisma/config";

// Only `prisma generate`/`validate` run on our machines (docs/architecture.md, "Data and migrations"); the URL matters
// where `prisma migrate deploy` can run.
export default defineConfig({
  schema: "prisma/schema.prisma",
  migrations: { path: "prisma/migrations" },
  datasource: { url: process.env.DATABASE_URL ?? "postgresql://localhost:5432/postgres" },
});
