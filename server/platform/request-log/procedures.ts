import { apiProcedure, router } from "../../trpc";
import { UsageQuerySchema, UsageSeriesSchema } from "./schema";
import { usageRange, usageSeries } from "./usage-rollup";

/** Usage endpoint (docs/api-contract.md §4.19). Errors: 401, 403, 422 (bad range, granularity or unknown parameter). */
export const usageRouter = router({
  /** `GET /usage` (admin:read): the organisation's API calls per bucket by status class, p95 latency, top errors. */
  get: apiProcedure("admin:read")
    .meta({
      openapi: {
        method: "GET",
        path: "/usage",
        tags: ["Usage"],
        summary: "API usage per time bucket",
        description:
          "The organisation's calls to this API (every key, refused calls included, as the audit log records them) over a range of whole buckets: from is rounded down and to rounded up to the granularity (30m, 3h or 12h, aligned to the Unix epoch, so 12h buckets start at 00:00 and 12:00 UTC). Each bucket gives requests by status class and the 95th-percentile time to answer; totals and the five most frequent error answers cover the range. The same figures as the settings area's usage page. A call is counted within a second of its answer. Defaults: to = now, from = 24 hours before to, granularity 30m up to 24 hours, 3h up to 7 days, 12h beyond. At most 90 days and 1,000 buckets.",
        errorResponses: {
          422: "validation_error: from not before to, a range longer than 90 days or holding more than 1,000 buckets, a malformed timestamp or granularity, or an unknown query parameter.",
        },
      },
    })
    .input(UsageQuerySchema)
    .output(UsageSeriesSchema)
    .query(({ ctx, input }) => usageSeries(ctx.principal.orgId, usageRange(input))),
});
