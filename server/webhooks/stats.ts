// What an operator reads about an endpoint's deliveries (docs/architecture.md, "Webhooks and the outbox"): delivery
// counts over time (succeeded, failed, filtered out) with the error rate and p95 attempt duration, the list of
// deliveries filtered and keyset-paged, one delivery with every attempt in full, and each endpoint's last 24 hours for
// the list of endpoints. Read by the settings area; every query is bounded by the endpoint and a time range.
import type { DeliveryStatus, Prisma } from "../db/generated/client";
import { prisma } from "../db/transaction";
import { ApiError, notFound } from "../errors";
import { eventPayload, eventRetentionMs, storedEventSelect } from "../platform/events-feed/service";
import { listPage } from "../records/pagination";
import { WEBHOOK_MAX_ATTEMPTS, WEBHOOK_RETRY_DELAYS_MS } from "./deliveries";
import type { AttemptTriggerName } from "./schema";
import { serializePayload, signedHeaders } from "./signing";

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

/** The fixed ranges of the statistics, with their bucket widths (ms): 24 h in 30 min, 7 d in 3 h, 30 d in 12 h. */
export const STATS_RANGES = {
  "24h": { rangeMs: DAY, bucketMs: 30 * MINUTE },
  "7d": { rangeMs: 7 * DAY, bucketMs: 3 * HOUR },
  "30d": { rangeMs: 30 * DAY, bucketMs: 12 * HOUR },
} as const;

/** One of {@link STATS_RANGES}. */
export type StatsRange = keyof typeof STATS_RANGES;

// Bucket widths a custom range may get (each a multiple of the 30 minutes filtered events are counted in,
// FILTERED_BUCKET_MS of ./deliveries.ts), the
// smallest giving at most MAX_BUCKETS buckets; a custom range is at most a year.
const CUSTOM_BUCKETS_MS = [30 * MINUTE, HOUR, 3 * HOUR, 6 * HOUR, 12 * HOUR, DAY, 7 * DAY];
const MAX_BUCKETS = 60;
const CUSTOM_MAX_MS = 366 * DAY;

/** A time window cut into equal buckets aligned to UTC (half hours, 3 h from midnight, …). */
export interface StatsWindow {
  from: Date;
  to: Date;
  bucketMs: number;
}

/**
 * The window of a fixed range ending with the bucket that holds `now` (so the last bucket is the current one), or of a
 * custom `from`–`to` widened to whole buckets of the smallest width giving at most 60 of them.
 * @throws ApiError `validation_error` (422) for a custom range that is empty, reversed or longer than a year.
 */
export function statsWindow(range: StatsRange | { from: Date; to: Date }, now = new Date()): StatsWindow {
  const align = (time: number, bucketMs: number, up: boolean) =>
    (up ? Math.ceil(time / bucketMs) : Math.floor(time / bucketMs)) * bucketMs;
  if (typeof range === "string") {
    const { rangeMs, bucketMs } = STATS_RANGES[range];
    const to = align(now.getTime() + 1, bucketMs, true);
    return { from: new Date(to - rangeMs), to: new Date(to), bucketMs };
  }
  const span = range.to.getTime() - range.from.getTime();
  if (!Number.isFinite(span) || span <= 0 || span > CUSTOM_MAX_MS) {
    throw new ApiError("validation_error", "The range must end after it starts and span at most 366 days", {
      details: [{ path: ["to"], message: "must be after from, at most 366 days later" }],
    });
  }
  const bucketMs =
    CUSTOM_BUCKETS_MS.find((width) => Math.ceil(span / width) <= MAX_BUCKETS) ?? (CUSTOM_BUCKETS_MS.at(-1) as number);
  const from = align(range.from.getTime(), bucketMs, false);
  const to = Math.max(align(range.to.getTime(), bucketMs, true), from + bucketMs);
  return { from: new Date(from), to: new Date(to), bucketMs };
}

/** One bucket of {@link endpointStats}. */
export interface StatsBucket {
  start: Date;
  /** Deliveries made in the bucket (by the time of their fan-out) that ended succeeded. */
  succeeded: number;
  /** ...that ended failed (all attempts failed, a 410, or closed because the endpoint was disabled). */
  failed: number;
  /** ...still being retried. */
  pending: number;
  /** Events the endpoint's `changedFields` filter dropped in the bucket: no delivery was made. */
  filtered: number;
  /** failed / (succeeded + failed), in percent; null without a finished delivery. */
  errorRate: number | null;
  /** 95th percentile of the duration of the bucket's deliveries' attempts, ms; null without an attempt. */
  p95Ms: number | null;
}

/** The statistics of one endpoint over a window. */
export interface EndpointStats extends StatsWindow {
  buckets: StatsBucket[];
  totals: Omit<StatsBucket, "start"> & { attempts: number };
}

const rate = (failed: number, succeeded: number) =>
  failed + succeeded === 0 ? null : Math.round((failed / (failed + succeeded)) * 1000) / 10;

/**
 * An endpoint's deliveries over `window`, per bucket and in total (docs/architecture.md, "Webhooks and the outbox"):
 * deliveries by state (bucketed by when they were made), events filtered out, the error rate and the p95 of the
 * attempts of those deliveries (redeliveries and replays included). Three grouped queries over the endpoint's
 * deliveries in the window, their attempts, and its filtered counts.
 * @throws ApiError `not_found` (404) for an endpoint missing or of another organisation.
 */
export async function endpointStats(orgId: string, endpointId: string, window: StatsWindow): Promise<EndpointStats> {
  const endpoint = await prisma().webhookEndpoint.findFirst({ where: { orgId, id: endpointId }, select: { id: true } });
  if (!endpoint) throw notFound("Webhook endpoint", endpointId);
  const width = `${window.bucketMs / MINUTE} minutes`;
  const [deliveries, attempts, filtered] = await Promise.all([
    prisma().$queryRaw<Array<{ start: Date; status: DeliveryStatus; count: number }>>`
      SELECT date_bin(${width}::interval, d."createdAt", TIMESTAMP '2000-01-01') AS "start", d."status",
             count(*)::int AS "count"
      FROM "WebhookDelivery" AS d
      WHERE d."orgId" = ${orgId} AND d."endpointId" = ${endpointId}
        AND d."createdAt" >= ${window.from} AND d."createdAt" < ${window.to}
      GROUP BY 1, 2`,
    prisma().$queryRaw<Array<{ start: Date | null; p95: number | null; attempts: number }>>`
      SELECT date_bin(${width}::interval, d."createdAt", TIMESTAMP '2000-01-01') AS "start",
             percentile_cont(0.95) WITHIN GROUP (ORDER BY a."durationMs")::float8 AS "p95",
             count(*)::int AS "attempts"
      FROM "WebhookDelivery" AS d JOIN "DeliveryAttempt" AS a ON a."deliveryId" = d."id"
      WHERE d."orgId" = ${orgId} AND d."endpointId" = ${endpointId}
        AND d."createdAt" >= ${window.from} AND d."createdAt" < ${window.to}
      GROUP BY GROUPING SETS ((1), ())`,
    prisma().$queryRaw<Array<{ start: Date; count: number }>>`
      SELECT date_bin(${width}::interval, "bucket", TIMESTAMP '2000-01-01') AS "start", sum("count")::int AS "count"
      FROM "WebhookFilteredCount"
      WHERE "endpointId" = ${endpointId} AND "bucket" >= ${window.from} AND "bucket" < ${window.to}
      GROUP BY 1`,
  ]);
  const buckets: StatsBucket[] = [];
  const index = new Map<number, StatsBucket>();
  for (let start = window.from.getTime(); start < window.to.getTime(); start += window.bucketMs) {
    const bucket: StatsBucket = {
      start: new Date(start),
      succeeded: 0,
      failed: 0,
      pending: 0,
      filtered: 0,
      errorRate: null,
      p95Ms: null,
    };
    buckets.push(bucket);
    index.set(start, bucket);
  }
  for (const row of deliveries) {
    const bucket = index.get(row.start.getTime());
    if (!bucket) continue;
    if (row.status === "SUCCEEDED") bucket.succeeded += row.count;
    else if (row.status === "FAILED") bucket.failed += row.count;
    else bucket.pending += row.count;
  }
  for (const row of filtered) {
    const bucket = index.get(row.start.getTime());
    if (bucket) bucket.filtered += row.count;
  }
  let total = { p95Ms: null as number | null, attempts: 0 };
  for (const row of attempts) {
    const p95 = row.p95 === null ? null : Math.round(row.p95);
    if (row.start === null) total = { p95Ms: p95, attempts: row.attempts };
    else {
      const bucket = index.get(row.start.getTime());
      if (bucket) bucket.p95Ms = p95;
    }
  }
  for (const bucket of buckets) bucket.errorRate = rate(bucket.failed, bucket.succeeded);
  const sum = (key: "succeeded" | "failed" | "pending" | "filtered") =>
    buckets.reduce((acc, bucket) => acc + bucket[key], 0);
  const totals = {
    succeeded: sum("succeeded"),
    failed: sum("failed"),
    pending: sum("pending"),
    filtered: sum("filtered"),
    errorRate: rate(sum("failed"), sum("succeeded")),
    ...total,
  };
  return { ...window, buckets, totals };
}

/** A delivery's state as the settings area names it. */
export type DeliveryState = "pending" | "succeeded" | "failed";

const STATES: Record<DeliveryStatus, DeliveryState> = { PENDING: "pending", SUCCEEDED: "succeeded", FAILED: "failed" };

/** One delivery in the list: its event, state and last attempt. */
export interface DeliverySummary {
  /** `whd_<24 hex>`: also the paging cursor. */
  id: string;
  eventId: string;
  event: string;
  status: DeliveryState;
  attempts: number;
  createdAt: Date;
  completedAt: Date | null;
  lastAttempt: {
    startedAt: Date;
    responseStatus: number | null;
    success: boolean;
    durationMs: number;
    error: string | null;
    trigger: AttemptTriggerName;
  } | null;
}

const summarySelect = {
  id: true,
  eventId: true,
  status: true,
  attemptCount: true,
  createdAt: true,
  completedAt: true,
  event: { select: { name: true } },
  attempts: {
    orderBy: { id: "desc" },
    take: 1,
    select: { startedAt: true, responseStatus: true, success: true, durationMs: true, error: true, trigger: true },
  },
} as const satisfies Prisma.WebhookDeliverySelect;

/**
 * An endpoint's deliveries, newest first (by when they were made), keyset-paged over `(createdAt, id)`
 * (docs/api-contract.md §4.9.1), optionally only one state and one event name.
 * @param query.limit 1–100; `cursor` the `nextCursor` of the previous page.
 * @throws ApiError `not_found` (404) for an endpoint missing or of another organisation; `bad_request` (400) for a cursor
 *         that names no delivery of it.
 */
export async function listDeliveries(
  orgId: string,
  endpointId: string,
  query: { status?: DeliveryState; event?: string; limit: number; cursor?: string },
): Promise<{ data: DeliverySummary[]; hasMore: boolean; nextCursor: string | null }> {
  const endpoint = await prisma().webhookEndpoint.findFirst({ where: { orgId, id: endpointId }, select: { id: true } });
  if (!endpoint) throw notFound("Webhook endpoint", endpointId);
  const scope = { orgId, endpointId };
  const filters: Prisma.WebhookDeliveryWhereInput[] = [scope];
  if (query.status) filters.push({ status: query.status.toUpperCase() as DeliveryStatus });
  if (query.event) filters.push({ event: { name: query.event } });
  return listPage({
    query: { limit: query.limit, cursor: query.cursor },
    fields: { createdAt: { nullable: false } },
    defaultSort: [{ field: "createdAt", direction: "desc" }],
    filters: filters as Array<Record<string, unknown>>,
    findCursor: (cursor) =>
      prisma().webhookDelivery.findFirst({ where: { ...scope, id: cursor }, select: { id: true, createdAt: true } }),
    findMany: (args) =>
      prisma().webhookDelivery.findMany({ ...(args as Prisma.WebhookDeliveryFindManyArgs), select: summarySelect }),
    map: (row): DeliverySummary => {
      const last = row.attempts[0];
      return {
        id: row.id,
        eventId: row.eventId,
        event: row.event.name,
        status: STATES[row.status],
        attempts: row.attemptCount,
        createdAt: row.createdAt,
        completedAt: row.completedAt,
        lastAttempt: last ? { ...last, trigger: last.trigger.toLowerCase() as AttemptTriggerName } : null,
      };
    },
  });
}

/** One attempt in full: what was sent and what came back. */
export interface AttemptDetail {
  attemptId: string;
  attempt: number;
  startedAt: Date;
  trigger: AttemptTriggerName;
  replayId: string | null;
  /**
   * The URL it was POSTed to (the endpoint's URL at that moment); null for an attempt recorded before the service kept
   * it.
   */
  url: string | null;
  /** The request's headers as sent, signatures not shown (they are HMACs of the secret of the time, not kept). */
  requestHeaders: Array<[string, string]>;
  responseStatus: number | null;
  /** The first 2,048 characters of the answer; null when none came. */
  responseBody: string | null;
  durationMs: number;
  success: boolean;
  error: string | null;
}

/** A delivery with its request and every attempt. */
export interface DeliveryDetail extends Omit<DeliverySummary, "lastAttempt" | "attempts"> {
  endpointId: string;
  /** The endpoint's URL now: where the next attempt goes. Each attempt names the URL it went to. */
  url: string;
  /** The body every attempt sent: the event's payload, the same bytes each time. */
  requestBody: string;
  /** Newest first. */
  attempts: AttemptDetail[];
  /** How many attempts were made. */
  attemptCount: number;
  /** When the next scheduled retry runs (about), for a pending delivery whose last scheduled attempt failed. */
  nextRetryAt: Date | null;
}

/** What replaces a signature in a shown request: the secret never leaves the server, not even as its HMAC. */
export const SIGNATURE_NOT_SHOWN = "(HMAC-SHA256 with the signing secret, not shown)";

/**
 * The headers an attempt sent (docs/api-contract.md §6.3), rebuilt from the event and the attempt's second (each
 * attempt is signed at its start): every header as sent, the signatures replaced by {@link SIGNATURE_NOT_SHOWN}.
 */
function requestHeaders(body: string, eventId: string, eventName: string, startedAt: Date): Array<[string, string]> {
  const timestamp = Math.floor(startedAt.getTime() / 1000);
  const headers = signedHeaders({ body, eventId, eventName, secrets: ["whsec_"], timestamp });
  headers["Service-Signature"] = `t=${timestamp},v1=${SIGNATURE_NOT_SHOWN}`;
  headers["X-MSP-Signature"] = SIGNATURE_NOT_SHOWN;
  headers["webhook-signature"] = `v1,${SIGNATURE_NOT_SHOWN}`;
  headers["Content-Length"] = String(Buffer.byteLength(body, "utf8"));
  return Object.entries(headers);
}

/**
 * One delivery of the organisation with every attempt in full (docs/architecture.md, "Webhooks and the outbox"): the
 * request (method, URL, headers without signatures, the body), each answer's status and first 2,048 characters, the
 * duration, the error, what made the attempt, and when the next retry runs.
 * @throws ApiError `not_found` (404) for a delivery missing or of another organisation.
 */
export async function getDeliveryDetail(orgId: string, deliveryId: string): Promise<DeliveryDetail> {
  const row = await prisma().webhookDelivery.findFirst({
    where: { orgId, id: deliveryId },
    select: {
      id: true,
      eventId: true,
      endpointId: true,
      status: true,
      attemptCount: true,
      createdAt: true,
      completedAt: true,
      endpoint: { select: { url: true } },
      event: { select: storedEventSelect },
      attempts: {
        orderBy: { id: "desc" },
        select: {
          id: true,
          attempt: true,
          startedAt: true,
          trigger: true,
          replayId: true,
          url: true,
          responseStatus: true,
          responseBody: true,
          durationMs: true,
          success: true,
          error: true,
        },
      },
    },
  });
  if (!row) throw notFound("Webhook delivery", deliveryId);
  const body = serializePayload(eventPayload(row.event));
  const attempts = row.attempts.map(
    (attempt): AttemptDetail => ({
      attemptId: attempt.id.toString(),
      attempt: attempt.attempt,
      startedAt: attempt.startedAt,
      trigger: attempt.trigger.toLowerCase() as AttemptTriggerName,
      replayId: attempt.replayId,
      url: attempt.url,
      requestHeaders: requestHeaders(body, row.event.id, row.event.name, attempt.startedAt),
      responseStatus: attempt.responseStatus,
      responseBody: attempt.responseBody,
      durationMs: attempt.durationMs,
      success: attempt.success,
      error: attempt.error,
    }),
  );
  const scheduled = attempts.filter((attempt) => attempt.trigger === "scheduled");
  const lastScheduled = scheduled[0];
  const nextRetryAt =
    row.status === "PENDING" && lastScheduled && !lastScheduled.success && scheduled.length < WEBHOOK_MAX_ATTEMPTS
      ? new Date(
          lastScheduled.startedAt.getTime() +
            lastScheduled.durationMs +
            (WEBHOOK_RETRY_DELAYS_MS[scheduled.length - 1] ?? 0),
        )
      : null;
  return {
    id: row.id,
    eventId: row.eventId,
    event: row.event.name,
    status: STATES[row.status],
    attempts,
    attemptCount: row.attemptCount,
    createdAt: row.createdAt,
    completedAt: row.completedAt,
    endpointId: row.endpointId,
    url: row.endpoint.url,
    requestBody: body,
    nextRetryAt,
  };
}

/** An endpoint's last 24 hours, for the list of endpoints. */
export interface EndpointHealth {
  /** Finished deliveries of the last 24 h. */
  succeeded: number;
  failed: number;
  /** succeeded / (succeeded + failed), in percent; null without a finished delivery. */
  successRate: number | null;
  /** The last failed attempt, whenever it was (within the delivery log's retention). */
  lastFailure: { at: Date; responseStatus: number | null; error: string | null } | null;
}

/**
 * Each endpoint's deliveries of the last 24 hours and its last failed attempt (docs/architecture.md, "Webhooks and the
 * outbox"), for every endpoint of the organisation in two queries.
 * @returns a map from endpoint id; endpoints without deliveries have zero counts and no failure.
 */
export async function endpointsHealth(orgId: string, now = new Date()): Promise<Map<string, EndpointHealth>> {
  const since = new Date(now.getTime() - DAY);
  const [counts, failures] = await Promise.all([
    prisma().$queryRaw<Array<{ endpointId: string; succeeded: number; failed: number }>>`
      SELECT "endpointId", count(*) FILTER (WHERE "status" = 'SUCCEEDED')::int AS "succeeded",
             count(*) FILTER (WHERE "status" = 'FAILED')::int AS "failed"
      FROM "WebhookDelivery"
      WHERE "orgId" = ${orgId} AND "createdAt" >= ${since}
      GROUP BY "endpointId"`,
    prisma().$queryRaw<Array<{ endpointId: string; at: Date; responseStatus: number | null; error: string | null }>>`
      SELECT w."id" AS "endpointId", f."startedAt" AS "at", f."responseStatus", f."error"
      FROM "WebhookEndpoint" AS w
      JOIN LATERAL (
        SELECT a."startedAt", a."responseStatus", a."error"
        FROM "WebhookDelivery" AS d JOIN "DeliveryAttempt" AS a ON a."deliveryId" = d."id"
        WHERE d."orgId" = ${orgId} AND d."endpointId" = w."id" AND NOT a."success"
        ORDER BY a."startedAt" DESC LIMIT 1
      ) AS f ON true
      WHERE w."orgId" = ${orgId}`,
  ]);
  const health = new Map<string, EndpointHealth>();
  const entry = (id: string) => {
    let value = health.get(id);
    if (!value) {
      value = { succeeded: 0, failed: 0, successRate: null, lastFailure: null };
      health.set(id, value);
    }
    return value;
  };
  for (const row of counts) {
    const value = entry(row.endpointId);
    value.succeeded = row.succeeded;
    value.failed = row.failed;
    value.successRate = rate(row.succeeded, row.failed);
  }
  for (const row of failures)
    entry(row.endpointId).lastFailure = { at: row.at, responseStatus: row.responseStatus, error: row.error };
  return health;
}

/**
 * Deletes what the operator views keep past the events' retention (30 days by default): filtered-out counts, replays
 * that have ended (with their items) and resolved alerts. Runs daily with the events' purge.
 * @returns how many rows of each it deleted.
 */
export async function purgeWebhookHistory(
  now = new Date(),
): Promise<{ filtered: number; replays: number; alerts: number }> {
  const before = new Date(now.getTime() - eventRetentionMs());
  const [filtered, replays, alerts] = await Promise.all([
    prisma().webhookFilteredCount.deleteMany({ where: { bucket: { lt: before } } }),
    prisma().webhookReplay.deleteMany({ where: { status: { not: "RUNNING" }, finishedAt: { lt: before } } }),
    prisma().webhookAlert.deleteMany({ where: { resolvedAt: { lt: before } } }),
  ]);
  return { filtered: filtered.count, replays: replays.count, alerts: alerts.count };
}
