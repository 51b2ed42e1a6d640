import { purgeExpiredEvents } from "../../server/platform/events-feed/service";
import { purgeWebhookHistory } from "../../server/webhooks/stats";
import { inngest } from "../client";

/**
 * Daily at 03:27 UTC: deletes events older than the events feed's retention (30 days by default), with
 * their webhook deliveries and attempts, and the webhook records of that age the operator views keep (filtered-out
 * counts, ended replays, resolved alerts).
 */
export const purgeExpiredEventsFunction = inngest.createFunction(
  { id: "purge-expired-events", name: "Purge events past their retention", triggers: [{ cron: "27 3 * * *" }] },
  async ({ step }) => {
    const deleted = await step.run("purge", () => purgeExpiredEvents());
    const webhooks = await step.run("purge-webhook-history", () => purgeWebhookHistory());
    return { deleted, webhooks };
  },
);
