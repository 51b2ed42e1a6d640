import { z } from "zod";
import { DateTimeInputSchema } from "../../contract/common";
import { orgProcedure, router } from "../../settings/trpc";
import { acquireExpensiveSlot } from "../limits/organisation-budgets";
import { GRANULARITIES, type Granularity } from "./schema";
import { getAuditEntry, getRateLimitSummary, listAuditLog } from "./usage";
import { usageCsv } from "./usage-export";
import { requestedUsageRange, usageRange, usageSeries } from "./usage-rollup";

const read = orgProcedure("usage:read");

const filters = {
  apiKeyId: z.string().max(64).optional(),
  status: z.string().max(3).optional(),
  // `MCP`: a tool call of the MCP server (docs/api-contract.md §10.5).
  method: z.enum(["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS", "MCP"]).optional(),
  path: z.string().max(200).optional(),
};
const instant = DateTimeInputSchema;
const range = {
  from: instant.optional(),
  to: instant.optional(),
  granularity: z.enum(Object.keys(GRANULARITIES) as [Granularity, ...Granularity[]]).optional(),
};

/**
 * Usage of the member's organisation (docs/api-contract.md §1.2 audit log, §4.19 usage figures, §8 rate limits);
 * every role sees it (§5.10). Ranges are whole buckets (docs/architecture.md, "Usage: the roll-up, the chart and the
 * export").
 */
export const usageRouter = router({
  /**
   * The usage figures of a range (default: the last 24 hours) under the filters: buckets by status class with p95
   * latency in ms, totals and top errors.
   * @returns `UsageSeries` (server/platform/request-log/schema.ts).
   * @throws 422 for a malformed status filter, a range longer than 90 days or with more than 1,000 buckets.
   */
  series: read
    .input(z.object({ ...range, ...filters }))
    .query(({ ctx, input }) => usageSeries(ctx.member.org.id, usageRange(input), input)),

  /**
   * The audit log of a range (whole buckets, as {@link usageRouter} `series`), newest first, filtered by key, status
   * (`404` or `4xx`), method and path text, keyset-paginated.
   * @returns `{ data, hasMore, nextCursor }`.
   * @throws 422 for a malformed status filter or range; 400 for a malformed cursor.
   */
  auditLog: read
    .input(
      z.object({
        ...range,
        ...filters,
        cursor: z.string().max(40).optional(),
        limit: z.number().int().min(1).max(100).optional(),
      }),
    )
    .query(({ ctx, input }) => {
      const { from, to } = input.from || input.to ? usageRange(input) : { from: undefined, to: undefined };
      return listAuditLog(ctx.member.org.id, { ...input, from, to });
    }),

  /**
   * One audited call by its id (the request's detail).
   * @throws 404 when it is not a call of the organisation.
   */
  request: read
    .input(z.object({ id: z.string().max(20) }))
    .query(({ ctx, input }) => getAuditEntry(ctx.member.org.id, input.id)),

  /**
   * The CSV export of the log of a range under the filters: the file name (`usage-<slug>-<from>-<to>.csv`, the range's
   * own bounds to the minute, UTC) and `open()`, which takes one
   * of the organisation's slots for expensive work and starts the stream (UTF-8 with BOM, header row, formulas
   * neutralised), giving the slot back when it ends. The route handler of `/settings/usage/export` answers it; over
   * `/api/trpc` only the file name travels.
   * @throws 422 for a malformed filter or a range longer than 90 days (before any byte); `open()` throws ApiError
   *   `rate_limited` (429) when the organisation's slots are all taken (docs/api-contract.md §8.5).
   */
  export: read.input(z.object({ ...range, ...filters })).query(({ ctx, input }) => {
    // The range as asked, not widened to buckets: the page links its chart's bucket-aligned range, which aligned again
    // (a longer range, a wider default bucket) covered hours more than the page showed and than the name said.
    const { from, to } = requestedUsageRange(input);
    const query = { ...input, from, to };
    const orgId = ctx.member.org.id;
    // An export reads the whole range: one of the organisation's slots for expensive work (docs/api-contract.md §8.5),
    // taken when the download opens and held until it ends.
    const open = async () => {
      const { perOrg } = await getRateLimitSummary(orgId);
      const release = await acquireExpensiveSlot(orgId, perOrg, "export");
      return usageCsv(orgId, query, { perOrg, onEnd: release });
    };
    const stamp = (date: Date) => date.toISOString().slice(0, 16).replace(/[-:]/g, "");
    return { filename: `usage-${ctx.member.org.slug}-${stamp(from)}-${stamp(to)}.csv`, open };
  }),

  /** The plan and the per-key / organisation-wide windows in force, requests per minute. */
  limits: read.query(({ ctx }) => getRateLimitSummary(ctx.member.org.id)),

  /** Calls and failed calls (status ≥ 400) in the last 24 hours (48 whole 30-minute buckets up to now). */
  lastDay: read.query(async ({ ctx }) => {
    const { totals } = await usageSeries(ctx.member.org.id, usageRange({ granularity: "30m" }));
    return { total: totals.requests, errors: totals.byStatusClass["4xx"] + totals.byStatusClass["5xx"] };
  }),
});
