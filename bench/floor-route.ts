// The Next.js floor of the throughput benchmark (docs/architecture.md, "Memory and speed"): a plain App Router route
// handler doing the database work of `GET /api/v1/accounts/{id}` with `pg` (the key looked up by its SHA-256, then the
// row), the same two queries as bench/bare-server.ts. bench/run.ts writes it into app/ for one build into .next-bench
// and removes it afterwards, so the product never contains it; `npm start` from that build then serves both it and
// /api/v1 in one process.
import { existsSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";

/** Where the floor route is served: `GET /bench-floor/accounts/{id}`. */
export const FLOOR_PATH = "/bench-floor/accounts";

const SOURCE = `// Written by bench/floor-route.ts for one benchmark build; not part of the product.
import { createHash, randomBytes } from "node:crypto";
import pg from "pg";

pg.types.setTypeParser(pg.types.builtins.TIMESTAMP, (value) => new Date(\`\${value.replace(" ", "T")}Z\`));
const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10 });

export const dynamic = "force-dynamic";

function reply(status: number, body: Record<string, unknown>): Response {
  const requestId = \`req_\${randomBytes(12).toString("hex")}\`;
  return Response.json(
    { success: status < 400, ...body, requestId, timestamp: new Date().toISOString() },
    { status, headers: { "X-Request-Id": requestId, "Cache-Control": "no-store" } },
  );
}

export async function GET(request: Request, context: { params: Promise<{ id: string }> }): Promise<Response> {
  const { id } = await context.params;
  const raw = /^Bearer\\s+(\\S+)\\s*$/i.exec(request.headers.get("authorization") ?? "")?.[1];
  if (!raw) return reply(401, { error: { code: "unauthorized" } });
  const hash = createHash("sha256").update(raw).digest("hex");
  const key = await pool.query(
    'SELECT "id", "orgId", "scopes", "isTest", "revokedAt" FROM "ApiKey" WHERE "keyHash" = $1',
    [hash],
  );
  const principal = key.rows[0];
  if (!principal || principal.revokedAt) return reply(401, { error: { code: "unauthorized" } });
  const found = await pool.query(
    'SELECT "id", "name", "lifecycleStatus", "industry", "employeeCount", "domain", "externalId", "createdAt", "updatedAt" FROM "Account" WHERE "id" = $1 AND "orgId" = $2 LIMIT 1',
    [id, principal.orgId],
  );
  const row = found.rows[0];
  if (!row) return reply(404, { error: { code: "not_found" } });
  return reply(200, { data: { ...row, createdAt: row.createdAt.toISOString(), updatedAt: row.updatedAt.toISOString() } });
}
`;

/** Writes the floor route into `<root>/app/bench-floor/accounts/[id]/route.ts`. @returns its folder, to remove. */
export function installFloorRoute(root: string): string {
  const folder = path.join(root, "app", "bench-floor");
  const dir = path.join(folder, "accounts", "[id]");
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, "route.ts"), SOURCE);
  return folder;
}

/** Removes the floor route's folder (idempotent). */
export function removeFloorRoute(folder: string): void {
  if (existsSync(folder)) rmSync(folder, { recursive: true, force: true });
}
