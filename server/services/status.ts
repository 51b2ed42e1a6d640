import { type Database, db } from "../db/client";
import { prisma } from "../db/transaction";
import { kv } from "../kv";
import type { KvDriver } from "../kv/store";
import { log } from "../observability/logger";

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
 * always up) in parallel, each bounded by 2,000 ms (spec §4.8). Reports the shared store itself: while it is down the
 * rate limiter counts in memory, but the cache is reported down (503). Never throws.
 */
export async function checkStatus(): Promise<{ database: ComponentStatus; cache: ComponentStatus }> {
  const database = db();
  const [dbStatus, cacheStatus] = await Promise.all([
    check(database.kind, () => prisma().$queryRawUnsafe("SELECT 1")),
    check(kv().driver, () => kv().ping()),
  ]);
  return { database: dbStatus, cache: cacheStatus };
}
