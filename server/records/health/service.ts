import type { Prisma } from "../../db/generated/client";
import { newId } from "../../db/ids";
import { prisma } from "../../db/transaction";
import { ApiError, notFound } from "../../errors";
import { listPage } from "../pagination";
import type {
  ExternalSignal,
  HealthListQuery,
  HealthScore,
  HealthScoreSignal,
  HealthScoreSummary,
  RiskLevel,
  SignalCreate,
  SignalCreated,
} from "./schema";
import { EXTERNAL_SIGNALS_LISTED_MAX, HEALTH_DEFAULT_SORT, HEALTH_SORT_FIELDS, HISTORY_DAYS } from "./schema";

// ---------------------------------------------------------------------------------------------------------------------
// The model: a pure function of counted facts (docs/api-contract.md §2.10). Every constant is documented in docs/architecture.md, "Health scores".
// ---------------------------------------------------------------------------------------------------------------------

/** Weight of each signal in percent of the score; they add up to 100. */
export const HEALTH_WEIGHTS = { devices: 25, engagement: 25, pipeline: 20, service: 15, external: 15 } as const;

/** Device risk = 100 × (0.4 × offline share + 0.3 × end-of-life share + 0.3 × not-patch-compliant share). */
export const DEVICE_FACTORS = { offline: 0.4, endOfLife: 0.3, notPatchCompliant: 0.3 } as const;

/** Engagement risk is 0 up to `graceDays` days of silence and rises linearly to 100 at `fullRiskDays`. */
export const ENGAGEMENT = { graceDays: 10, fullRiskDays: 90 } as const;

/** Pipeline risk = min(100, 25 × open RENEWAL deals + 50 × deals CLOSED_LOST in the last `lostWindowDays` days). */
export const PIPELINE = { perOpenRenewal: 25, perLostDeal: 50, lostWindowDays: 90 } as const;

/** Service risk = min(100, 20 × overdue tasks). */
export const SERVICE = { perOverdueTask: 20 } as const;

/** Default lifetime of an external signal when `expiresAt` is not sent. */
export const SIGNAL_DEFAULT_TTL_DAYS = 30;

/** Lower bounds of the risk bands: LOW < 25 ≤ MEDIUM < 50 ≤ HIGH < 75 ≤ CRITICAL. */
export const RISK_BANDS = { MEDIUM: 25, HIGH: 50, CRITICAL: 75 } as const;

const DAY_MS = 86_400_000;

/** The facts the score is computed from, counted for one account at one moment. */
export interface HealthInputs {
  /** Devices of the account and how many of them are offline, end-of-life and not patch-compliant. */
  devices: { total: number; offline: number; endOfLife: number; notPatchCompliant: number };
  /** Latest `occurredAt` of the account's touchpoints not in the future; null when none was logged. */
  lastTouchpointAt: Date | null;
  /** The account's creation time: the engagement clock starts there when no touchpoint was ever logged. */
  accountCreatedAt: Date;
  /** Deals of type RENEWAL whose stage is neither CLOSED_WON nor CLOSED_LOST. */
  openRenewals: number;
  /** Deals CLOSED_LOST within the last 90 days (by `closedAt`, else `updatedAt`). */
  lostDealsLast90Days: number;
  /** Tasks of the account with `dueAt` in the past and status neither DONE nor CANCELLED. */
  overdueTasks: number;
  /** Scores (0–100) of the account's unexpired external signals. */
  externalSignalScores: number[];
}

/** The result of {@link computeHealthScore}. */
export interface HealthResult {
  /** 0–100, the rounded sum of the contributions. */
  score: number;
  riskLevel: RiskLevel;
  /** One entry per signal, in the order devices, engagement, pipeline, service, external. */
  signals: HealthScoreSignal[];
}

const clamp = (value: number, min = 0, max = 100) => Math.min(max, Math.max(min, value));
// Half-up rounding to cents; the epsilon keeps values such as 8.125 (binary 8.12499…) from rounding down.
const round2 = (value: number) => Math.round((value + Number.EPSILON * Math.max(1, Math.abs(value))) * 100) / 100;
const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`;

/** The risk band of a score (see {@link RISK_BANDS}). */
export function riskLevelOf(score: number): RiskLevel {
  if (score >= RISK_BANDS.CRITICAL) return "CRITICAL";
  if (score >= RISK_BANDS.HIGH) return "HIGH";
  if (score >= RISK_BANDS.MEDIUM) return "MEDIUM";
  return "LOW";
}

/**
 * Churn-risk score of one account (docs/api-contract.md §2.10, §4.7): a pure function of counted facts and the current
 * time. Each signal yields a risk value 0–100; its contribution is `weight × value / 100` ({@link HEALTH_WEIGHTS}); the
 * score is the sum of the contributions rounded to an integer (values and contributions are shown with 2 decimals and
 * the score is computed from the shown contributions, so the breakdown always adds up).
 *
 * - devices: `100 × (0.4 × offline/total + 0.3 × endOfLife/total + 0.3 × notPatchCompliant/total)`; 0 without devices.
 * - engagement: whole days d since the last touchpoint (since the account's creation when none was logged):
 *   `clamp((d − 10) × 100 / 80)`, i.e. 0 up to 10 days, 100 from 90 days.
 * - pipeline: `min(100, 25 × openRenewals + 50 × lostDealsLast90Days)`.
 * - service: `min(100, 20 × overdueTasks)`.
 * - external: `100 × (1 − Π(1 − score_i / 100))` over the unexpired signals (independent risks combined); 0 without.
 *
 * An account with no data at all scores 0 (LOW) when created and drifts to 25 (MEDIUM) after 90 days without a
 * touchpoint: silence is the only thing known about it.
 */
export function computeHealthScore(inputs: HealthInputs, now: Date): HealthResult {
  const { devices } = inputs;
  const share = (count: number) => (devices.total > 0 ? count / devices.total : 0);
  const deviceValue =
    100 *
    (DEVICE_FACTORS.offline * share(devices.offline) +
      DEVICE_FACTORS.endOfLife * share(devices.endOfLife) +
      DEVICE_FACTORS.notPatchCompliant * share(devices.notPatchCompliant));

  const since = inputs.lastTouchpointAt ?? inputs.accountCreatedAt;
  const days = Math.max(0, Math.floor((now.getTime() - since.getTime()) / DAY_MS));
  const engagementValue = clamp(
    ((days - ENGAGEMENT.graceDays) * 100) / (ENGAGEMENT.fullRiskDays - ENGAGEMENT.graceDays),
  );

  const pipelineValue = clamp(
    PIPELINE.perOpenRenewal * inputs.openRenewals + PIPELINE.perLostDeal * inputs.lostDealsLast90Days,
  );
  const serviceValue = clamp(SERVICE.perOverdueTask * inputs.overdueTasks);
  const externalValue =
    100 * (1 - inputs.externalSignalScores.reduce((safe, score) => safe * (1 - clamp(score) / 100), 1));

  const line = (
    key: HealthScoreSignal["key"],
    label: string,
    rawValue: number,
    detail: string,
    details: HealthScoreSignal["inputs"],
  ): HealthScoreSignal => {
    const value = round2(clamp(rawValue));
    const weight = HEALTH_WEIGHTS[key];
    return { key, label, weight, value, contribution: round2((weight * value) / 100), detail, inputs: details };
  };

  const signals = [
    line(
      "devices",
      "Device health",
      deviceValue,
      devices.total === 0
        ? "No devices recorded."
        : `${devices.offline} of ${plural(devices.total, "device")} offline, ${devices.endOfLife} end-of-life, ${devices.notPatchCompliant} not patch-compliant.`,
      { ...devices },
    ),
    line(
      "engagement",
      "Engagement",
      engagementValue,
      inputs.lastTouchpointAt
        ? `Last touchpoint ${plural(days, "day")} ago.`
        : `No touchpoint logged; ${plural(days, "day")} since the account was created.`,
      { daysSinceLastTouchpoint: days, lastTouchpointAt: inputs.lastTouchpointAt?.toISOString() ?? null },
    ),
    line(
      "pipeline",
      "Pipeline",
      pipelineValue,
      `${plural(inputs.openRenewals, "open renewal deal")}, ${plural(inputs.lostDealsLast90Days, "deal")} lost in the last ${PIPELINE.lostWindowDays} days.`,
      { openRenewals: inputs.openRenewals, lostDealsLast90Days: inputs.lostDealsLast90Days },
    ),
    line("service", "Service", serviceValue, `${plural(inputs.overdueTasks, "overdue task")}.`, {
      overdueTasks: inputs.overdueTasks,
    }),
    line(
      "external",
      "External signals",
      externalValue,
      inputs.externalSignalScores.length === 0
        ? "No active external signals."
        : `${plural(inputs.externalSignalScores.length, "active signal")} (scores ${inputs.externalSignalScores.join(", ")}).`,
      { activeSignals: inputs.externalSignalScores.length },
    ),
  ];
  const score = clamp(Math.round(round2(signals.reduce((sum, signal) => sum + signal.contribution, 0))));
  return { score, riskLevel: riskLevelOf(score), signals };
}

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

async function loadInputs(orgId: string, accountIds: readonly string[] | null, now: Date): Promise<InputRow[]> {
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

function summarise(row: InputRow, now: Date): HealthScoreSummary {
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

/** The UTC calendar day of `time`, `YYYY-MM-DD`. */
export function utcDay(time: Date): string {
  return time.toISOString().slice(0, 10);
}

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
async function storeScores(orgId: string, scores: readonly HealthScoreSummary[], now: Date): Promise<void> {
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

/**
 * Exactly {@link HISTORY_DAYS} points, one per UTC day ending `today`, oldest first: a day's snapshot score, else the
 * last known score before it carried forward (including a snapshot older than the window), else null.
 */
export function buildHistory(
  snapshots: ReadonlyArray<{ day: string; score: number }>,
  today: string,
): { date: string; score: number | null }[] {
  const byDay = new Map(snapshots.map((s) => [s.day, s.score]));
  const sorted = [...snapshots].sort((a, b) => (a.day < b.day ? -1 : 1));
  const end = Date.parse(`${today}T00:00:00.000Z`);
  const start = utcDay(new Date(end - (HISTORY_DAYS - 1) * DAY_MS));
  let carried: number | null = null;
  for (const s of sorted) if (s.day < start) carried = s.score;
  const points: { date: string; score: number | null }[] = [];
  for (let i = HISTORY_DAYS - 1; i >= 0; i--) {
    const date = utcDay(new Date(end - i * DAY_MS));
    carried = byDay.get(date) ?? carried;
    points.push({ date, score: carried });
  }
  return points;
}

async function loadHistory(orgId: string, accountId: string, now: Date) {
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
