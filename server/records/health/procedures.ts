import { apiProcedure, router } from "../../trpc";
import {
  HealthGetSchema,
  HealthListQuerySchema,
  HealthScoreListSchema,
  HealthScoreSchema,
  SignalCreatedSchema,
  SignalCreateSchema,
} from "./schema";
import { createHealthSignal, getHealthScore, listHealthScores } from "./service";

const tags = ["Health scores"];

const MODEL = `Churn risk 0 (healthy) to 100 (about to churn) = the rounded sum of five weighted signals, each a risk value 0–100: devices 25 % (100 × (0.4 × offline share + 0.3 × end-of-life share + 0.3 × not-patch-compliant share); 0 without devices), engagement 25 % (0 up to 10 days since the last touchpoint, +1.25 per day after, 100 from 90 days; counted from the account's creation when no touchpoint was logged), pipeline 20 % (min(100, 25 per open RENEWAL deal + 50 per deal CLOSED_LOST in the last 90 days)), service 15 % (min(100, 20 per overdue task: dueAt past, status not DONE/CANCELLED)), external 15 % (100 × (1 − Π(1 − score/100)) over unexpired pushed signals). Risk levels: LOW < 25 ≤ MEDIUM < 50 ≤ HIGH < 75 ≤ CRITICAL. An account with no data scores 0 when created and 25 after 90 days without a touchpoint.`;

/**
 * Health-score endpoints (docs/api-contract.md §2.10, §4.7). Errors: 401, 403, 404, 400, 422 as documented per
 * operation.
 */
export const healthRouter = router({
  /**
   * `GET /health-scores` (health:read): the organisation's accounts with their stored score and breakdown, default
   * `score:desc`; filters `riskLevel`, `lifecycle`; `limit`/`cursor` pages (cursor = accountId); writes nothing.
   */
  list: apiProcedure("health:read")
    .meta({
      openapi: {
        method: "GET",
        path: "/health-scores",
        tags,
        summary: "List accounts with their churn risk",
        description: `${MODEL} Lists the stored scores (one indexed query a page; nothing is computed or written by this read), default score:desc (riskiest first; sort fields score, accountName; ties by accountId in the direction of the first field), paged with limit/cursor like every list: nextCursor is the accountId of the last item. updatedAfter does not apply. Staleness: a score is stored when its account is created, when a signal is pushed for it, within about a minute of a change to its inputs (devices, deals, touchpoints, the account) while a webhook worker (Inngest) runs, and at least hourly while one runs; each item's computedAt says when. Without a worker, scores change only on account creation and signal pushes. GET /health-scores/{accountId} always computes the score at request time.`,
      },
      envelope: "list",
    })
    .input(HealthListQuerySchema)
    .output(HealthScoreListSchema)
    .query(({ ctx, input }) => listHealthScores(ctx.principal.orgId, input)),

  /** `GET /health-scores/{accountId}` (health:read): score, breakdown, active external signals, 90-day history. */
  get: apiProcedure("health:read")
    .meta({
      openapi: {
        method: "GET",
        path: "/health-scores/{accountId}",
        tags,
        summary: "Get an account's churn risk",
        description: `${MODEL} The score is computed at request time from the account's data as it is, and not stored (a read writes nothing). history has exactly 90 points, one per UTC day ending today (whose point is the score just computed): the day's stored snapshot, else the last earlier one carried forward, else null (before the first stored score). Snapshots are stored with each stored score (see GET /health-scores). 404 for an account of another organisation.`,
      },
    })
    .input(HealthGetSchema)
    .output(HealthScoreSchema)
    .query(({ ctx, input }) => getHealthScore(ctx.principal.orgId, input.accountId)),

  /** `POST /health-scores/{accountId}/signals` (health:write): stores an external signal, 201 with the new score. */
  pushSignal: apiProcedure("health:write")
    .meta({
      openapi: {
        method: "POST",
        path: "/health-scores/{accountId}/signals",
        tags,
        summary: "Push an external churn-risk signal",
        description:
          "Stores a signal from another system (PSA, survey, monitoring) and answers 201 with the stored signal and the account's new score. Body: source, type, severity (LOW, MEDIUM, HIGH, CRITICAL; informative), score 0–100 (the risk it stands for), optional message, occurredAt (default now; at most 5 minutes in the future) and expiresAt (default occurredAt + 30 days; must be after occurredAt). Only unexpired signals count; several combine as 100 × (1 − Π(1 − score/100)) into the external signal (weight 15 %). An already expired signal is stored with active=false. No webhook event exists for health scores. 404 for an account of another organisation.",
      },
      successStatus: 201,
    })
    .input(SignalCreateSchema)
    .output(SignalCreatedSchema)
    .mutation(({ ctx, input }) => createHealthSignal(ctx.principal.orgId, input)),
});
