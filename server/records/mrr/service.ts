import { prisma } from "../../db/transaction";
import { MRR_CATEGORIES_MAX, type MrrCategory, type MrrSummary, UNCATEGORISED } from "./schema";

type Figures = Omit<MrrCategory, "serviceCategory">;

interface MrrRow extends Figures {
  serviceCategory: string | null;
  isTotal: number;
}

// One pass over the organisation's won and open deals, grouped by category with a ROLLUP row for the totals; sums are
// exact numerics rounded to cents only at the end, then sent as float8 (12,2 amounts are exact in a double).
const MRR_SQL = `
SELECT "cat" AS "serviceCategory", GROUPING("cat")::int AS "isTotal",
       ROUND(COALESCE(SUM("estimatedMrr") FILTER (WHERE "won" AND NOT "churned"), 0), 2)::float8 AS "mrr",
       (COUNT(DISTINCT "accountId") FILTER (WHERE "won" AND NOT "churned"))::int AS "accounts",
       (COUNT(*) FILTER (WHERE "won" AND NOT "churned"))::int AS "deals",
       ROUND(COALESCE(SUM("estimatedMrr" * "probability" / 100.0) FILTER (WHERE NOT "won"), 0), 2)::float8 AS "weightedPipeline",
       ROUND(COALESCE(SUM("estimatedMrr") FILTER (WHERE NOT "won"), 0), 2)::float8 AS "pipelineMrr",
       (COUNT(*) FILTER (WHERE NOT "won"))::int AS "openDeals",
       ROUND(COALESCE(SUM("estimatedMrr") FILTER (WHERE "won" AND "churned"), 0), 2)::float8 AS "churnedMrr",
       (COUNT(DISTINCT "accountId") FILTER (WHERE "won" AND "churned"))::int AS "churnedAccounts",
       (COUNT(*) FILTER (WHERE "won" AND "churned"))::int AS "churnedDeals"
FROM (
  SELECT COALESCE(NULLIF(btrim(d."serviceCategory"), ''), $2) AS "cat", d."accountId", d."estimatedMrr", d."probability",
         d."stage" = 'CLOSED_WON' AS "won", a."lifecycleStatus" = 'CHURNED' AS "churned"
  FROM "Deal" d JOIN "Account" a ON a."id" = d."accountId" AND a."orgId" = d."orgId"
  WHERE d."orgId" = $1 AND d."stage" <> 'CLOSED_LOST'
) AS x
GROUP BY ROLLUP ("cat")`;

const EMPTY: Figures = {
  mrr: 0,
  accounts: 0,
  deals: 0,
  weightedPipeline: 0,
  pipelineMrr: 0,
  openDeals: 0,
  churnedMrr: 0,
  churnedAccounts: 0,
  churnedDeals: 0,
};

function figuresOf(row: MrrRow): Figures {
  return {
    mrr: Number(row.mrr),
    accounts: Number(row.accounts),
    deals: Number(row.deals),
    weightedPipeline: Number(row.weightedPipeline),
    pipelineMrr: Number(row.pipelineMrr),
    openDeals: Number(row.openDeals),
    churnedMrr: Number(row.churnedMrr),
    churnedAccounts: Number(row.churnedAccounts),
    churnedDeals: Number(row.churnedDeals),
  };
}

/**
 * The organisation's MRR summary by service category (docs/api-contract.md §2.10, §4.7), from its deals at request
 * time: `mrr` = Σ estimatedMrr of CLOSED_WON deals on non-CHURNED accounts; `weightedPipeline` = Σ estimatedMrr ×
 * probability / 100 over open deals (stage neither CLOSED_WON nor CLOSED_LOST); `churnedMrr` = Σ estimatedMrr of
 * CLOSED_WON deals on CHURNED accounts; with account and deal counts. Deals without a category (null or blank) are
 * grouped under "Uncategorised". Amounts in currency units per month, 2 decimals.
 * @returns `{ computedAt, totals, categories }`, categories ordered by mrr descending then name, the first 500 of
 *          them (totals cover every deal). Never throws an
 *          ApiError: an organisation without deals gets zero totals and no categories.
 */
export async function getMrrSummary(orgId: string): Promise<MrrSummary> {
  const now = new Date();
  const rows = await prisma().$queryRawUnsafe<MrrRow[]>(MRR_SQL, orgId, UNCATEGORISED);
  const total = rows.find((row) => Number(row.isTotal) === 1);
  const categories = rows
    .filter((row) => Number(row.isTotal) === 0)
    .map((row) => ({ serviceCategory: row.serviceCategory ?? UNCATEGORISED, ...figuresOf(row) }))
    .sort(
      (a, b) =>
        b.mrr - a.mrr || (a.serviceCategory < b.serviceCategory ? -1 : a.serviceCategory > b.serviceCategory ? 1 : 0),
    )
    .slice(0, MRR_CATEGORIES_MAX);
  return { computedAt: now.toISOString(), totals: total ? figuresOf(total) : { ...EMPTY }, categories };
}
