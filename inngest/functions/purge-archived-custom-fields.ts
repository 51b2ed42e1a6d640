import { purgeArchivedCustomFields } from "../../server/records/custom-fields/service";
import { inngest } from "../client";

/**
 * Daily at 03:47 UTC: purges the values of custom fields archived more than 30 days ago and deletes their definitions,
 * which frees their keys (docs/architecture.md, "Custom fields"). Returns `{ fields, records }`: fields purged and
 * records that lost a value; at most 100 fields a run, the next run takes the rest.
 */
export const purgeArchivedCustomFieldsFunction = inngest.createFunction(
  {
    id: "purge-archived-custom-fields",
    name: "Purge the values of custom fields archived 30 days ago",
    // One run at a time: two would update the same records.
    concurrency: { limit: 1 },
    triggers: [{ cron: "47 3 * * *" }],
  },
  async ({ step }) => step.run("purge", () => purgeArchivedCustomFields()),
);
