// The baseline of the throughput benchmark: `GET /api/v1/accounts/{id}` on bare node:http + pg, doing the same database
// work as the real stack (API key by SHA-256 hash, then one account by id and orgId) and nothing else, so the ratio
// measures what Next.js, tRPC, trpc-to-openapi, zod and Prisma cost on top of the unavoidable I/O.
// Started by bench/run.ts as a child process: env DATABASE_URL, PORT; listens on 127.0.0.1.
import { createHash, randomBytes } from "node:crypto";
import { createServer, type ServerResponse } from "node:http";
import pg from "pg";

// Prisma's DateTime columns are `timestamp(3)` without zone holding UTC; parse them as UTC, as Prisma does.
pg.types.setTypeParser(pg.types.builtins.TIMESTAMP, (value) => new Date(`${value.replace(" ", "T")}Z`));

// Same pool size as the Prisma adapter in server/db/client.ts, so neither side gets more database concurrency.
const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10 });
const ACCOUNT_PATH = /^\/api\/v1\/accounts\/([A-Za-z0-9_-]{1,64})$/;
const BEARER = /^Bearer\s+(\S+)\s*$/i;

interface AccountRow {
  id: string;
  name: string;
  lifecycleStatus: string;
  industry: string | null;
  employeeCount: number | null;
  domain: string | null;
  externalId: string | null;
  createdAt: Date;
  updatedAt: Date;
}

// The same envelope fields as the facade (request id, timestamp), so both sides serialise a comparable body.
function reply(res: ServerResponse, status: number, body: Record<string, unknown>): void {
  const requestId = `req_${randomBytes(12).toString("hex")}`;
  const text = JSON.stringify({ success: status < 400, ...body, requestId, timestamp: new Date().toISOString() });
  res.writeHead(status, {
    "Content-Type": "application/json; charset=utf-8",
    "Content-Length": Buffer.byteLength(text),
    "X-Request-Id": requestId,
    "Cache-Control": "no-store",
  });
  res.end(text);
}

async function getAccount(authorization: string | undefined, id: string, res: ServerResponse): Promise<void> {
  const raw = BEARER.exec(authorization ?? "")?.[1];
  if (!raw) return reply(res, 401, { error: { code: "unauthorized" } });
  const hash = createHash("sha256").update(raw).digest("hex");
  const key = await pool.query<{ orgId: string; revokedAt: Date | null }>(
    `SELECT "id", "orgId", "scopes", "isTest", "revokedAt" FROM "ApiKey" WHERE "keyHash" = $1`,
    [hash],
  );
  const principal = key.rows[0];
  if (!principal || principal.revokedAt) return reply(res, 401, { error: { code: "unauthorized" } });
  const found = await pool.query<AccountRow>(
    `SELECT "id", "name", "lifecycleStatus", "industry", "employeeCount", "domain", "externalId", "createdAt", "updatedAt"
     FROM "Account" WHERE "id" = $1 AND "orgId" = $2 LIMIT 1`,
    [id, principal.orgId],
  );
  const row = found.rows[0];
  if (!row) return reply(res, 404, { error: { code: "not_found" } });
  reply(res, 200, { data: { ...row, createdAt: row.createdAt.toISOString(), updatedAt: row.updatedAt.toISOString() } });
}

const server = createServer((req, res) => {
  const path = (req.url ?? "/").split("?")[0] ?? "/";
  const work =
    path === "/api/v1/status"
      ? pool.query("SELECT 1").then(() => reply(res, 200, { data: { status: "ok" } }))
      : req.method === "GET" && ACCOUNT_PATH.test(path)
        ? getAccount(req.headers.authorization, ACCOUNT_PATH.exec(path)?.[1] as string, res)
        : Promise.resolve(reply(res, 404, { error: { code: "not_found" } }));
  work.catch((error: unknown) => {
    console.error(error);
    if (!res.headersSent) reply(res, 500, { error: { code: "internal_error" } });
  });
});

server.listen(Number(process.env.PORT ?? 0), "127.0.0.1");
for (const signal of ["SIGTERM", "SIGINT"] as const) {
  process.on(signal, () => {
    server.close();
    void pool.end().finally(() => process.exit(0));
  });
}
