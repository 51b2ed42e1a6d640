import { type ReindexStep, reindexSearchStep } from "../../server/records/search/reindex";
import { inngest, searchReindexRequested } from "../client";

/** Steps one run takes at most: 200 windows of 5,000 records; the next run (a minute later at most) continues. */
export const REINDEX_MAX_STEPS = 200;

/**
 * Search re-index (docs/architecture.md, "Search"): recomputes the search entries of the records holding a value of
 * each custom field marked in `SearchReindex` (searchable set or cleared, archived), one window of 5,000 records a
 * step, until none waits. Triggered by `crm/search.reindex.requested` after such a change commits, and every minute
 * (a lost send, a run cut short); one run at a time. Returns `{ steps, records }`: windows read and entries written.
 */
export const reindexSearchFunction = inngest.createFunction(
  {
    id: "search-reindex",
    name: "Search: re-index the values of custom fields whose searchable flag changed",
    concurrency: { limit: 1 },
    triggers: [searchReindexRequested, { cron: "* * * * *" }],
  },
  async ({ step }) => {
    let records = 0;
    for (let index = 0; index < REINDEX_MAX_STEPS; index++) {
      const done = (await step.run(`reindex-${index}`, () => reindexSearchStep())) as ReindexStep;
      if (done.idle) return { steps: index, records };
      records += done.records;
    }
    return { steps: REINDEX_MAX_STEPS, records };
  },
);
