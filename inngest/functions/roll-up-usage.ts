import { rollUpUsage } from "../../server/platform/request-log/usage-rollup";
import { inngest } from "../client";

/**
 * Usage roll-up, every minute: rolls up the 30-minute slots that closed and whose audit rows changed since they were
 * last rolled up, late rows included (docs/architecture.md, "Usage: the roll-up, the chart and the export"). Returns
 * how many slots it rolled up.
 */
export const rollUpUsageFunction = inngest.createFunction(
  {
    id: "usage-roll-up",
    name: "Usage: roll up closed slots",
    // One run at a time; a second one would only skip the slots the first holds.
    concurrency: { limit: 1 },
    triggers: [{ cron: "* * * * *" }],
  },
  async ({ step }) => step.run("roll-up", () => rollUpUsage()),
);
