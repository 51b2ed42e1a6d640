import { mkdirSync } from "node:fs";
import path from "node:path";
import { PGlite } from "@electric-sql/pglite";
import { PrismaPg } from "@prisma/adapter-pg";
import { PrismaPGlite } from "pglite-prisma-adapter";
import { env } from "../env";
import { PrismaClient } from "./generated/client";
import { currentClient } from "./transaction";

/** A connected database: the Prisma client, which engine backs it, and how to release it. */
export interface Database {
  prisma: PrismaClient;
  /** `postgres` when `DATABASE_URL` is set, `pglite` for the embedded default (DESIGN.md §3). */
  kind: "postgres" | "pglite";
  /** The embedded engine, for the migration runner; undefined on PostgreSQL. */
  pglite?: PGlite;
  close(): Promise<void>;
}

/**
 * Opens a database: PostgreSQL through `@prisma/adapter-pg` when `url` is given, otherwise the embedded PGlite
 * database in `dataDir` (created if missing). Connection attempts give up after 5 s and queries after 15 s, so callers
 * never hang.
 */
export function openDatabase(options: { url?: string; dataDir: string }): Database {
  if (options.url) {
    // query_timeout bounds a query on a server that accepted the connection but stopped answering (no hanging request).
    const adapter = new PrismaPg({
      connectionString: options.url,
      connectionTimeoutMillis: 5_000,
      query_timeout: 15_000,
      max: 10,
    });
    const prisma = new PrismaClient({ adapter });
    return { prisma, kind: "postgres", close: () => prisma.$disconnect() };
  }
  const dir = path.resolve(options.dataDir, "pglite");
  mkdirSync(dir, { recursive: true });
  const pglite = new PGlite(dir);
  const prisma = new PrismaClient({ adapter: new PrismaPGlite(pglite) });
  return {
    prisma,
    kind: "pglite",
    pglite,
    close: async () => {
      await prisma.$disconnect();
      await pglite.close();
    },
  };
}

// One database per process, shared by Next's bundles and our scripts: route modules may be instantiated more than once.
const holder = globalThis as unknown as { __crmDatabase?: Database };

/** The process-wide database opened from the environment (`DATABASE_URL`, `DATA_DIR`). */
export function db(): Database {
  holder.__crmDatabase ??= openDatabase({ url: env().DATABASE_URL, dataDir: env().DATA_DIR });
  return holder.__crmDatabase;
}

/**
 * The Prisma client to query with: the enclosing transaction's inside `transaction()` (server/db/transaction.ts),
 * else the process-wide one (`db().prisma`).
 */
export function prisma(): PrismaClient {
  return currentClient();
}

/** Closes the process-wide database, if open. */
export async function closeDb(): Promise<void> {
  const current = holder.__crmDatabase;
  holder.__crmDatabase = undefined;
  await current?.close();
}
