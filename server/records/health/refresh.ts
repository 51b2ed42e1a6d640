import { newId } from "../../db/ids";
import { prisma } from "../../db/transaction";
import { buildHistory, computeHealthScore, DAY_MS, type HealthInputs, PIPELINE, utcDay } from "./model";
import type { HealthScoreSummary } from "./schema";
import { HISTORY_DAYS } from "./schema";

// ---------------------------------------------------------------------------------------------------------------------
// Reading the facts: one statement for one account or the whole organisation.
// ---------------------------------------------------------------------------------------------------------------------

interface InputRow {
  id: string;
  name: string;
  lifecycleStatus: HealthScoreSummary["lifecycleStatus"];
  createdAt: Date;
  devices: number;
  offline: number;
  endOfLife: number;
  notPatchCompliant: number;
  lastTouchpointAt: Date | null;
  openRenewals: number;
  lostDeals: number;
  overdueTasks: number;
  signalScores: number[];
}

// Timestamps are stored as UTC `timestamp(3)`; parameters arrive as ISO strings.
const NOW = `($3::timestamptz AT TIME ZONE 'UTC')`;

/**
 * Counts, in one statement of grouped aggregates (one scan per table through its (orgId, accountId…) index, never one
 * query per account), the score inputs of every account of the organisation, or of the accounts listed in $2.
 */
const INPUTS_SQL = `
WITH acc AS (
  SELECT "id", "name", "lifecycleStatus"::text AS "lifecycleStatus", "createdAt" FROM "Account"
  WHERE "orgId" = $1 AND ($2::text[] IS NULL OR "id" = ANY($2::text[]))
), dev AS (
  SELECT "accountId", count(*)::int AS "devices",
         count(*) FILTER (WHERE NOT "isOnline")::int AS "offline",
         count(*) FILTER (WHERE "isEndOfLife")::int AS "endOfLife",
         count(*) FILTER (WHERE NOT "patchCompliant")::int AS "notPatchCompliant"
  FROM "Device" WHERE "orgId" = $1 AND ($2::text[] IS NULL OR "accountId" = ANY($2::text[]))
  GROUP BY "accountId"
), tp AS (
  SELECT "accountId", max("occurredAt") AS "lastTouchpointAt"
  FROM "Touchpoint" WHERE "orgId" = $1 AND ($2::text[] IS NULL OR "accountId" = ANY($2::text[])) AND "occurredAt" <= ${NOW}
  GROUP BY "accountId"
), dl AS (
  SELECT "accountId",
         count(*) FILTER (WHERE "type" = 'RENEWAL' AND "stage" NOT IN ('CLOSED_WON', 'CLOSED_LOST'))::int AS "openRenewals",
         count(*) FILTER (WHERE "stage" = 'CLOSED_LOST'
                            AND COALESCE("closedAt", "updatedAt") > ${NOW} - interval '${PIPELINE.lostWindowDays} days')::int AS "lostDeals"
  FROM "Deal" WHERE "orgId" = $1 AND ($2::text[] IS NULL OR "accountId" = ANY($2::text[])) AND ("type" = 'RENEWAL' OR "stage" = 'CLOSED_LOST')
  GROUP BY "accountId"
), tk AS (
  SELECT COALESCE(t."accountId", d."accountId") AS "accountId", count(*)::int AS "overdueTasks"
  FROM "Task" t LEFT JOIN "Deal" d ON d."id" = t."dealId" AND d."orgId" = t."orgId"
  WHERE t."orgId" = $1 AND t."dueAt" < ${NOW} AND t."status" NOT IN ('DONE', 'CANCELLED')
    AND ($2::text[] IS NULL OR COALESCE(t."accountId", d."accountId") = ANY($2::text[]))
  GROUP BY 1
), sg AS (
  SELECT "accountId", array_agg("score" ORDER BY "score" DESC, "id") AS "signalScores"
  FROM "HealthSignal" WHERE "orgId" = $1 AND ($2::text[] IS NULL OR "accountId" = ANY($2::text[])) AND "expiresAt" > ${NOW}
  GROUP BY "accountId"
)
SELECT acc."id", acc."name", acc."lifecycleStatus", acc."createdAt",
       COALESCE(dev."devices", 0) AS "devices", COALESCE(dev."offline", 0) AS "offline",
       COALESCE(dev."endOfLife", 0) AS "endOfLife", COALESCE(dev."notPatchCompliant", 0) AS "notPatchCompliant",
       tp."lastTouchpointAt",
       COALESCE(dl."openRenewals", 0) AS "openRenewals", COALESCE(dl."lostDeals", 0) AS "lostDeals",
       COALESCE(tk."overdueTasks", 0) AS "overdueTasks",
       COALESCE(sg."signalScores", '{}'::int[]) AS "signalScores"
FROM acc
LEFT JOIN dev ON dev."accountId" = acc."id"
LEFT JOIN tp ON tp."accountId" = acc."id"
LEFT JOIN dl ON dl."accountId" = acc."id"
LEFT JOIN tk ON tk."accountId" = acc."id"
LEFT JOIN sg ON sg."accountId" = acc."id"`;

export async function loadInputs(orgId: string, accountIds: readonly string[] | null, now: Date): Promise<InputRow[]> {
  return prisma().$queryRawUnsafe<InputRow[]>(INPUTS_SQL, orgId, accountIds, now.toISOString());
}

function toInputs(row: InputRow): HealthInputs {
  return {
    devices: {
      total: row.devices,
      offline: row.offline,
      endOfLife: row.endOfLife,
      notPatchCompliant: row.notPatchCompliant,
    },
    lastTouchpointAt: row.lastTouchpointAt,
    accountCreatedAt: row.createdAt,
    openRenewals: row.openRenewals,
    lostDealsLast90Days: row.lostDeals,
    overdueTasks: row.overdueTasks,
    externalSignalScores: row.signalScores.map(Number),
  };
}

export function summarise(row: InputRow, now: Date): HealthScoreSummary {
  const result = computeHealthScore(toInputs(row), now);
  return {
    accountId: row.id,
    accountName: row.name,
    lifecycleStatus: row.lifecycleStatus,
    score: result.score,
    riskLevel: result.riskLevel,
    computedAt: now.toISOString(),
    signals: result.signals,
  };
}

// ---------------------------------------------------------------------------------------------------------------------
// Daily snapshots: the 90-day history.
// ---------------------------------------------------------------------------------------------------------------------

/**
 * Stores the score of accounts created now, in the transaction that creates them, so a new account is listed by
 * `GET /health-scores` at once: with no devices, touchpoints, deals, tasks or signals yet, every new account scores
 * the same (0, LOW), so one statement stores them all whatever their number.
 */
export async function recordNewAccountScores(orgId: string, accountIds: readonly string[], now: Date): Promise<void> {
  if (accountIds.length === 0) return;
  const empty = computeHealthScore(
    {
      devices: { total: 0, offline: 0, endOfLife: 0, notPatchCompliant: 0 },
      lastTouchpointAt: null,
      accountCreatedAt: now,
      openRenewals: 0,
      lostDealsLast90Days: 0,
      overdueTasks: 0,
      externalSignalScores: [],
    },
    now,
  );
  await prisma().$executeRawUnsafe(
    `INSERT INTO "HealthScore" ("accountId", "orgId", "score", "riskLevel", "signals", "computedAt")
     SELECT id, $1, $3, $4::"RiskLevel", $5::jsonb, $6::timestamptz AT TIME ZONE 'UTC' FROM unnest($2::text[]) AS id
     ON CONFLICT ("accountId") DO NOTHING`,
    orgId,
    accountIds,
    empty.score,
    empty.riskLevel,
    JSON.stringify(empty.signals),
    now.toISOString(),
  );
}

/** Accounts a refresh scores with one aggregate statement. */
const REFRESH_CHUNK = 1_000;

/**
 * Stores scores (docs/architecture.md, "Health scores": computing is separate from storing; never done by a read): each
 * account's current `HealthScore` row and today's (UTC) `HealthSnapshot`, one upsert statement each, rows in accountId
 * order so that concurrent refreshes lock in the same order. A snapshot is rewritten only when the day's score changed.
 */
export async function storeScores(orgId: string, scores: readonly HealthScoreSummary[], now: Date): Promise<void> {
  if (scores.length === 0) return;
  const rows = [...scores]
    .sort((a, b) => (a.accountId < b.accountId ? -1 : a.accountId > b.accountId ? 1 : 0))
    .map((summary) => ({
      id: newId(),
      accountId: summary.accountId,
      score: summary.score,
      riskLevel: summary.riskLevel,
      signals: summary.signals,
    }));
  const json = JSON.stringify(rows);
  await prisma().$executeRawUnsafe(
    `INSERT INTO "HealthScore" ("accountId", "orgId", "score", "riskLevel", "signals", "computedAt")
     SELECT e->>'accountId', $1, (e->>'score')::int, (e->>'riskLevel')::"RiskLevel", e->'signals',
            $2::timestamptz AT TIME ZONE 'UTC'
     FROM jsonb_array_elements($3::jsonb) AS e
     JOIN "Account" AS a ON a."id" = e->>'accountId' AND a."orgId" = $1
     ON CONFLICT ("accountId") DO UPDATE SET "score" = EXCLUDED."score", "riskLevel" = EXCLUDED."riskLevel",
       "signals" = EXCLUDED."signals", "computedAt" = EXCLUDED."computedAt"`,
    orgId,
    now.toISOString(),
    json,
  );
  await prisma().$executeRawUnsafe(
    `INSERT INTO "HealthSnapshot" ("id", "orgId", "accountId", "day", "score", "updatedAt")
     SELECT e->>'id', $1, e->>'accountId', $2::date, (e->>'score')::int, ${NOW}
     FROM jsonb_array_elements($4::jsonb) AS e
     JOIN "Account" AS a ON a."id" = e->>'accountId' AND a."orgId" = $1
     ON CONFLICT ("accountId", "day") DO UPDATE SET "score" = EXCLUDED."score", "updatedAt" = EXCLUDED."updatedAt"
     WHERE "HealthSnapshot"."score" IS DISTINCT FROM EXCLUDED."score"`,
    orgId,
    utcDay(now),
    now.toISOString(),
    json,
  );
}

/** How old a stored score may get before the scheduled refresh computes it again (ms): 1 hour. */
export const HEALTH_SCORE_MAX_AGE_MS = 60 * 60_000;
/** Most accounts the scheduled refresh scores in one run (each minute). */
const REFRESH_MAX_ACCOUNTS = 20_000;
/** Events whose inputs changed a score: the score of the account they name is recomputed (through the outbox). */
const INPUT_EVENTS = [
  "account.created",
  "account.updated",
  "device.created",
  "device.updated",
  "deal.created",
  "deal.stage_changed",
  "deal.closed_won",
  "deal.closed_lost",
  "deal.updated",
  "touchpoint.created",
  "task.created",
  "task.updated",
];

/**
 * The scheduled health refresh (an Inngest function runs it every minute while a worker runs): scores
 * again (1) every account named by an outbox event of the last hour that changed one of its inputs (a device, deal or
 * touchpoint, a task, the account itself) after its score was computed, and (2) every account whose score is more than an
 * hour old or missing, so time alone (days since the last touchpoint, tasks falling overdue, signals expiring) is
 * reflected within the hour. At most 20,000 accounts a run, the oldest first.
 * @returns how many accounts were scored, by reason.
 */
export async function refreshChangedHealthScores(): Promise<{ changed: number; stale: number }> {
  const changed = await prisma().$queryRawUnsafe<Array<{ orgId: string; accountId: string }>>(
    `SELECT DISTINCT e."orgId",
            CASE WHEN e."name" LIKE 'account.%' THEN e."data"->>'id' ELSE e."data"->>'accountId' END AS "accountId"
     FROM "Event" AS e
     LEFT JOIN "HealthScore" AS h
       ON h."accountId" = CASE WHEN e."name" LIKE 'account.%' THEN e."data"->>'id' ELSE e."data"->>'accountId' END
     WHERE e."createdAt" > (now() AT TIME ZONE 'UTC') - interval '1 hour' AND e."name" = ANY($1::text[])
       AND (h."computedAt" IS NULL OR h."computedAt" < e."createdAt")
     LIMIT ${REFRESH_MAX_ACCOUNTS}`,
    INPUT_EVENTS,
  );
  const stale = await prisma().$queryRawUnsafe<Array<{ orgId: string; accountId: string }>>(
    `SELECT a."orgId", a."id" AS "accountId"
     FROM "Account" AS a LEFT JOIN "HealthScore" AS h ON h."accountId" = a."id"
     WHERE h."accountId" IS NULL OR h."computedAt" < (now() AT TIME ZONE 'UTC') - $1::float8 * interval '1 millisecond'
     ORDER BY h."computedAt" NULLS FIRST
     LIMIT ${REFRESH_MAX_ACCOUNTS}`,
    HEALTH_SCORE_MAX_AGE_MS,
  );
  const byOrg = new Map<string, Set<string>>();
  for (const row of [...changed, ...stale]) {
    if (!row.accountId) continue;
    const ids = byOrg.get(row.orgId) ?? new Set<string>();
    ids.add(row.accountId);
    byOrg.set(row.orgId, ids);
  }
  for (const [orgId, ids] of byOrg) await refreshHealthScores(orgId, [...ids]);
  return { changed: changed.length, stale: stale.length };
}

/**
 * Computes and stores the current score of accounts of the organisation (all of them when `accountIds` is null),
 * 1,000 accounts per aggregate statement. Called on writes that change a score (account creation, signal push), by
 * the scheduled health refresh and by the demo seed; never by a GET.
 * @returns how many accounts were scored.
 */
export async function refreshHealthScores(orgId: string, accountIds: readonly string[] | null = null): Promise<number> {
  const now = new Date();
  if (accountIds === null) {
    const all = await prisma().account.findMany({ where: { orgId }, select: { id: true }, orderBy: { id: "asc" } });
    accountIds = all.map((account) => account.id);
    // A whole organisation that fits one statement is scored without the id list, which every input row would
    // otherwise be compared against.
    if (accountIds.length <= REFRESH_CHUNK) {
      const rows = await loadInputs(orgId, null, now);
      await storeScores(
        orgId,
        rows.map((row) => summarise(row, now)),
        now,
      );
      return rows.length;
    }
  }
  for (let start = 0; start < accountIds.length; start += REFRESH_CHUNK) {
    const chunk = accountIds.slice(start, start + REFRESH_CHUNK);
    const rows = await loadInputs(orgId, chunk, now);
    await storeScores(
      orgId,
      rows.map((row) => summarise(row, now)),
      now,
    );
  }
  return accountIds.length;
}

export async function loadHistory(orgId: string, accountId: string, now: Date) {
  const today = utcDay(now);
  const start = new Date(Date.parse(`${today}T00:00:00.000Z`) - (HISTORY_DAYS - 1) * DAY_MS);
  const [inWindow, before] = await Promise.all([
    prisma().healthSnapshot.findMany({
      where: { orgId, accountId, day: { gte: start, lte: new Date(`${today}T00:00:00.000Z`) } },
      select: { day: true, score: true },
    }),
    prisma().healthSnapshot.findFirst({
      where: { orgId, accountId, day: { lt: start } },
      orderBy: { day: "desc" },
      select: { day: true, score: true },
    }),
  ]);
  const snapshots = [...inWindow, ...(before ? [before] : [])].map((s) => ({ day: utcDay(s.day), score: s.score }));
  return buildHistory(snapshots, today);
}
