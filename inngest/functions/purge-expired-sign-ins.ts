import { purgeExpiredSignIns } from "../../server/identity/session";
import { inngest } from "../client";

/**
 * Daily at 03:37 UTC: deletes expired settings sessions and one-time sign-in values (`purgeExpiredSignIns`), so the
 * tables hold only what can still be used.
 */
export const purgeExpiredSignInsFunction = inngest.createFunction(
  {
    id: "purge-expired-sign-ins",
    name: "Purge expired sessions and sign-in challenges",
    triggers: [{ cron: "37 3 * * *" }],
  },
  async ({ step }) => step.run("purge", () => purgeExpiredSignIns()),
);
