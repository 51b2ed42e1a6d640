import { z } from "zod";
import { TimestampSchema, UtcDateTimeInputSchema } from "../../contract/common";
import { USAGE_EXAMPLE } from "../../contract/examples";

/** Bucket widths of the usage figures, seconds by name (docs/api-contract.md §4.19). */
export const GRANULARITIES = { "30m": 1_800, "3h": 10_800, "12h": 43_200 } as const;

/** A bucket width of the usage figures: `30m`, `3h` or `12h`. */
export type Granularity = keyof typeof GRANULARITIES;

/** Longest range the usage figures and the CSV export cover: 90 days (docs/api-contract.md §4.19). */
export const USAGE_MAX_RANGE_MS = 90 * 24 * 60 * 60 * 1000;

/** Most buckets one answer holds (docs/api-contract.md §4.19). */
export const USAGE_MAX_BUCKETS = 1_000;

/**
 * Upper bounds of the latency bands the roll-up counts, ms (docs/architecture.md, "Usage: the roll-up, the chart and
 * the export"); a last band holds the slower requests.
 */
export const LATENCY_BANDS_MS = [5, 10, 25, 50, 75, 100, 150, 250, 500, 750, 1000, 2500, 5000, 10000, 30000] as const;

/**
 * The default bucket width for a range (docs/api-contract.md §4.19): up to 24 hours 30 minutes, up to 7 days 3 hours,
 * longer 12 hours.
 */
export function defaultGranularity(rangeMs: number): Granularity {
  if (rangeMs <= 24 * 60 * 60 * 1000) return "30m";
  if (rangeMs <= 7 * 24 * 60 * 60 * 1000) return "3h";
  return "12h";
}

const count = () => z.int().min(0);

/** Requests per status class (docs/api-contract.md §4.19); 1xx never occurs. */
export const StatusClassCountsSchema = z
  .object({
    "2xx": count().describe("Requests answered 200–299."),
    "3xx": count().describe("Requests answered 300–399 (304 for a matching If-None-Match)."),
    "4xx": count().describe("Requests refused 400–499."),
    "5xx": count().describe("Requests failed 500–599."),
  })
  .meta({ id: "UsageStatusClasses" });

/** Requests per status class. */
export type StatusClassCounts = z.infer<typeof StatusClassCountsSchema>;

const p95 = () =>
  z
    .int()
    .min(0)
    .nullable()
    .describe(
      `95th percentile of the time to answer, ms: the upper bound of the latency band holding it (bands end at ${LATENCY_BANDS_MS.join(", ")} ms), or the slowest request's time when that is lower; null without requests.`,
    );

/** One bucket of the usage figures (docs/api-contract.md §4.19). */
export const UsageBucketSchema = z
  .object({
    start: TimestampSchema.describe("Start of the bucket (included), a multiple of its width since the Unix epoch."),
    end: TimestampSchema.describe("End of the bucket (excluded)."),
    requests: count().describe("Requests answered in the bucket."),
    byStatusClass: StatusClassCountsSchema,
    p95Ms: p95(),
  })
  .meta({ id: "UsageBucket" });

/** One bucket of the usage figures. */
export type UsageBucket = z.infer<typeof UsageBucketSchema>;

/** An error code and how often it was answered (docs/api-contract.md §4.19). */
export const UsageErrorCountSchema = z
  .object({
    status: z.int().min(400).max(599).describe("HTTP status."),
    errorCode: z
      .string()
      .max(64)
      .nullable()
      .describe("Error code of the answer (see the error reference); null when none was recorded."),
    requests: count().describe("Requests answered with this status and code in the range."),
  })
  .meta({ id: "UsageErrorCount" });

/** `GET /usage` response data (docs/api-contract.md §4.19). */
export const UsageSeriesSchema = z
  .object({
    from: TimestampSchema.describe("Start of the first bucket: the requested from, rounded down to the granularity."),
    to: TimestampSchema.describe("End of the last bucket: the requested to, rounded up to the granularity."),
    granularity: z.enum(Object.keys(GRANULARITIES) as [Granularity, ...Granularity[]]).describe("Bucket width."),
    totals: z
      .object({
        requests: count().describe("Requests answered in the range."),
        byStatusClass: StatusClassCountsSchema,
        p95Ms: p95(),
      })
      .describe("The figures over the whole range."),
    topErrors: z
      .array(UsageErrorCountSchema)
      .max(5)
      .describe("The most frequent error answers (status ≥ 400) of the range, most frequent first, at most 5."),
    buckets: z
      .array(UsageBucketSchema)
      .max(USAGE_MAX_BUCKETS)
      .describe("Every bucket of the range, oldest first, empty ones included."),
  })
  .meta({ id: "UsageSeries", example: USAGE_EXAMPLE });

/** The usage figures of a range. */
export type UsageSeries = z.infer<typeof UsageSeriesSchema>;

/** Query of `GET /usage` (docs/api-contract.md §4.19). */
export const UsageQuerySchema = z.strictObject({
  from: UtcDateTimeInputSchema.describe(
    "Start of the range (ISO 8601 UTC), rounded down to the granularity; default: 24 hours before to.",
  ).optional(),
  to: UtcDateTimeInputSchema.describe(
    "End of the range (ISO 8601 UTC, excluded), rounded up to the granularity; default: now.",
  ).optional(),
  granularity: z
    .enum(Object.keys(GRANULARITIES) as [Granularity, ...Granularity[]])
    .describe("Bucket width: 30m, 3h or 12h; default: 30m up to 24 hours, 3h up to 7 days, 12h beyond.")
    .optional(),
});

/** Query of `GET /usage`. */
export type UsageQuery = z.infer<typeof UsageQuerySchema>;
