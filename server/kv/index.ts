import { Redis } from "ioredis";
import { env } from "../env";

/**
 * The key-value store behind rate-limit windows (DESIGN.md §4). `driver` tells which backend answers:
 * `redis` (TCP, `REDIS_URL`) or `memory` (one process; the embedded default).
 */
export interface KeyValueStore {
  driver: "redis" | "memory";
  /** Resolves when the store answers; rejects with the driver's error otherwise. */
  ping(): Promise<void>;
  close(): Promise<void>;
}

function redisStore(url: string): KeyValueStore {
  // Fail fast instead of queueing commands while disconnected: callers need an answer, not a hang.
  const client = new Redis(url, {
    lazyConnect: true,
    enableOfflineQueue: true,
    maxRetriesPerRequest: 1,
    connectTimeout: 2_000,
  });
  client.on("error", () => {
    // Connection errors surface through the rejected command; the listener keeps them from crashing the process.
  });
  return {
    driver: "redis",
    async ping() {
      if (client.status === "wait" || client.status === "end") await client.connect().catch(() => undefined);
      await client.ping();
    },
    async close() {
      client.disconnect();
    },
  };
}

function memoryStore(): KeyValueStore {
  return { driver: "memory", ping: async () => undefined, close: async () => undefined };
}

const holder = globalThis as unknown as { __crmKv?: KeyValueStore };

/** The process-wide store chosen from the environment: Redis when `REDIS_URL` is set, in-memory otherwise. */
export function kv(): KeyValueStore {
  holder.__crmKv ??= env().REDIS_URL ? redisStore(env().REDIS_URL as string) : memoryStore();
  return holder.__crmKv;
}

/** Closes the process-wide store, if open. */
export async function closeKv(): Promise<void> {
  const current = holder.__crmKv;
  holder.__crmKv = undefined;
  await current?.close();
}
