import { fanOutEvent } from "../../server/services/webhook-deliveries";
import { deliveryRequested, eventRecorded, inngest } from "../client";

/**
 * Fan-out (DESIGN.md §6): an outbox event becomes one `WebhookDelivery` per enabled endpoint subscribed to its name or
 * `*` (idempotent on `(endpointId, eventId)`, `Event.fannedOutAt` set), then one `crm/webhook.delivery.requested`
 * per delivery, with the delivery id as Inngest event id so a repeated fan-out requests nothing twice.
 * Test-key events get no deliveries (spec §5.6). Trigger: `crm/event.recorded` `{eventId, orgId}`.
 */
export const fanOutEventFunction = inngest.createFunction(
  { id: "webhook-fan-out", name: "Webhooks: fan an event out to endpoints", retries: 4, triggers: [eventRecorded] },
  async ({ event, step }) => {
    const deliveries = await step.run("create-deliveries", () => fanOutEvent(event.data.eventId));
    if (deliveries.length > 0) {
      await step.sendEvent(
        "request-deliveries",
        deliveries.map((delivery) => deliveryRequested.create(delivery, { id: delivery.deliveryId })),
      );
    }
    return { eventId: event.data.eventId, deliveries: deliveries.length };
  },
);
