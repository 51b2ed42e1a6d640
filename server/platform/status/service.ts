import { type Database, db } from "../../db/client";
import { migrationNames } from "../../db/migration-files";
import { prisma } from "../../db/transaction";
import { kv } from "../../kv";
import type { KvDriver } from "../../kv/store";
import { log } from "../../observability/logger";

/**
 * Connectivity of one dependency: `up` with its round-trip time in ms, or `down` with the reason, which names the
 * driver but no host (e.g. `redis: connection failed`). `driver`: postgres | pglite; vercel-kv | redis | memory.
 */
export interface ComponentStatus {
  status: "up" | "down";
  latencyMs: number;
  driver: Database["kind"] | KvDriver;
  error?: string;
}

const CHECK_TIMEOUT_MS = 2_000;

async function check(driver: ComponentStatus["driver"], probe: () => Promise<unknown>): Promise<ComponentStatus> {
  const started = performance.now();
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      probe(),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer within ${CHECK_TIMEOUT_MS} ms`)), CHECK_TIMEOUT_MS);
      }),
    ]);
    return { status: "up", latencyMs: Math.round(performance.now() - started), driver };
  } catch (error) {
    // The endpoint is public: hosts, ports and driver messages go to the server log, not the response.
    log().warn({ component: driver, err: error }, "status probe failed");
    const timedOut = error instanceof Error && error.message.startsWith("no answer within");
    return {
      status: "down",
      latencyMs: Math.round(performance.now() - started),
      driver,
      error: `${driver}: ${timedOut ? `no answer within ${CHECK_TIMEOUT_MS} ms` : "connection failed"}`,
    };
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Probes the database (`SELECT 1`) and the key-value store (`PING` on TCP Redis and Vercel KV; the memory driver is
 * always up) in parallel, each bounded by 2,000 ms (docs/api-contract.md §4.8). Reports the shared store itself: while
 * it is down the rate limiter counts in memory, but the cache is reported down (503). Never throws.
 */
export async function checkStatus(): Promise<{ database: ComponentStatus; cache: ComponentStatus }> {
  const database = db();
  const [dbStatus, cacheStatus] = await Promise.all([
    check(database.kind, () => prisma().$queryRawUnsafe("SELECT 1")),
    check(kv().driver, () => kv().ping()),
  ]);
  return { database: dbStatus, cache: cacheStatus };
}

/** What `GET /readyz` reports: ready or not, why not, and each check (docs/architecture.md, "Running in production"). */
export interface Readiness {
  ready: boolean;
  /** `ready`; `not_ready` when a check fails; `shutting_down` once the server began to stop. */
  status: "ready" | "not_ready" | "shutting_down";
  /** Why it is not ready, one clause per failed check (`database: connection failed; migrations: 1 pending`). */
  reason?: string;
  checks?: {
    database: ComponentStatus;
    cache: ComponentStatus;
    /** `up` when every migration folder of the build is recorded as applied; `pending` names the others. */
    migrations: { status: "up" | "down"; pending: string[]; error?: string };
  };
}

/** How long one readiness result is reused (ms): probes of every replica and load balancer cost one check a second. */
export const READINESS_TTL_MS = 1_000;

// Per process, not per bundle: the server marks shutdown from its own module graph.
const readiness = globalThis as unknown as {
  __crmShuttingDown?: boolean;
  __crmReadiness?: { at: number; result: Promise<Readiness> };
};

/**
 * Makes {@link checkReadiness} answer `shutting_down` from now on: the server calls it on SIGTERM or SIGINT, before it
 * stops accepting connections, so load balancers stop sending requests while those in flight finish.
 */
export function markShuttingDown(): void {
  readiness.__crmShuttingDown = true;
}

// The build's migrations do not change while it runs: read the folder once.
let buildMigrations: string[] | undefined;

async function checkMigrations(): Promise<NonNullable<Readiness["checks"]>["migrations"]> {
  try {
    buildMigrations ??= migrationNames();
  } catch (error) {
    console.error(JSON.stringify({ level: "error", component: "migrations", error: String(error) }));
    return { status: "down", pending: [], error: "migrations: this build's migrations folder is missing" };
  }
  try {
    const rows = await prisma().$queryRawUnsafe<Array<{ migration_name: string }>>(
      `SELECT migration_name FROM "_prisma_migrations" WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL`,
    );
    const applied = new Set(rows.map((row) => row.migration_name));
    const pending = buildMigrations.filter((name) => !applied.has(name));
    return { status: pending.length === 0 ? "up" : "down", pending };
  } catch (error) {
    // A database that never saw a migration has no _prisma_migrations table; details go to the server log only.
    console.error(JSON.stringify({ level: "warn", component: "migrations", error: String(error) }));
    return { status: "down", pending: buildMigrations, error: "migrations: none applied or unreadable" };
  }
}

async function runReadinessChecks(): Promise<Readiness> {
  const [status, migrations] = await Promise.all([checkStatus(), checkMigrations()]);
  const checks = { ...status, migrations };
  const reasons = [
    status.database.status === "down" ? status.database.error : undefined,
    status.cache.status === "down" ? status.cache.error : undefined,
    migrations.error ??
      (migrations.pending.length > 0
        ? `migrations: ${migrations.pending.length} pending (run npm run db:migrate)`
        : undefined),
  ].filter((reason): reason is string => Boolean(reason));
  if (reasons.length === 0) return { ready: true, status: "ready", checks };
  return { ready: false, status: "not_ready", reason: reasons.join("; "), checks };
}

/**
 * Readiness of this process to serve traffic (`GET /readyz`): the database answers `SELECT 1`, the key-value store
 * answers `PING` (each within 2,000 ms, see {@link checkStatus}) and every migration of this build is applied; never
 * once shutdown began ({@link markShuttingDown}). Concurrent callers share one check and a result is reused for
 * {@link READINESS_TTL_MS}, so the unauthenticated, unlimited probe cannot load the database. Never throws.
 */
export async function checkReadiness(now = Date.now()): Promise<Readiness> {
  if (readiness.__crmShuttingDown) {
    return { ready: false, status: "shutting_down", reason: "shutting down: finishing the requests in flight" };
  }
  const cached = readiness.__crmReadiness;
  if (cached && now - cached.at < READINESS_TTL_MS) return cached.result;
  const result = runReadinessChecks();
  readiness.__crmReadiness = { at: now, result };
  return result;
}
