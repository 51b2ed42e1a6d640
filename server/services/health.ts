import { newId } from "../db/ids";
import { prisma } from "../db/transaction";
import { ApiError, notFound } from "../errors";
import type {
  ExternalSignal,
  HealthListQuery,
  HealthScore,
  HealthScoreSignal,
  HealthScoreSummary,
  RiskLevel,
  SignalCreate,
  SignalCreated,
} from "../schemas/health";
import { HEALTH_DEFAULT_SORT, HEALTH_SORT_FIELDS } from "../schemas/health";
import { parseSort, type SortTerm, unknownCursor } from "./pagination";

// ---------------------------------------------------------------------------------------------------------------------
// The model: a pure function of counted facts (spec §2.10). Every constant is documented in the README.
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
 * Churn-risk score of one account (spec §2.10, §4.7): a pure function of counted facts and the current time.
 * Each signal yields a risk value 0–100; its contribution is `weight × value / 100` ({@link HEALTH_WEIGHTS}); the
 * score is the sum of the contributions rounded to an integer (values and contributions are shown with 2 decimals
 * and the score is computed from the shown contributions, so the breakdown always adds up).
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
 * query per account), the score inputs of every account of the organisation, or of `accountId` only.
 */
const INPUTS_SQL = `
WITH acc AS (
  SELECT "id", "name", "lifecycleStatus"::text AS "lifecycleStatus", "createdAt" FROM "Account"
  WHERE "orgId" = $1 AND ($2::text IS NULL OR "id" = $2)
), dev AS (
  SELECT "accountId", count(*)::int AS "devices",
         count(*) FILTER (WHERE NOT "isOnline")::int AS "offline",
         count(*) FILTER (WHERE "isEndOfLife")::int AS "endOfLife",
         count(*) FILTER (WHERE NOT "patchCompliant")::int AS "notPatchCompliant"
  FROM "Device" WHERE "orgId" = $1 AND ($2::text IS NULL OR "accountId" = $2)
  GROUP BY "accountId"
), tp AS (
  SELECT "accountId", max("occurredAt") AS "lastTouchpointAt"
  FROM "Touchpoint" WHERE "orgId" = $1 AND ($2::text IS NULL OR "accountId" = $2) AND "occurredAt" <= ${NOW}
  GROUP BY "accountId"
), dl AS (
  SELECT "accountId",
         count(*) FILTER (WHERE "type" = 'RENEWAL' AND "stage" NOT IN ('CLOSED_WON', 'CLOSED_LOST'))::int AS "openRenewals",
         count(*) FILTER (WHERE "stage" = 'CLOSED_LOST'
                            AND COALESCE("closedAt", "updatedAt") > ${NOW} - interval '${PIPELINE.lostWindowDays} days')::int AS "lostDeals"
  FROM "Deal" WHERE "orgId" = $1 AND ($2::text IS NULL OR "accountId" = $2) AND ("type" = 'RENEWAL' OR "stage" = 'CLOSED_LOST')
  GROUP BY "accountId"
), tk AS (
  SELECT COALESCE(t."accountId", d."accountId") AS "accountId", count(*)::int AS "overdueTasks"
  FROM "Task" t LEFT JOIN "Deal" d ON d."id" = t."dealId" AND d."orgId" = t."orgId"
  WHERE t."orgId" = $1 AND t."dueAt" < ${NOW} AND t."status" NOT IN ('DONE', 'CANCELLED')
    AND ($2::text IS NULL OR COALESCE(t."accountId", d."accountId") = $2)
  GROUP BY 1
), sg AS (
  SELECT "accountId", array_agg("score" ORDER BY "score" DESC, "id") AS "signalScores"
  FROM "HealthSignal" WHERE "orgId" = $1 AND ($2::text IS NULL OR "accountId" = $2) AND "expiresAt" > ${NOW}
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

async function loadInputs(orgId: string, accountId: string | null, now: Date): Promise<InputRow[]> {
  return prisma().$queryRawUnsafe<InputRow[]>(INPUTS_SQL, orgId, accountId, now.toISOString());
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
 * Records today's (UTC) score of each account in `HealthSnapshot`, one row per account and day. Today's stored scores
 * are read first and only missing or changed rows are written (one upsert on (accountId, day), in accountId order so
 * that concurrent calls lock rows in the same order): a repeated read writes nothing. The write is a by-product of a
 * read: a failure (e.g. an account hard-deleted meanwhile) is logged and does not fail the request.
 */
async function recordSnapshots(orgId: string, scores: ReadonlyArray<{ accountId: string; score: number }>, now: Date) {
  if (scores.length === 0) return;
  const day = new Date(`${utcDay(now)}T00:00:00.000Z`);
  try {
    const stored = await prisma().healthSnapshot.findMany({
      where: { orgId, day, ...(scores.length === 1 ? { accountId: scores[0]?.accountId } : {}) },
      select: { accountId: true, score: true },
    });
    const known = new Map(stored.map((row) => [row.accountId, row.score]));
    const rows = scores
      .filter((s) => known.get(s.accountId) !== s.score)
      .sort((a, b) => (a.accountId < b.accountId ? -1 : a.accountId > b.accountId ? 1 : 0))
      .map((s) => ({ id: newId(), accountId: s.accountId, score: s.score }));
    if (rows.length === 0) return;
    await prisma().$executeRawUnsafe(
      `INSERT INTO "HealthSnapshot" ("id", "orgId", "accountId", "day", "score", "updatedAt")
       SELECT e->>'id', $1, e->>'accountId', $2::date, (e->>'score')::int, ${NOW}
       FROM jsonb_array_elements($4::jsonb) AS e
       ON CONFLICT ("accountId", "day") DO UPDATE SET "score" = EXCLUDED."score", "updatedAt" = EXCLUDED."updatedAt"
       WHERE "HealthSnapshot"."score" IS DISTINCT FROM EXCLUDED."score"`,
      orgId,
      utcDay(now),
      now.toISOString(),
      JSON.stringify(rows),
    );
  } catch (error) {
    console.warn(JSON.stringify({ level: "warn", msg: "health snapshot not recorded", orgId, error: String(error) }));
  }
}

/** Number of days of `history` (spec §2.10). */
export const HISTORY_DAYS = 90;

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
 * Churn-risk score of one account with breakdown, active external signals and 90-day history (spec §2.10, §4.7).
 * Computes the score now and records it as today's snapshot.
 * @throws ApiError `not_found` (404) when the account is missing or belongs to another organisation (spec §1).
 */
export async function getHealthScore(orgId: string, accountId: string): Promise<HealthScore> {
  const now = new Date();
  const [row] = await loadInputs(orgId, accountId, now);
  if (!row) throw notFound("Account", accountId);
  const summary = summarise(row, now);
  await recordSnapshots(orgId, [summary], now);
  const [signals, history] = await Promise.all([
    prisma().healthSignal.findMany({
      where: { orgId, accountId, expiresAt: { gt: now } },
      orderBy: [{ occurredAt: "desc" }, { id: "asc" }],
      select: signalSelect,
    }),
    loadHistory(orgId, accountId, now),
  ]);
  return { ...summary, externalSignals: signals.map((s) => toExternalSignal(s, now)), history };
}

function compareBy(terms: readonly SortTerm[]) {
  const all = [...terms, { field: "id", direction: terms[0]?.direction ?? "desc" } as const];
  return (a: HealthScoreSummary, b: HealthScoreSummary): number => {
    for (const { field, direction } of all) {
      const key = (item: HealthScoreSummary) =>
        field === "score" ? item.score : field === "accountName" ? item.accountName : item.accountId;
      const x = key(a);
      const y = key(b);
      if (x !== y) return (x < y ? -1 : 1) * (direction === "asc" ? 1 : -1);
    }
    return 0;
  };
}

/**
 * Lists the organisation's accounts with their current churn risk (spec §4.7), default riskiest first
 * (`score:desc`, ties by accountId in the same direction), filters `riskLevel` and `lifecycle`, `limit`/`cursor`
 * pagination with the semantics of every list (spec §4.9): `nextCursor` is the accountId of the page's last item.
 * Scores are computed for every account of the organisation with one aggregate statement, then sorted, filtered and
 * cut in memory; the cursor is located by its account's current score, so the next page starts right after it in the
 * current order. Records today's snapshot of every account.
 * @throws ApiError `bad_request` (400) when `cursor` names no account of the organisation.
 */
export async function listHealthScores(
  orgId: string,
  query: HealthListQuery,
): Promise<{ data: HealthScoreSummary[]; hasMore: boolean; nextCursor: string | null }> {
  const now = new Date();
  const all = (await loadInputs(orgId, null, now)).map((row) => summarise(row, now));
  await recordSnapshots(orgId, all, now);

  const compare = compareBy(parseSort(query.sort, HEALTH_SORT_FIELDS, HEALTH_DEFAULT_SORT));
  let after: HealthScoreSummary | undefined;
  if (query.cursor) {
    after = all.find((item) => item.accountId === query.cursor);
    if (!after) throw unknownCursor(query.cursor);
  }
  const cursor = after;
  const matching = all
    .filter((item) => !query.riskLevel || item.riskLevel === query.riskLevel)
    .filter((item) => !query.lifecycle || item.lifecycleStatus === query.lifecycle)
    .filter((item) => !cursor || compare(item, cursor) > 0)
    .sort(compare);
  const data = matching.slice(0, query.limit);
  return { data, hasMore: matching.length > query.limit, nextCursor: data.at(-1)?.accountId ?? null };
}

/** Accepted clock skew for `occurredAt` of a pushed signal. */
const FUTURE_SKEW_MS = 5 * 60_000;

/**
 * Stores an external churn-risk signal for an account (spec §4.7) and returns it with the account's new score (also
 * recorded as today's snapshot). `occurredAt` defaults to now, `expiresAt` to occurredAt + 30 days. No webhook event
 * exists for health scores (spec §6.1).
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
  const [row] = await loadInputs(orgId, account.id, now);
  if (!row) throw notFound("Account", account.id);
  const summary = summarise(row, now);
  await recordSnapshots(orgId, [summary], now);
  return {
    signal: toExternalSignal(signal, now),
    accountId: account.id,
    score: summary.score,
    riskLevel: summary.riskLevel,
    computedAt: summary.computedAt,
  };
}
