import { fanOutEvents } from "../../server/webhooks/deliveries";
import { deliveryRequested, eventRecorded, inngest } from "../client";

/** Events one fan-out run takes at once: a backlog of 10,000 events is 100 runs (docs/architecture.md, "Webhooks and the outbox"). */
export const FAN_OUT_BATCH = 100;

/**
 * Fan-out (docs/architecture.md, "Webhooks and the outbox"): outbox events become one `WebhookDelivery` per enabled
 * endpoint subscribed to their name or `*` (idempotent on `(endpointId, eventId)`, `Event.fannedOutAt` set), then one
 * `crm/webhook.delivery.requested` per delivery, with the delivery id as Inngest event id so a repeated fan-out
 * requests nothing twice. Inngest batches up to {@link FAN_OUT_BATCH} events (or what arrived within 1 s) into one run,
 * handled with three SQL statements. Test-key events get no deliveries (docs/api-contract.md §5.6). Trigger:
 * `crm/event.recorded` `{eventId, orgId}`.
 */
export const fanOutEventFunction = inngest.createFunction(
  {
    id: "webhook-fan-out",
    name: "Webhooks: fan events out to endpoints",
    retries: 4,
    batchEvents: { maxSize: FAN_OUT_BATCH, timeout: "1s" },
    triggers: [eventRecorded],
  },
  async ({ events, step }) => {
    const ids = events.map((event) => event.data.eventId);
    const deliveries = await step.run("create-deliveries", () => fanOutEvents(ids));
    if (deliveries.length > 0) {
      await step.sendEvent(
        "request-deliveries",
        deliveries.map((delivery) => deliveryRequested.create(delivery, { id: delivery.deliveryId })),
      );
    }
    return { events: ids.length, deliveries: deliveries.length };
  },
);
