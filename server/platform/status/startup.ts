import type { Database } from "../../db/client";
import type { DemoCredentials } from "../../demo/demo";
import { env } from "../../env";
import { workerStatus } from "../../webhooks/worker";

/**
 * The lines `npm start` prints once it listens (docs/architecture.md, "Running in production"): the database (and, for
 * the embedded one, the URL other processes reach it at), the cache, the base, docs, settings, OpenAPI and MCP URLs, whether
 * webhooks are delivered (a worker connected, events waiting, the command that starts one), and the demo key and login
 * when the demo organisation exists, with a request and the command that connects Claude Code to it.
 */
export async function startupBanner(options: {
  database: Database;
  applied: string[];
  demo: DemoCredentials | null;
  dev: boolean;
}): Promise<string> {
  const config = env();
  const base = config.PUBLIC_URL?.replace(/\/+$/, "") ?? `http://localhost:${config.PORT}`;
  const { database, applied, demo } = options;
  const migrated = applied.length ? ` — applied ${applied.length} migration(s)` : "";
  const lines = [
    "",
    `MSP CRM public API${options.dev ? " (development)" : ""}`,
    database.kind === "pglite"
      ? `  Database:   embedded PGlite in ${config.DATA_DIR}/pglite, served at ${database.url}${migrated}`
      : `  Database:   PostgreSQL (DATABASE_URL)${migrated}`,
    `  Cache:      ${config.KV_REST_API_URL && config.KV_REST_API_TOKEN ? "Vercel KV" : config.REDIS_URL ? "Redis (REDIS_URL)" : "in-memory"}`,
    `  Base URL:   ${base}/api/v1`,
    `  Docs:       ${base}/docs`,
    `  Settings:   ${base}/settings   (API keys, webhooks, usage, team; sign in at ${base}/signin)`,
    `  OpenAPI:    ${base}/api/v1/openapi.json`,
    `  MCP:        ${base}/mcp   (AI agents: the same operations as tools, with an API key)`,
    `  Webhooks:   ${(await workerStatus()).message}`,
  ];
  if (demo) {
    lines.push(
      `  Demo key:   ${demo.apiKey}   (organisation "demo", test key, all scopes)`,
      `  Demo login: ${demo.email} / ${demo.password}   (owner of "demo")`,
      "",
      `  Try:  curl -s -H "Authorization: Bearer ${demo.apiKey}" ${base}/api/v1/accounts`,
      `  Agent: claude mcp add --transport http crm ${base}/mcp --header "Authorization: Bearer ${demo.apiKey}"`,
    );
  }
  return `${lines.join("\n")}\n`;
}
