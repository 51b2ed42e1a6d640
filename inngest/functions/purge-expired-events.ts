import { purgeExpiredEvents } from "../../server/services/event-feed";
import { inngest } from "../client";

/**
 * Daily at 03:27 UTC: deletes events older than the events feed's retention (30 days by default), with
 * their webhook deliveries and attempts.
 */
export const purgeExpiredEventsFunction = inngest.createFunction(
  { id: "purge-expired-events", name: "Purge events past their retention", triggers: [{ cron: "27 3 * * *" }] },
  async ({ step }) => {
    const deleted = await step.run("purge", () => purgeExpiredEvents());
    return { deleted };
  },
);
