import { eventType, Inngest, staticSchema } from "inngest";

/**
 * The Inngest client of the service (DESIGN.md §6). Configured from the environment, read by the SDK:
 * - production (Inngest Cloud): `INNGEST_EVENT_KEY` (send events) and `INNGEST_SIGNING_KEY` (verify calls to
 *   `/api/inngest`);
 * - development: `INNGEST_DEV=1` (Dev Server on http://localhost:8288) or `INNGEST_DEV=<url of a Dev Server>`.
 * With neither, events are not sent at all (see `workerMode` in server/webhooks/worker.ts); the outbox keeps them.
 */
// aiMetadata off: no AI steps here, and the SDK then leaves any global OpenTelemetry provider alone.
export const inngest = new Inngest({ id: "msp-crm", aiMetadata: false });

/**
 * An outbox row (`Event`) is ready for fan-out. Sent after the commit that recorded it, and again by the sweeper
 * while it has not been fanned out. `eventId` is `evt_…`.
 */
export const eventRecorded = eventType("crm/event.recorded", {
  schema: staticSchema<{ eventId: string; orgId: string }>(),
});

/** One delivery (`WebhookDelivery`, `whd_…`) of an event to one endpoint should be attempted. */
export const deliveryRequested = eventType("crm/webhook.delivery.requested", {
  schema: staticSchema<{ deliveryId: string; endpointId: string; orgId: string }>(),
});
