import { z } from "zod";
import { countCallsSince, getRateLimitSummary, listAuditLog } from "../../services/usage";
import { orgProcedure, router } from "./trpc";

const read = orgProcedure("usage:read");

/** Usage of the member's organisation (docs/api-contract.md §1 audit log, §8 rate limits); every role sees it. */
export const usageRouter = router({
  /**
   * The audit log, newest first, filtered by key, status (`404` or `4xx`) and path text, keyset-paginated.
   * @returns `{ data, hasMore, nextCursor }`.
   * @throws 422 for a malformed status filter; 400 for a malformed cursor.
   */
  auditLog: read
    .input(
      z.object({
        apiKeyId: z.string().max(64).optional(),
        status: z.string().max(3).optional(),
        path: z.string().max(200).optional(),
        cursor: z.string().max(40).optional(),
        limit: z.number().int().min(1).max(100).optional(),
      }),
    )
    .query(({ ctx, input }) => listAuditLog(ctx.member.org.id, input)),

  /** The plan and the per-key / organisation-wide windows in force, requests per minute. */
  limits: read.query(({ ctx }) => getRateLimitSummary(ctx.member.org.id)),

  /** Calls and failed calls (status ≥ 400) in the last 24 hours. */
  lastDay: read.query(({ ctx }) => countCallsSince(ctx.member.org.id, new Date(Date.now() - 24 * 60 * 60 * 1000))),
});
