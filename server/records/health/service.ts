// Health score endpoints (docs/api-contract.md §4.7): an account's score with breakdown, signals and history, the
// organisation's list, and external signals. Scores are computed by model.ts from the facts refresh.ts counts.
import type { Prisma } from "../../db/generated/client";
import { prisma } from "../../db/transaction";
import { ApiError, notFound } from "../../errors";
import { listPage } from "../pagination";
import { DAY_MS, SIGNAL_DEFAULT_TTL_DAYS } from "./model";
import { loadHistory, loadInputs, storeScores, summarise } from "./refresh";
import type {
  ExternalSignal,
  HealthListQuery,
  HealthScore,
  HealthScoreSignal,
  HealthScoreSummary,
  SignalCreate,
  SignalCreated,
} from "./schema";
import { EXTERNAL_SIGNALS_LISTED_MAX, HEALTH_DEFAULT_SORT, HEALTH_SORT_FIELDS } from "./schema";

// ---------------------------------------------------------------------------------------------------------------------
// Endpoints.
// ---------------------------------------------------------------------------------------------------------------------

const signalSelect = {
  id: true,
  accountId: true,
  source: true,
  type: true,
  severity: true,
  score: true,
  message: true,
  occurredAt: true,
  expiresAt: true,
  createdAt: true,
} as const;

type SignalRow = {
  id: string;
  accountId: string;
  source: string;
  type: string;
  severity: ExternalSignal["severity"];
  score: number;
  message: string | null;
  occurredAt: Date;
  expiresAt: Date;
  createdAt: Date;
};

/** Serialises a stored signal; `active` is whether it counts at `now` (not expired). */
export function toExternalSignal(row: SignalRow, now: Date): ExternalSignal {
  return {
    ...row,
    occurredAt: row.occurredAt.toISOString(),
    expiresAt: row.expiresAt.toISOString(),
    createdAt: row.createdAt.toISOString(),
    active: row.expiresAt.getTime() > now.getTime(),
  };
}

/**
 * Churn-risk score of one account with breakdown, active external signals and 90-day history (docs/api-contract.md
 * §2.10, §4.7). The score is computed now, from the account's data as it is, and written nowhere (a read writes no
 * row); today's point of the history is that score. `externalSignals` lists the 100 most recent active signals; the
 * score counts all.
 * @throws ApiError `not_found` (404) when the account is missing or belongs to another organisation
 *   (docs/api-contract.md §1).
 */
export async function getHealthScore(orgId: string, accountId: string): Promise<HealthScore> {
  const now = new Date();
  const [row] = await loadInputs(orgId, [accountId], now);
  if (!row) throw notFound("Account", accountId);
  const summary = summarise(row, now);
  const [signals, stored] = await Promise.all([
    prisma().healthSignal.findMany({
      where: { orgId, accountId, expiresAt: { gt: now } },
      orderBy: [{ occurredAt: "desc" }, { id: "asc" }],
      take: EXTERNAL_SIGNALS_LISTED_MAX,
      select: signalSelect,
    }),
    loadHistory(orgId, accountId, now),
  ]);
  const history = stored.map((point, index) =>
    index === stored.length - 1 ? { ...point, score: summary.score } : point,
  );
  return { ...summary, externalSignals: signals.map((s) => toExternalSignal(s, now)), history };
}

const scoreSelect = {
  accountId: true,
  score: true,
  riskLevel: true,
  signals: true,
  computedAt: true,
  account: { select: { name: true, lifecycleStatus: true } },
} satisfies Prisma.HealthScoreSelect;

type ScoreRow = Prisma.HealthScoreGetPayload<{ select: typeof scoreSelect }>;

function toSummary(row: ScoreRow & { id: string }): HealthScoreSummary {
  return {
    accountId: row.accountId,
    accountName: row.account.name,
    lifecycleStatus: row.account.lifecycleStatus,
    score: row.score,
    riskLevel: row.riskLevel,
    computedAt: row.computedAt.toISOString(),
    signals: row.signals as HealthScoreSignal[],
  };
}

/**
 * Lists the organisation's accounts with their stored churn risk (docs/api-contract.md §4.7), default riskiest first
 * (`score:desc`, ties by accountId in the same direction), filters `riskLevel` and `lifecycle`, keyset pages like every
 * list (docs/api-contract.md §4.9): `nextCursor` is the accountId of the page's last item. One indexed query a page, so
 * a page costs what a page costs whatever the organisation's size; nothing is computed or written. Each item's
 * `computedAt` says when its score was computed (docs/architecture.md, "Health scores").
 * @throws ApiError `bad_request` (400) when `cursor` names no scored account of the organisation.
 */
export function listHealthScores(
  orgId: string,
  query: HealthListQuery,
): Promise<{ data: HealthScoreSummary[]; hasMore: boolean; nextCursor: string | null }> {
  const filters: Prisma.HealthScoreWhereInput[] = [{ orgId }];
  if (query.riskLevel) filters.push({ riskLevel: query.riskLevel });
  if (query.lifecycle) filters.push({ account: { lifecycleStatus: query.lifecycle } });
  return listPage({
    query: { limit: query.limit, cursor: query.cursor, sort: query.sort },
    // Keyset columns of the stored rows: the score, the account's name through its relation, the accountId as the id.
    fields: HEALTH_SORT_FIELDS,
    defaultSort: HEALTH_DEFAULT_SORT,
    filters,
    findCursor: async (accountId) => {
      const row = await prisma().healthScore.findFirst({ where: { orgId, accountId }, select: scoreSelect });
      return row && { score: row.score, accountName: row.account.name, id: row.accountId };
    },
    findMany: async (args) =>
      (
        await prisma().healthScore.findMany({
          where: renameKeys(args.where),
          orderBy: renameKeys(args.orderBy) as Prisma.HealthScoreOrderByWithRelationInput[],
          take: args.take,
          select: scoreSelect,
        })
      ).map((row) => ({ ...row, id: row.accountId })),
    map: toSummary,
  });
}

// The list helper speaks of `id` and `accountName`; the stored rows have `accountId` and the account's `name`.
function renameKeys<T>(value: T): T {
  if (Array.isArray(value)) return value.map(renameKeys) as T;
  if (value === null || typeof value !== "object" || value instanceof Date) return value;
  return Object.fromEntries(
    Object.entries(value).map(([key, inner]) => {
      if (key === "id") return ["accountId", renameKeys(inner)];
      if (key === "accountName") return ["account", { name: renameKeys(inner) }];
      return [key, renameKeys(inner)];
    }),
  ) as T;
}

/** Accepted clock skew for `occurredAt` of a pushed signal. */
const FUTURE_SKEW_MS = 5 * 60_000;

/**
 * Stores an external churn-risk signal for an account (docs/api-contract.md §4.7) and returns it with the account's new
 * score, which it stores too (the account's current score and today's snapshot: a write may). `occurredAt` defaults to
 * now, `expiresAt` to occurredAt + 30 days. No webhook event exists for health scores (docs/api-contract.md §6.1).
 * @throws ApiError `not_found` (404) when the account is missing or belongs to another organisation;
 *         `validation_error` (422) when occurredAt is more than 5 minutes ahead or expiresAt is not after occurredAt.
 */
export async function createHealthSignal(orgId: string, input: SignalCreate): Promise<SignalCreated> {
  const now = new Date();
  const account = await prisma().account.findFirst({ where: { orgId, id: input.accountId }, select: { id: true } });
  if (!account) throw notFound("Account", input.accountId);

  const occurredAt = input.occurredAt ? new Date(input.occurredAt) : now;
  const expiresAt = input.expiresAt
    ? new Date(input.expiresAt)
    : new Date(occurredAt.getTime() + SIGNAL_DEFAULT_TTL_DAYS * DAY_MS);
  const details = [];
  if (occurredAt.getTime() > now.getTime() + FUTURE_SKEW_MS)
    details.push({ path: ["occurredAt"], message: "must not be in the future" });
  if (expiresAt.getTime() <= occurredAt.getTime())
    details.push({ path: ["expiresAt"], message: "must be later than occurredAt" });
  if (details.length > 0) throw new ApiError("validation_error", "Request validation failed", { details });

  const signal = await prisma().healthSignal.create({
    data: {
      orgId,
      accountId: account.id,
      source: input.source,
      type: input.type,
      severity: input.severity,
      score: input.score,
      message: input.message ?? null,
      occurredAt,
      expiresAt,
    },
    select: signalSelect,
  });
  const [row] = await loadInputs(orgId, [account.id], now);
  if (!row) throw notFound("Account", account.id);
  const summary = summarise(row, now);
  await storeScores(orgId, [summary], now);
  return {
    signal: toExternalSignal(signal, now),
    accountId: account.id,
    score: summary.score,
    riskLevel: summary.riskLevel,
    computedAt: summary.computedAt,
  };
}
