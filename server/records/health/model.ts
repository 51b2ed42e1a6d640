// The churn-risk model (docs/api-contract.md §2.10; docs/architecture.md, "Health scores"): a pure function of counted
// facts, the risk bands and the 90-day history's days. refresh.ts counts the facts and stores scores; service.ts
// serves them.
import type { HealthScoreSignal, RiskLevel } from "./schema";
import { HISTORY_DAYS } from "./schema";

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

/** One day in ms. */
export const DAY_MS = 86_400_000;

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

/** The UTC calendar day of `time`, `YYYY-MM-DD`. */
export function utcDay(time: Date): string {
  return time.toISOString().slice(0, 10);
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
