import { z } from "zod";
import {
  DATE_TIME_MAX_LENGTH,
  DateSchema,
  DateTimeInputSchema,
  IdSchema,
  ListQueryBase,
  listOf,
  sortParam,
  TimestampSchema,
} from "../../contract/common";
import {
  HEALTH_SCORE_EXAMPLE,
  HEALTH_SCORE_SUMMARY_EXAMPLE,
  HEALTH_SIGNAL_CREATE_EXAMPLE,
  HEALTH_SIGNAL_CREATED_EXAMPLE,
  HEALTH_SIGNAL_EXAMPLE,
} from "../../contract/examples";
import { LifecycleStatusSchema } from "../accounts/schema";

/**
 * Risk bands of the churn-risk score (docs/api-contract.md §2.10): LOW below 25, MEDIUM 25–49, HIGH 50–74, CRITICAL 75
 * and above.
 */
export const RiskLevelSchema = z
  .enum(["LOW", "MEDIUM", "HIGH", "CRITICAL"])
  .describe("Risk band of the score: LOW < 25 ≤ MEDIUM < 50 ≤ HIGH < 75 ≤ CRITICAL.");

/** A risk band. */
export type RiskLevel = z.infer<typeof RiskLevelSchema>;

/** Severity of an external churn-risk signal (docs/api-contract.md §4.7). */
export const SignalSeveritySchema = z
  .enum(["LOW", "MEDIUM", "HIGH", "CRITICAL"])
  .describe("Severity as the sending system rates it; informative only: the numeric score is what counts.");

/** Keys of the five scored signals, in the order the breakdown lists them. */
export const HEALTH_SIGNAL_KEYS = ["devices", "engagement", "pipeline", "service", "external"] as const;

/**
 * Days of score history `GET /health-scores/{accountId}` answers: one point per UTC day, ending today
 * (docs/api-contract.md §2.10).
 */
export const HISTORY_DAYS = 90;

/**
 * Most external signals `GET /health-scores/{accountId}` lists (the most recent by occurredAt); the score counts every
 * active one, and the external signal's `inputs.activeSignals` gives their number (docs/architecture.md,
 * "Health scores").
 */
export const EXTERNAL_SIGNALS_LISTED_MAX = 100;

/**
 * One line of the score breakdown (docs/api-contract.md §2.10): a signal's risk `value` (0–100), its `weight` (percent
 * of the score) and its `contribution` = weight × value / 100. The contributions add up to the score (before rounding
 * it to an integer).
 */
export const HealthScoreSignalSchema = z
  .object({
    key: z
      .enum(HEALTH_SIGNAL_KEYS)
      .describe(
        "devices (RMM device health), engagement (days since the last touchpoint), pipeline (open renewals, recently lost deals), service (overdue tasks), external (pushed signals).",
      ),
    label: z.string().max(100).describe("Human-readable name of the signal."),
    weight: z
      .int()
      .min(0)
      .max(100)
      .describe("Share of the score this signal can reach, in percent; the five weights add up to 100."),
    value: z.number().min(0).max(100).describe("Risk measured by this signal, 0 (none) to 100 (maximum), 2 decimals."),
    contribution: z
      .number()
      .min(0)
      .max(100)
      .describe("Points this signal adds to the score: weight × value / 100, 2 decimals."),
    detail: z.string().max(1_000).describe("What the value is made of, in words."),
    inputs: z
      .record(z.string().max(64), z.union([z.number(), z.string().max(DATE_TIME_MAX_LENGTH), z.null()]))
      .describe(
        "The raw figures behind the value, e.g. {total, offline, endOfLife, notPatchCompliant} for devices, {daysSinceLastTouchpoint, lastTouchpointAt} for engagement, {openRenewals, lostDealsLast90Days} for pipeline, {overdueTasks} for service, {activeSignals} for external.",
      ),
  })
  .meta({ id: "HealthScoreSignal" });

/** One line of the score breakdown. */
export type HealthScoreSignal = z.infer<typeof HealthScoreSignalSchema>;

/** An external churn-risk signal as stored (docs/api-contract.md §4.7). */
export const ExternalSignalSchema = z
  .object({
    id: IdSchema,
    accountId: IdSchema.describe("The account the signal is about."),
    source: z.string().max(100).describe("System that sent the signal, e.g. psa, nps-survey."),
    type: z.string().max(100).describe("Kind of signal in the sender's terms, e.g. ticket_escalation, low_nps."),
    severity: SignalSeveritySchema,
    score: z.int().min(0).max(100).describe("Churn risk the signal stands for, 0 to 100."),
    message: z.string().max(2_000).nullable().describe("Free-text explanation; null when none was sent."),
    occurredAt: TimestampSchema.describe("When the signal was observed (ISO 8601 UTC)."),
    expiresAt: TimestampSchema.describe("When the signal stops counting (ISO 8601 UTC)."),
    createdAt: TimestampSchema.describe("When the signal was received (ISO 8601 UTC)."),
    active: z.boolean().describe("true while the signal counts in the score: expiresAt is later than now."),
  })
  .meta({ id: "HealthSignal", example: HEALTH_SIGNAL_EXAMPLE });

/** An external signal as returned by the API. */
export type ExternalSignal = z.infer<typeof ExternalSignalSchema>;

/** One day of the 90-day score history. */
export const HealthHistoryPointSchema = z.object({
  date: DateSchema.describe("UTC calendar day, YYYY-MM-DD."),
  score: z
    .int()
    .min(0)
    .max(100)
    .nullable()
    .describe(
      "Score recorded that day, or the last score recorded before it when none was (carried forward); null before the account's first recorded score.",
    ),
});

const computedFields = {
  accountId: IdSchema.describe("The account."),
  accountName: z.string().max(255).describe("The account's name."),
  lifecycleStatus: LifecycleStatusSchema.describe("The account's lifecycle status (not an input of the score)."),
  score: z
    .int()
    .min(0)
    .max(100)
    .describe("Churn risk, 0 (healthy) to 100 (about to churn): the rounded sum of the contributions."),
  riskLevel: RiskLevelSchema,
  computedAt: TimestampSchema.describe(
    "When the score was computed: now for GET /health-scores/{accountId}; when it was stored for the list (see its staleness).",
  ),
  signals: z
    .array(HealthScoreSignalSchema)
    .max(HEALTH_SIGNAL_KEYS.length)
    .describe("The five scored signals in the order devices, engagement, pipeline, service, external."),
};

/** An account's churn-risk score as `GET /health-scores/{accountId}` returns it (docs/api-contract.md §2.10, §4.7). */
export const HealthScoreSchema = z
  .object({
    ...computedFields,
    externalSignals: z
      .array(ExternalSignalSchema)
      .max(EXTERNAL_SIGNALS_LISTED_MAX)
      .describe(
        `The active external signals (not expired), most recent occurredAt first, at most ${EXTERNAL_SIGNALS_LISTED_MAX}; the score counts every active signal (the external signal's inputs.activeSignals gives their number).`,
      ),
    history: z
      .array(HealthHistoryPointSchema)
      .max(HISTORY_DAYS)
      .describe(
        `Exactly ${HISTORY_DAYS} points, one per UTC day, oldest first, ending today (whose score is the current one).`,
      ),
  })
  .meta({ id: "HealthScore", example: HEALTH_SCORE_EXAMPLE });

/** A health score with breakdown and history. */
export type HealthScore = z.infer<typeof HealthScoreSchema>;

/** An item of `GET /health-scores`: the current score and breakdown, without history and signal list. */
export const HealthScoreSummarySchema = z
  .object(computedFields)
  .meta({ id: "HealthScoreSummary", example: HEALTH_SCORE_SUMMARY_EXAMPLE });

/** A list item of health scores. */
export type HealthScoreSummary = z.infer<typeof HealthScoreSummarySchema>;

/** Sortable fields of `GET /health-scores`: the stored score, and the account's name. */
export const HEALTH_SORT_FIELDS = {
  score: { nullable: false },
  accountName: { nullable: false },
} as const;

/** Default order of `GET /health-scores`: riskiest first. */
export const HEALTH_DEFAULT_SORT = [{ field: "score", direction: "desc" }] as const;

/**
 * Query of `GET /health-scores` (docs/api-contract.md §4.7, §4.9); `updatedAfter` does not apply to computed scores.
 */
export const HealthListQuerySchema = z.strictObject({
  limit: ListQueryBase.limit,
  cursor: ListQueryBase.cursor,
  sort: sortParam(Object.keys(HEALTH_SORT_FIELDS), "score:desc"),
  riskLevel: RiskLevelSchema.describe("Only accounts currently in this risk band.").optional(),
  lifecycle: LifecycleStatusSchema.describe("Only accounts with this lifecycle status.").optional(),
});

/** A validated health-score list query. */
export type HealthListQuery = z.infer<typeof HealthListQuerySchema>;

/** A page of health scores. */
export const HealthScoreListSchema = listOf(HealthScoreSummarySchema);

/** Path of `GET /health-scores/{accountId}`. */
export const HealthGetSchema = z.strictObject({ accountId: IdSchema });

/**
 * Body (plus path `accountId`) of `POST /health-scores/{accountId}/signals` (docs/api-contract.md §4.7). `occurredAt`
 * defaults to now and may not be more than 5 minutes ahead; `expiresAt` defaults to occurredAt + 30 days and must be
 * later than occurredAt. Unknown fields are refused (422).
 */
export const SignalCreateSchema = z
  .strictObject({
    accountId: IdSchema,
    source: z.string().trim().min(1).max(100).describe("System that sends the signal, 1 to 100 characters."),
    type: z.string().trim().min(1).max(100).describe("Kind of signal, 1 to 100 characters, e.g. low_nps."),
    severity: SignalSeveritySchema,
    score: z.int().min(0).max(100).describe("Churn risk the signal stands for, integer 0 to 100."),
    message: z.string().max(2000).nullable().optional().describe("Free-text explanation, up to 2,000 characters."),
    occurredAt: DateTimeInputSchema.describe(
      "When the signal was observed, ISO 8601 with a time zone; default now; at most 5 minutes in the future.",
    ).optional(),
    expiresAt: DateTimeInputSchema.describe(
      "When the signal stops counting, ISO 8601 with a time zone; default occurredAt + 30 days; must be later than occurredAt. A signal already expired is stored but never counts.",
    ).optional(),
  })
  .meta({ examples: [HEALTH_SIGNAL_CREATE_EXAMPLE] });

/** A validated signal push. */
export type SignalCreate = z.infer<typeof SignalCreateSchema>;

/** Response data of `POST /health-scores/{accountId}/signals`: the stored signal and the account's new score. */
export const SignalCreatedSchema = z
  .object({
    signal: ExternalSignalSchema,
    accountId: IdSchema.describe("The account."),
    score: z.int().min(0).max(100).describe("The account's churn risk after the signal, 0 to 100."),
    riskLevel: RiskLevelSchema,
    computedAt: TimestampSchema.describe("When the new score was computed."),
  })
  .meta({ id: "HealthSignalCreated", example: HEALTH_SIGNAL_CREATED_EXAMPLE });

/** The result of a signal push. */
export type SignalCreated = z.infer<typeof SignalCreatedSchema>;
