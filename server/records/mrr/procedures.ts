import { apiProcedure, router } from "../../trpc";
import { MrrQuerySchema, MrrSummarySchema } from "./schema";
import { getMrrSummary } from "./service";

/** MRR endpoint (docs/api-contract.md §2.10, §4.7). Errors: 401, 403, 422 (unknown query parameter). */
export const mrrRouter = router({
  /** `GET /mrr` (mrr:read): the organisation's recurring revenue, pipeline and churned MRR by service category. */
  get: apiProcedure("mrr:read")
    .meta({
      openapi: {
        method: "GET",
        path: "/mrr",
        tags: ["MRR"],
        summary: "MRR summary by service category",
        description:
          "Computed at request time from the organisation's deals; amounts are currency units per month, JSON numbers with 2 decimals. mrr = Σ estimatedMrr of CLOSED_WON deals on accounts that are not CHURNED; weightedPipeline = Σ estimatedMrr × probability / 100 over open deals (stage neither CLOSED_WON nor CLOSED_LOST, whatever the account's lifecycle), pipelineMrr the same unweighted; churnedMrr = Σ estimatedMrr of CLOSED_WON deals on CHURNED accounts (not part of mrr). CLOSED_LOST deals count nowhere. Deals without a serviceCategory (null or blank) are grouped under \"Uncategorised\". Totals are computed over all deals (account counts are distinct accounts; weightedPipeline is rounded once, so it can differ by 0.01 from the sum of the rounded category values). No parameters.",
        errorResponses: { 422: "validation_error: an unknown query parameter was sent (GET /mrr takes none)." },
      },
    })
    .input(MrrQuerySchema)
    .output(MrrSummarySchema)
    .query(({ ctx }) => getMrrSummary(ctx.principal.orgId)),
});
