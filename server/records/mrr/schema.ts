import { z } from "zod";
import { TimestampSchema } from "../../contract/common";
import { MRR_EXAMPLE } from "../../contract/examples";

/** Name of the category that gathers deals without a `serviceCategory` (null or blank). */
export const UNCATEGORISED = "Uncategorised";

/**
 * Most categories the summary lists: those with the most mrr; `totals` always covers every deal (docs/architecture.md,
 * "The REST facade").
 */
export const MRR_CATEGORIES_MAX = 500;

// Counts of an organisation's accounts and deals stay far below 2^31.
const count = () => z.int().min(0).max(2_147_483_647);
const amount = () => z.number().min(0);

/**
 * The figures of one row of the MRR summary (docs/api-contract.md §4.7). Amounts are currency units per month, JSON
 * numbers with 2 decimals; counts are integers. "Won" means stage CLOSED_WON; "open" means any stage other than
 * CLOSED_WON and CLOSED_LOST.
 */
const figures = {
  mrr: amount().describe(
    "Recurring revenue, currency units per month: sum of estimatedMrr of CLOSED_WON deals on accounts whose lifecycleStatus is not CHURNED.",
  ),
  accounts: count().describe("Distinct non-CHURNED accounts with at least one CLOSED_WON deal counted in mrr."),
  deals: count().describe("CLOSED_WON deals counted in mrr."),
  weightedPipeline: amount().describe(
    "Probability-weighted open pipeline, currency units per month: sum of estimatedMrr × probability / 100 over open deals (any account lifecycle), rounded to 2 decimals after summing.",
  ),
  pipelineMrr: amount().describe(
    "Unweighted open pipeline, currency units per month: sum of estimatedMrr of open deals.",
  ),
  openDeals: count().describe("Open deals counted in the pipeline figures."),
  churnedMrr: amount().describe(
    "Recurring revenue on churned accounts, currency units per month: sum of estimatedMrr of CLOSED_WON deals on accounts whose lifecycleStatus is CHURNED. Not part of mrr.",
  ),
  churnedAccounts: count().describe("Distinct CHURNED accounts with at least one CLOSED_WON deal."),
  churnedDeals: count().describe("CLOSED_WON deals on CHURNED accounts."),
};

/** One service category of the MRR summary. */
export const MrrCategorySchema = z
  .object({
    serviceCategory: z
      .string()
      .max(100)
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

/** `GET /mrr` response data (docs/api-contract.md §2.10, §4.7). */
export const MrrSummarySchema = z
  .object({
    computedAt: TimestampSchema.describe(
      "When the summary was computed (at request time, from the deals as they are).",
    ),
    totals: MrrTotalsSchema,
    categories: z
      .array(MrrCategorySchema)
      .max(MRR_CATEGORIES_MAX)
      .describe(
        `One row per service category having a CLOSED_WON or open deal, ordered by mrr descending, then by name: the first ${MRR_CATEGORIES_MAX} when there are more (totals still cover every deal). CLOSED_LOST deals count nowhere.`,
      ),
  })
  .meta({ id: "MrrSummary", example: MRR_EXAMPLE });

/** The MRR summary. */
export type MrrSummary = z.infer<typeof MrrSummarySchema>;

/** Query of `GET /mrr`: no parameters (unknown ones are refused with 422). */
export const MrrQuerySchema = z.strictObject({});
