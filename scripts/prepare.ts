// Start-up preparation for `npm start` / `npm run dev` (DESIGN.md §8): validate the environment, apply migrations,
// seed the demo organisation into an empty database, and print where everything is. Runs before `next start` and
// releases the embedded database so the server process can open it.
import { closeDb, db } from "../server/db/client";
import { migrateProcessDatabase } from "../server/db/ready";
import { env } from "../server/env";
import { ensureDemo } from "../server/services/demo";

async function main(): Promise<void> {
  const config = env();
  const database = db();
  const applied = await migrateProcessDatabase();
  const demo = await ensureDemo(config.DATA_DIR);
  await closeDb();

  const base = config.PUBLIC_BASE_URL ?? `http://localhost:${config.PORT}`;
  const lines = [
    "",
    "MSP CRM public API",
    `  Database:   ${database.kind === "pglite" ? `embedded PGlite in ${config.DATA_DIR}/pglite` : "PostgreSQL (DATABASE_URL)"}${applied.length ? ` — applied ${applied.length} migration(s)` : ""}`,
    `  Cache:      ${config.REDIS_URL ? "Redis (REDIS_URL)" : config.KV_REST_API_URL ? "Vercel KV" : "in-memory"}`,
    `  Base URL:   ${base}/api/v1`,
    `  Docs:       ${base}/docs`,
    `  Settings:   ${base}/settings   (API keys, webhooks, usage; sign in at ${base}/signin)`,
    `  OpenAPI:    ${base}/api/v1/openapi.json`,
  ];
  if (demo) {
    lines.push(
      `  Demo key:   ${demo.apiKey}   (organisation "demo", test key, all scopes)`,
      `  Demo login: ${demo.email} / ${demo.password}`,
      "",
      `  Try:  curl -s -H "Authorization: Bearer ${demo.apiKey}" ${base}/api/v1/accounts`,
    );
  }
  console.log(`${lines.join("\n")}\n`);
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
