import { z } from "zod";
import { TimestampSchema } from "./common";
import { MRR_EXAMPLE } from "./examples";

/** Name of the category that gathers deals without a `serviceCategory` (null or blank). */
export const UNCATEGORISED = "Uncategorised";

/**
 * The figures of one row of the MRR summary (spec §4.7). Amounts are currency units per month, JSON numbers with 2
 * decimals; counts are integers. "Won" means stage CLOSED_WON; "open" means any stage other than CLOSED_WON and
 * CLOSED_LOST.
 */
const figures = {
  mrr: z
    .number()
    .describe(
      "Recurring revenue, currency units per month: sum of estimatedMrr of CLOSED_WON deals on accounts whose lifecycleStatus is not CHURNED.",
    ),
  accounts: z.int().describe("Distinct non-CHURNED accounts with at least one CLOSED_WON deal counted in mrr."),
  deals: z.int().describe("CLOSED_WON deals counted in mrr."),
  weightedPipeline: z
    .number()
    .describe(
      "Probability-weighted open pipeline, currency units per month: sum of estimatedMrr × probability / 100 over open deals (any account lifecycle), rounded to 2 decimals after summing.",
    ),
  pipelineMrr: z
    .number()
    .describe("Unweighted open pipeline, currency units per month: sum of estimatedMrr of open deals."),
  openDeals: z.int().describe("Open deals counted in the pipeline figures."),
  churnedMrr: z
    .number()
    .describe(
      "Recurring revenue on churned accounts, currency units per month: sum of estimatedMrr of CLOSED_WON deals on accounts whose lifecycleStatus is CHURNED. Not part of mrr.",
    ),
  churnedAccounts: z.int().describe("Distinct CHURNED accounts with at least one CLOSED_WON deal."),
  churnedDeals: z.int().describe("CLOSED_WON deals on CHURNED accounts."),
};

/** One service category of the MRR summary. */
export const MrrCategorySchema = z
  .object({
    serviceCategory: z
      .string()
      .describe(`The deals' serviceCategory as stored; deals without one are gathered under "${UNCATEGORISED}".`),
    ...figures,
  })
  .meta({ id: "MrrCategory" });

/** One row of the MRR summary. */
export type MrrCategory = z.infer<typeof MrrCategorySchema>;

/** Organisation totals of the MRR summary: the same figures over every category. */
export const MrrTotalsSchema = z
  .object(figures)
  .describe(
    "The figures over all categories. Account counts are distinct accounts, so they can be less than the sum of the categories' counts (an account can buy in several categories).",
  )
  .meta({ id: "MrrTotals" });

/** `GET /mrr` response data (spec §2.10, §4.7). */
export const MrrSummarySchema = z
  .object({
    computedAt: TimestampSchema.describe(
      "When the summary was computed (at request time, from the deals as they are).",
    ),
    totals: MrrTotalsSchema,
    categories: z
      .array(MrrCategorySchema)
      .describe(
        "One row per service category having a CLOSED_WON or open deal, ordered by mrr descending, then by name. CLOSED_LOST deals count nowhere.",
      ),
  })
  .meta({ id: "MrrSummary", example: MRR_EXAMPLE });

/** The MRR summary. */
export type MrrSummary = z.infer<typeof MrrSummarySchema>;

/** Query of `GET /mrr`: no parameters (unknown ones are refused with 422). */
export const MrrQuerySchema = z.strictObject({});
