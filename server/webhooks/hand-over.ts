// Hand-over of committed outbox events to Inngest (docs/architecture.md, "Webhooks and the outbox"), off the response
// path.
import { outsideTransaction, prisma } from "../db/transaction";
import { warnThrottled } from "../kv/warn";
import { workerMode } from "./worker";

const inFlight = new Set<Promise<void>>();

/**
 * Hands committed live events to Inngest in ONE `inngest.send` per 500 events (Inngest event `crm/event.recorded`,
 * id = the event id, so a repeated hand-over is dropped by Inngest), then stamps `Event.dispatchedAt` in ONE UPDATE.
 * Fire-and-forget: returns at once and never throws, so an API request neither waits for Inngest nor fails with it.
 * Nothing is sent when no worker is configured (`workerMode()` is `none`); a failed send (a dev server that is not
 * running) is logged at most once a minute. Either way the events keep `dispatchedAt` null and the sweeper hands them
 * over once a worker runs it.
 */
export function dispatchEvents(events: ReadonlyArray<{ id: string; orgId: string }>): void {
  if (events.length === 0 || workerMode() === "none") return;
  const sending: Promise<void> = sendEvents(events)
    .catch((error: unknown) => {
      warnThrottled("webhooks.hand-over", {
        message: "webhook events not handed to Inngest; the sweeper will hand them over once a worker runs",
        events: events.length,
        error: String(error),
      });
    })
    .finally(() => inFlight.delete(sending));
  inFlight.add(sending);
}

// Events per `inngest.send`: a 500-item bulk request is one send (~75 kB), well under Inngest's request size limit.
const SEND_BATCH = 500;

async function sendEvents(events: ReadonlyArray<{ id: string; orgId: string }>): Promise<void> {
  // Loaded on the first hand-over: a server without a worker never pays for the Inngest SDK at start-up.
  const { eventRecorded, inngest } = await import("../../inngest/client");
  for (let start = 0; start < events.length; start += SEND_BATCH) {
    const batch = events.slice(start, start + SEND_BATCH);
    await inngest.send(
      batch.map((event) => eventRecorded.create({ eventId: event.id, orgId: event.orgId }, { id: event.id })),
    );
  }
  const ids = events.map((event) => event.id);
  // After the request's transaction, possibly after the response was sent.
  await outsideTransaction(
    () => prisma().$executeRaw`
      UPDATE "Event" SET "dispatchedAt" = now() AT TIME ZONE 'UTC' WHERE "id" = ANY(${ids}::text[]) AND "dispatchedAt" IS NULL`,
  );
}

/** Resolves when every hand-over started so far has finished (for shutdown and tests). */
export async function dispatchesSettled(): Promise<void> {
  while (inFlight.size > 0) await Promise.allSettled([...inFlight]);
}
