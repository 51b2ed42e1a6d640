// Whether webhook deliveries are being made (docs/architecture.md, "Webhooks and the outbox"): events wait in the
// outbox until an Inngest worker (the dev server locally, Inngest Cloud in production) runs this app's functions. The
// sweeper stamps a heartbeat every minute it runs; the start-up output, the settings area and the delivery log read it.
import { prisma } from "../db/transaction";

/** How the app hands events to Inngest: Inngest Cloud keys, a local dev server (`INNGEST_DEV`), or not at all. */
export type WorkerMode = "cloud" | "dev" | "none";

/** The heartbeat's name in `WorkerHeartbeat`. */
const HEARTBEAT = "inngest";
/** A worker is connected when the sweeper (every minute) ran within this long (ms). */
export const WORKER_STALE_AFTER_MS = 3 * 60_000;
/** Oldest outbox event still handed over (ms): 72 hours, so turning a worker on after a long outage does not flood
 * receivers with stale events; older ones are never delivered. */
export const UNDISPATCHED_MAX_AGE_MS = 72 * 60 * 60 * 1000;
/** The one command that starts the Inngest dev server for this app (package.json `inngest`). */
export const DEV_SERVER_COMMAND = "npm run inngest";

/** What is known about webhook delivery right now. */
export interface WorkerStatus {
  mode: WorkerMode;
  /** Dev mode: where events are sent (`INNGEST_DEV` when it is a URL, else http://localhost:8288). */
  devServerUrl: string | null;
  /** The sweeper ran within {@link WORKER_STALE_AFTER_MS}. */
  connected: boolean;
  /** When the sweeper last ran; null when it never did. */
  lastSeenAt: Date | null;
  /** Live events recorded in the last 72 h and not yet handed to a worker (per organisation when asked for one). */
  waiting: number;
  /** One or two sentences for people: what happens to deliveries now and what to do about it. */
  message: string;
}

function truthy(value: string | undefined): boolean {
  const text = value?.trim().toLowerCase();
  return Boolean(text) && text !== "0" && text !== "false";
}

/** The mode the environment selects (read on every call, like the Inngest client). */
export function workerMode(): WorkerMode {
  if (process.env.INNGEST_EVENT_KEY?.trim()) return "cloud";
  return truthy(process.env.INNGEST_DEV) ? "dev" : "none";
}

function devServerUrl(): string {
  const dev = process.env.INNGEST_DEV?.trim() ?? "";
  return /^https?:\/\//.test(dev) ? dev.replace(/\/+$/, "") : "http://localhost:8288";
}

/** Records that a worker ran the sweeper now. @returns whether it had been disconnected before (a reconnection). */
export async function recordWorkerHeartbeat(now = new Date()): Promise<{ reconnected: boolean }> {
  const previous = await prisma().workerHeartbeat.findUnique({ where: { name: HEARTBEAT } });
  await prisma().workerHeartbeat.upsert({
    where: { name: HEARTBEAT },
    create: { name: HEARTBEAT, seenAt: now },
    update: { seenAt: now },
  });
  return { reconnected: !previous || now.getTime() - previous.seenAt.getTime() > WORKER_STALE_AFTER_MS };
}

function ago(date: Date, now: number): string {
  const seconds = Math.max(0, Math.round((now - date.getTime()) / 1000));
  return seconds < 120 ? `${seconds} s ago` : `${Math.round(seconds / 60)} min ago`;
}

/**
 * The webhook worker's status: the mode, whether a worker ran the sweeper in the last 3 minutes, and how many live
 * events wait to be handed over (those of `orgId`, or of every organisation), with a message saying what to do.
 */
export async function workerStatus(orgId?: string): Promise<WorkerStatus> {
  const now = Date.now();
  const [heartbeat, waiting] = await Promise.all([
    prisma().workerHeartbeat.findUnique({ where: { name: HEARTBEAT } }),
    prisma().event.count({
      where: {
        ...(orgId ? { orgId } : {}),
        fannedOutAt: null,
        isTest: false,
        createdAt: { gt: new Date(now - UNDISPATCHED_MAX_AGE_MS) },
      },
    }),
  ]);
  const mode = workerMode();
  const lastSeenAt = heartbeat?.seenAt ?? null;
  const connected = lastSeenAt !== null && now - lastSeenAt.getTime() <= WORKER_STALE_AFTER_MS;
  const waitingText = `${waiting} event${waiting === 1 ? "" : "s"} waiting`;
  const url = mode === "dev" ? devServerUrl() : null;
  let message: string;
  if (connected) {
    const by = mode === "cloud" ? "Inngest Cloud" : mode === "dev" ? `the Inngest dev server at ${url}` : "Inngest";
    message = `Webhooks are delivered by ${by} (last seen ${ago(lastSeenAt as Date, now)}); ${waitingText} to be handed over.`;
  } else if (mode === "none") {
    message = `No webhook worker: nothing is delivered and ${waitingText}. Locally, run \`${DEV_SERVER_COMMAND}\` and start the server with INNGEST_DEV=1; in production set INNGEST_EVENT_KEY and INNGEST_SIGNING_KEY (Inngest Cloud).`;
  } else if (mode === "dev") {
    message = `No Inngest dev server has run this app's functions${lastSeenAt ? ` since ${ago(lastSeenAt, now)}` : ""}: nothing is delivered and ${waitingText}. Start it with \`${DEV_SERVER_COMMAND}\` (events go to ${url}).`;
  } else {
    message = `Inngest Cloud keys are set but no worker has run this app's functions${lastSeenAt ? ` since ${ago(lastSeenAt, now)}` : ""}: nothing is delivered and ${waitingText}. Sync the app's /api/inngest URL in Inngest Cloud.`;
  }
  return { mode, devServerUrl: url, connected, lastSeenAt, waiting, message };
}

/**
 * The outbox as a whole, for the metrics: live events recorded in the last 72 h and not yet handed to a worker (as
 * {@link workerStatus} counts them, every organisation) and the age of the oldest of them in seconds (0 when none
 * waits). One statement over the `(fannedOutAt, createdAt)` index; `observeOutbox` reads it at most every 15 s.
 * Source: docs/architecture.md, "Observability".
 */
export async function outboxBacklog(): Promise<{ waiting: number; oldestAgeSeconds: number }> {
  const [row] = await prisma().$queryRaw<Array<{ waiting: number; oldest: number | null }>>`
    SELECT count(*)::int AS "waiting",
           extract(epoch FROM (now() AT TIME ZONE 'UTC') - min("createdAt"))::float8 AS "oldest"
    FROM "Event"
    WHERE "fannedOutAt" IS NULL AND "isTest" = false
      AND "createdAt" > (now() AT TIME ZONE 'UTC') - ${UNDISPATCHED_MAX_AGE_MS}::float8 * interval '1 millisecond'`;
  return { waiting: row?.waiting ?? 0, oldestAgeSeconds: Math.max(0, row?.oldest ?? 0) };
}

/** An event waiting to be handed to the worker (see {@link waitingEvents}). */
export interface WaitingEvent {
  eventId: string;
  event: string;
  createdAt: Date;
}

/**
 * The organisation's events that an endpoint subscribed to `events` (names, or `["*"]`) would receive but that no
 * worker has taken yet (live, recorded in the last 72 h, not fanned out), newest first: what its delivery log shows
 * as waiting.
 * @param limit how many to list, 1–100.
 * @returns `{ count, data }`: the number waiting and the newest `limit` of them.
 */
export async function waitingEvents(
  orgId: string,
  events: readonly string[],
  limit = 10,
): Promise<{ count: number; data: WaitingEvent[] }> {
  const where = {
    orgId,
    fannedOutAt: null,
    isTest: false,
    createdAt: { gt: new Date(Date.now() - UNDISPATCHED_MAX_AGE_MS) },
    ...(events.includes("*") ? {} : { name: { in: [...events] } }),
  };
  const [count, rows] = await Promise.all([
    prisma().event.count({ where }),
    prisma().event.findMany({
      where,
      orderBy: [{ createdAt: "desc" }, { id: "desc" }],
      take: Math.min(Math.max(limit, 1), 100),
      select: { id: true, name: true, createdAt: true },
    }),
  ]);
  return { count, data: rows.map((row) => ({ eventId: row.id, event: row.name, createdAt: row.createdAt })) };
}
