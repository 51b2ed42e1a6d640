import { refreshChangedHealthScores } from "../../server/records/health/refresh";
import { inngest } from "../client";

/**
 * Health refresh (scores are stored by writes and this function, never by a read), every minute: scores
 * again the accounts whose inputs changed in the outbox since their score was computed, and those whose score is
 * more than an hour old (docs/architecture.md, "Health scores"). Returns how many accounts it scored, by reason.
 */
export const refreshHealthScoresFunction = inngest.createFunction(
  {
    id: "health-refresh",
    name: "Health scores: refresh changed and stale scores",
    // One run at a time: a slow run is not overtaken by the next minute's.
    concurrency: { limit: 1 },
    triggers: [{ cron: "* * * * *" }],
  },
  async ({ step }) => step.run("refresh", () => refreshChangedHealthScores()),
);
