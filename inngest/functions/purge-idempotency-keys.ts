import { purgeExpiredIdempotencyKeys } from "../../server/platform/idempotency";
import { inngest } from "../client";

/**
 * Daily at 03:17 UTC: deletes idempotency records past their 24 hours (docs/api-contract.md §8), whatever the request
 * traffic.
 */
export const purgeIdempotencyKeysFunction = inngest.createFunction(
  { id: "purge-idempotency-keys", name: "Purge expired idempotency keys", triggers: [{ cron: "17 3 * * *" }] },
  async ({ step }) => {
    const deleted = await step.run("purge", () => purgeExpiredIdempotencyKeys());
    return { deleted };
  },
);
