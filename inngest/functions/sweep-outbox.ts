import { claimStuckDeliveries, claimUndispatchedEvents } from "../../server/services/webhook-deliveries";
import { deliveryRequested, eventRecorded, inngest } from "../client";

/**
 * Sweeper (DESIGN.md §6: nothing is lost while Inngest is unreachable), every minute: sends again the live outbox
 * events not fanned out a minute after they were recorded (their hand-over failed or was skipped), and requests
 * again deliveries left PENDING by a lost run (not started 30 min after creation, or idle for 3 h).
 */
export const sweepOutboxFunction = inngest.createFunction(
  { id: "webhook-sweep-outbox", name: "Webhooks: resend what was not handed over", triggers: [{ cron: "* * * * *" }] },
  async ({ step }) => {
    const events = await step.run("claim-undispatched-events", () => claimUndispatchedEvents());
    if (events.length > 0) {
      await step.sendEvent(
        "resend-events",
        events.map((event) => eventRecorded.create(event)),
      );
    }
    const deliveries = await step.run("claim-stuck-deliveries", () => claimStuckDeliveries());
    if (deliveries.length > 0) {
      await step.sendEvent(
        "request-stuck-deliveries",
        deliveries.map((delivery) => deliveryRequested.create(delivery)),
      );
    }
    return { events: events.length, deliveries: deliveries.length };
  },
);
