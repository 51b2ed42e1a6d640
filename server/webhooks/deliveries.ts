// Webhook deliveries (docs/api-contract.md §6, docs/architecture.md, "Webhooks and the outbox"): fan-out of outbox
// events, signed attempts, their history, redelivery, and what the sweeper picks up. The Inngest functions in
// inngest/functions/ only call these.
import { randomBytes } from "node:crypto";
import { type AttemptTrigger, type DeliveryStatus, Prisma } from "../db/generated/client";
import { afterCommit, outsideTransaction, prisma, transaction } from "../db/transaction";
import { env } from "../env";
import { ApiError, notFound } from "../errors";
import { type AuditActor, recordSettingsAudit } from "../identity/audit-trail/service";
import { recordDeliveryAttempt } from "../observability/metrics";
import { clientSpan } from "../observability/requests";
import { EVENT_NAMES } from "../platform/events-feed/schema";
import { eventPayload, storedEventSelect } from "../platform/events-feed/service";
import { recordEvents, type WriteOrigin } from "../records/events";
import { listPage } from "../records/pagination";
import { mailAlert, openEndpointDisabledAlert } from "./alerts";
import { toDisabledView, toView, viewSelect } from "./endpoint-view";
import type { AttemptTriggerName } from "./schema";
import { serializePayload, signedHeaders } from "./signing";
import { changedFieldsPassSql, subscriptionMatchesSql } from "./subscriptions";
import { postWebhook } from "./transport";
import { UNDISPATCHED_MAX_AGE_MS } from "./worker";

/** Attempts per delivery (docs/api-contract.md §6.5, §8): the first one and 4 retries. */
export const WEBHOOK_MAX_ATTEMPTS = 5;
/**
 * Wait before retry n+1 after failed attempt n (ms), exponential backoff (docs/api-contract.md §6.5): 1 min, 5 min, 30
 * min, 2 h. The last attempt comes about 2 h 36 min after the first.
 */
export const WEBHOOK_RETRY_DELAYS_MS = [60_000, 5 * 60_000, 30 * 60_000, 2 * 60 * 60_000] as const;
/**
 * Deliveries in a row that ended failed (all {@link WEBHOOK_MAX_ATTEMPTS} attempts) after which an endpoint is disabled
 * (docs/api-contract.md §6.5 "fails 5 consecutive times"). Counted per delivery, not per attempt, so a receiver that is
 * down for a minute during a burst is not disabled; any successful attempt resets the count.
 */
export const WEBHOOK_DISABLE_AFTER_FAILED_DELIVERIES = 5;
/** Reason recorded when a receiver answers 410 Gone: the endpoint is disabled at once. */
export const DISABLED_GONE = "the receiver answered 410 Gone";

const EVENT_NAME_SET = new Set<string>(EVENT_NAMES);

/** A new delivery id, `whd_<24 hex>`. */
export function newDeliveryId(): string {
  return `whd_${randomBytes(12).toString("hex")}`;
}

/** A delivery to request from Inngest: one event to one endpoint. */
export interface DeliveryRef {
  deliveryId: string;
  endpointId: string;
  orgId: string;
}

/** Width of the buckets events dropped by an endpoint's `changedFields` filter are counted in (ms): 30 minutes. */
export const FILTERED_BUCKET_MS = 30 * 60_000;

/**
 * Fans outbox events out (docs/architecture.md, "Webhooks and the outbox"), set-based whatever their number: on an
 * event's first run, one PENDING `WebhookDelivery` per enabled endpoint of its organisation whose subscription takes
 * it (its name, `<resource>.*` or `*`) and whose `changedFields` filter passes it (unique on `(endpointId, eventId)`),
 * one count per endpoint in `WebhookFilteredCount` (30-minute bucket of now) for those the filter dropped, and
 * `Event.fannedOutAt` set; later runs create nothing (the endpoints are those of the first run). Test-key events
 * (docs/api-contract.md §5.6), the settings area's test events, seed events and unknown ids get no deliveries. Three
 * statements in one transaction, so a batch of 100 events costs about what one does.
 * @returns the deliveries of these events that still await their first attempt: all new ones, and on a re-run those
 *          not yet started, so requesting them again is safe (Inngest drops repeated delivery events by id).
 */
export async function fanOutEvents(eventIds: readonly string[]): Promise<DeliveryRef[]> {
  if (eventIds.length === 0) return [];
  return transaction(async (tx) => {
    const fresh = await tx.$queryRaw<Array<{ id: string }>>`
      SELECT "id" FROM "Event"
      WHERE "id" = ANY(${eventIds}::text[]) AND "fannedOutAt" IS NULL AND "isTest" = false AND "name" = ANY(${[...EVENT_NAME_SET]}::text[])
      ORDER BY "id" FOR UPDATE`;
    const freshIds = fresh.map((row) => row.id);
    if (freshIds.length > 0) {
      await tx.$executeRaw`
        WITH "candidate" AS (
          SELECT e."orgId", e."id" AS "eventId", w."id" AS "endpointId",
                 ${changedFieldsPassSql(Prisma.sql`w."changedFields"`, Prisma.sql`e."name"`, Prisma.sql`e."changedFields"`)} AS "wanted"
          FROM "Event" AS e
          JOIN "WebhookEndpoint" AS w
            ON w."orgId" = e."orgId" AND w."enabled" AND ${subscriptionMatchesSql(Prisma.sql`w."events"`, Prisma.sql`e."name"`)}
          WHERE e."id" = ANY(${freshIds}::text[])
        ), "delivered" AS (
          INSERT INTO "WebhookDelivery" ("id", "orgId", "endpointId", "eventId", "createdAt", "updatedAt")
          SELECT 'whd_' || substr(replace(gen_random_uuid()::text, '-', ''), 1, 24), "orgId", "endpointId", "eventId",
                 now() AT TIME ZONE 'UTC', now() AT TIME ZONE 'UTC'
          FROM "candidate" WHERE "wanted"
          ON CONFLICT ("endpointId", "eventId") DO NOTHING
        )
        INSERT INTO "WebhookFilteredCount" ("endpointId", "bucket", "count")
        SELECT "endpointId", date_bin(${`${FILTERED_BUCKET_MS / 60_000} minutes`}::interval, now() AT TIME ZONE 'UTC', TIMESTAMP '2000-01-01'),
               count(*)::int
        FROM "candidate" WHERE NOT "wanted"
        GROUP BY "endpointId"
        ON CONFLICT ("endpointId", "bucket") DO UPDATE SET "count" = "WebhookFilteredCount"."count" + EXCLUDED."count"`;
      await tx.$executeRaw`
        UPDATE "Event" SET "fannedOutAt" = now() AT TIME ZONE 'UTC' WHERE "id" = ANY(${freshIds}::text[])`;
    }
    const pending = await tx.webhookDelivery.findMany({
      where: { eventId: { in: [...eventIds] }, status: "PENDING", attemptCount: 0 },
      select: { id: true, endpointId: true, orgId: true },
      orderBy: { id: "asc" },
    });
    return pending.map((row) => ({ deliveryId: row.id, endpointId: row.endpointId, orgId: row.orgId }));
  });
}

/**
 * How an attempt is made:
 * - `scheduled`: one of the 5 attempts of the retry schedule (Inngest). Skipped unless the delivery is PENDING and the
 *   endpoint enabled (a disabled endpoint's pending delivery is closed FAILED without a request). `final` marks the
 *   5th: its failure closes the delivery FAILED and counts against the endpoint (docs/api-contract.md §6.5).
 * - `manual`: a redelivery asked for by a user: made whatever the state; success marks the delivery SUCCEEDED,
 *   failure changes nothing and does not count against the endpoint.
 * - `single`: the settings area's test event: like `manual`, and the delivery is closed SUCCEEDED or FAILED.
 * - `replay`: one delivery of a replay (docs/api-contract.md §6.10): made whatever the state, recorded with the replay's
 *   id; success marks the delivery SUCCEEDED, a failure closes a delivery the replay made FAILED and does not count
 *   against the endpoint (410 Gone still disables it). `turn` is awaited right before the request is signed and sent
 *   (the replay's pacing).
 */
export type AttemptMode =
  | { mode: "scheduled"; final: boolean }
  | { mode: "manual" }
  | { mode: "single" }
  | { mode: "replay"; replayId: string; turn?: () => Promise<void> };

const TRIGGERS: Record<AttemptMode["mode"], AttemptTrigger> = {
  scheduled: "SCHEDULED",
  manual: "MANUAL",
  single: "TEST",
  replay: "REPLAY",
};

/** What {@link attemptDelivery} did. */
export interface AttemptResult {
  /** Set when no request was made: `not found`, `already SUCCEEDED`/`already FAILED`, `endpoint disabled`. */
  skipped: string | null;
  success: boolean;
  /** HTTP status of the answer; null when none came or nothing was sent. */
  responseStatus: number | null;
  error: string | null;
  /** 1-based number of this attempt within the delivery (manual ones included); 0 when skipped. */
  attempt: number;
  /** The receiver answered 410 Gone: the endpoint was disabled and no retry follows. */
  gone: boolean;
  /** This attempt made the endpoint disabled (410, or the consecutive-failure rule). */
  endpointDisabled: boolean;
}

const skipped = (reason: string): AttemptResult => ({
  skipped: reason,
  success: false,
  responseStatus: null,
  error: null,
  attempt: 0,
  gone: false,
  endpointDisabled: false,
});

/**
 * Makes one signed attempt of a delivery and records it (docs/api-contract.md §6.2–6.5, docs/architecture.md,
 * "Webhooks and the outbox"): builds the payload `{id, event, timestamp, orgId, data}` from the outbox row (the same
 * event id on every attempt), signs those exact bytes with the current secret and, within 24 h of a rotation, the
 * previous one, POSTs through the SSRF filter (10 s, no redirects; only 2xx is success), stores a `DeliveryAttempt`
 * (status, first 2,048 characters of the body, error, duration), and updates the delivery and the endpoint: success
 * resets `consecutiveFailures`; 410 Gone disables the endpoint at once; a failed final scheduled attempt closes the
 * delivery FAILED, counts one failed delivery and disables the endpoint at {@link
 * WEBHOOK_DISABLE_AFTER_FAILED_DELIVERIES}. Runs outside any request transaction (a request could roll back an attempt
 * that was made); never throws for receiver failures, only for database ones.
 */
export function attemptDelivery(deliveryId: string, how: AttemptMode): Promise<AttemptResult> {
  return outsideTransaction(() => attempt(deliveryId, how));
}

async function attempt(deliveryId: string, how: AttemptMode): Promise<AttemptResult> {
  const delivery = await prisma().webhookDelivery.findUnique({
    where: { id: deliveryId },
    select: {
      status: true,
      endpoint: {
        select: {
          id: true,
          url: true,
          enabled: true,
          secret: true,
          previousSecret: true,
          previousSecretExpiresAt: true,
        },
      },
      event: { select: storedEventSelect },
    },
  });
  if (!delivery) return skipped("not found");
  const { endpoint, event } = delivery;
  if (how.mode === "scheduled") {
    if (delivery.status !== "PENDING") return skipped(`already ${delivery.status}`);
    if (!endpoint.enabled) {
      await prisma().webhookDelivery.updateMany({
        where: { id: deliveryId, status: "PENDING" },
        data: { status: "FAILED", completedAt: new Date() },
      });
      return skipped("endpoint disabled");
    }
  }

  if (how.mode === "replay") await how.turn?.();
  const now = new Date();
  const secrets = [endpoint.secret];
  if (endpoint.previousSecret && endpoint.previousSecretExpiresAt && endpoint.previousSecretExpiresAt > now)
    secrets.push(endpoint.previousSecret);
  const body = serializePayload(eventPayload(event));
  const headers = signedHeaders({
    body,
    eventId: event.id,
    eventName: event.name,
    secrets,
    timestamp: Math.floor(now.getTime() / 1000),
  });
  const outcome = await clientSpan(
    "webhook.delivery_attempt",
    {
      "crm.webhook.delivery_id": deliveryId,
      "crm.webhook.endpoint_id": endpoint.id,
      "crm.event.id": event.id,
      "crm.event.name": event.name,
      "crm.webhook.mode": how.mode,
      "http.request.method": "POST",
      // The receiver's host only: its URL's path and query may hold the receiver's own credentials.
      "server.address": URL.parse(endpoint.url)?.hostname ?? "",
    },
    () => postWebhook(endpoint.url, body, headers, { allowLoopback: env().WEBHOOKS_ALLOW_LOOPBACK }),
    (posted) => ({
      attributes: {
        "crm.webhook.outcome": posted.result,
        ...(posted.status === null ? {} : { "http.response.status_code": posted.status }),
      },
      error: posted.success ? null : posted.error,
    }),
  );
  recordDeliveryAttempt({
    outcome: outcome.result,
    mode: how.mode,
    status: outcome.status,
    seconds: outcome.durationMs / 1000,
  });

  const gone = outcome.status === 410;
  const closesFailed =
    !outcome.success &&
    (gone || how.mode === "single" || how.mode === "replay" || (how.mode === "scheduled" && how.final));
  const countsAgainst = !outcome.success && !gone && how.mode === "scheduled" && how.final;
  const onlyIfPending = how.mode === "manual" || how.mode === "replay";
  let status: DeliveryStatus | undefined;
  if (outcome.success) status = "SUCCEEDED";
  else if (closesFailed && (!onlyIfPending || delivery.status === "PENDING")) status = "FAILED";

  return transaction(async (tx) => {
    const updated = await tx.webhookDelivery.update({
      where: { id: deliveryId },
      data: {
        attemptCount: { increment: 1 },
        ...(status ? { status, completedAt: new Date() } : {}),
      },
      select: { attemptCount: true },
    });
    await tx.deliveryAttempt.create({
      data: {
        deliveryId,
        attempt: updated.attemptCount,
        startedAt: now,
        url: endpoint.url,
        durationMs: outcome.durationMs,
        responseStatus: outcome.status,
        responseBody: outcome.body,
        error: outcome.error,
        success: outcome.success,
        trigger: TRIGGERS[how.mode],
        replayId: how.mode === "replay" ? how.replayId : null,
      },
    });
    let disabledReason: string | null = null;
    if (outcome.success) {
      await tx.webhookEndpoint.updateMany({
        where: { id: endpoint.id, consecutiveFailures: { gt: 0 } },
        data: { consecutiveFailures: 0 },
      });
    } else if (gone) {
      disabledReason = DISABLED_GONE;
    } else if (countsAgainst) {
      const counted = await tx.webhookEndpoint.update({
        where: { id: endpoint.id },
        data: { consecutiveFailures: { increment: 1 } },
        select: { consecutiveFailures: true, enabled: true },
      });
      if (counted.enabled && counted.consecutiveFailures >= WEBHOOK_DISABLE_AFTER_FAILED_DELIVERIES)
        disabledReason = `${counted.consecutiveFailures} consecutive deliveries failed after ${WEBHOOK_MAX_ATTEMPTS} attempts each (last: ${outcome.error ?? "failure"})`;
    }
    const endpointDisabled = disabledReason !== null && (await disableAfterFailures(tx, endpoint.id, disabledReason));
    return {
      skipped: null,
      success: outcome.success,
      responseStatus: outcome.status,
      error: outcome.error,
      attempt: updated.attemptCount,
      gone,
      endpointDisabled,
    };
  });
}

/**
 * The service disables an endpoint after failures (docs/api-contract.md §6.5), in the transaction of the attempt that
 * decided it, unless it is disabled already: records the `webhook_endpoint.disabled` event (data: the endpoint as its
 * GET returns it with `url` reduced to its `origin`, with `changedFields` and `previous`; actor: the system) and opens
 * the alert whose one mail goes out once the transaction has committed (docs/api-contract.md §6.11).
 * @returns whether this call disabled it.
 */
async function disableAfterFailures(
  tx: Prisma.TransactionClient,
  endpointId: string,
  reason: string,
): Promise<boolean> {
  const [before] = await tx.$queryRaw<Array<{ enabled: boolean }>>`
    SELECT "enabled" FROM "WebhookEndpoint" WHERE "id" = ${endpointId} FOR UPDATE`;
  if (!before?.enabled) return false;
  const previous = await tx.webhookEndpoint.findUniqueOrThrow({
    where: { id: endpointId },
    select: { ...viewSelect, orgId: true },
  });
  const after = await tx.webhookEndpoint.update({
    where: { id: endpointId },
    data: { enabled: false, disabledReason: reason, disabledAt: new Date() },
    select: viewSelect,
  });
  const { orgId, ...beforeRow } = previous;
  const data = toDisabledView(toView(after));
  await recordEvents(tx, orgId, { isTest: false }, [
    { name: "webhook_endpoint.disabled", data, before: toDisabledView(toView(beforeRow)) },
  ]);
  const alertId = await openEndpointDisabledAlert(tx, { id: endpointId, orgId, origin: data.origin }, reason);
  if (alertId !== null) await afterCommit(async () => void (await mailAlert(alertId)));
  return true;
}

/** One recorded attempt as the settings area lists it. */
export interface DeliveryAttemptView {
  /** Opaque, increasing with time. */
  attemptId: string;
  deliveryId: string;
  /** `evt_…`, the same on every attempt of the delivery. */
  eventId: string;
  /** Event name (docs/api-contract.md §6.1, or `webhook.test`). */
  event: string;
  /** 1-based number within the delivery, manual redeliveries included. */
  attempt: number;
  /**
   * The URL the attempt was POSTed to (the endpoint's URL then); null for attempts recorded before the service kept it.
   */
  url: string | null;
  /** HTTP status of the answer; null when none came (timeout, refused connection, SSRF filter). */
  responseStatus: number | null;
  success: boolean;
  durationMs: number;
  error: string | null;
  startedAt: Date;
  /** What made it: the retry schedule, a redelivery, a test event or a replay. */
  trigger: AttemptTriggerName;
  /** The replay that made it; null for every other attempt. */
  replayId: string | null;
}

/**
 * The attempts made to one endpoint, newest first, keyset-paged like every list: pass the previous page's
 * `nextCursor` as `cursor` while `hasMore`.
 * @param options.limit 1 to 100, default 50 (docs/api-contract.md §8 page size).
 * @throws ApiError `not_found` (404) for an endpoint missing or of another organisation; `bad_request` (400) for a
 *         malformed cursor; `validation_error` (422) for a limit out of range.
 */
export async function listDeliveryAttempts(
  orgId: string,
  endpointId: string,
  options: { cursor?: string | null; limit?: number } = {},
): Promise<{ data: DeliveryAttemptView[]; hasMore: boolean; nextCursor: string | null }> {
  const limit = options.limit ?? 50;
  if (!Number.isInteger(limit) || limit < 1 || limit > 100)
    throw new ApiError("validation_error", "limit must be an integer from 1 to 100", {
      details: [{ path: ["limit"], message: "must be an integer from 1 to 100" }],
    });
  const endpoint = await prisma().webhookEndpoint.findFirst({ where: { orgId, id: endpointId }, select: { id: true } });
  if (!endpoint) throw notFound("Webhook endpoint", endpointId);
  const scope = { delivery: { orgId, endpointId } };
  return listPage({
    query: { limit, cursor: options.cursor ?? undefined },
    fields: { id: { nullable: false } },
    defaultSort: [{ field: "id", direction: "desc" }],
    filters: [scope],
    findCursor: async (cursor) =>
      /^\d{1,19}$/.test(cursor)
        ? prisma().deliveryAttempt.findFirst({ where: { ...scope, id: BigInt(cursor) }, select: { id: true } })
        : null,
    findMany: (args) =>
      prisma().deliveryAttempt.findMany({
        ...(args as Prisma.DeliveryAttemptFindManyArgs),
        select: attemptSelect,
      }),
    map: toAttemptView,
  });
}

const attemptSelect = {
  id: true,
  deliveryId: true,
  attempt: true,
  url: true,
  responseStatus: true,
  success: true,
  durationMs: true,
  error: true,
  startedAt: true,
  trigger: true,
  replayId: true,
  delivery: { select: { eventId: true, event: { select: { name: true } } } },
} as const satisfies Prisma.DeliveryAttemptSelect;

function toAttemptView(row: Prisma.DeliveryAttemptGetPayload<{ select: typeof attemptSelect }>): DeliveryAttemptView {
  return {
    attemptId: row.id.toString(),
    deliveryId: row.deliveryId,
    eventId: row.delivery.eventId,
    event: row.delivery.event.name,
    attempt: row.attempt,
    url: row.url,
    responseStatus: row.responseStatus,
    success: row.success,
    durationMs: row.durationMs,
    error: row.error,
    startedAt: row.startedAt,
    trigger: row.trigger.toLowerCase() as AttemptTriggerName,
    replayId: row.replayId,
  };
}

/**
 * The last attempt recorded for a delivery (the one a test send or a redelivery just made).
 * @throws Error when the delivery has none (the caller made one first).
 */
export async function lastAttempt(deliveryId: string): Promise<DeliveryAttemptView> {
  const row = await prisma().deliveryAttempt.findFirst({
    where: { deliveryId },
    orderBy: { id: "desc" },
    select: attemptSelect,
  });
  if (!row) throw new Error(`delivery ${deliveryId} has no attempt`);
  return toAttemptView(row);
}

/**
 * Refuses an outbound webhook a test key asks for (a test event, a redelivery): test keys cause no outbound webhooks
 * (docs/api-contract.md §5.6). Checked before the target is looked up, so the refusal tells nothing about it.
 * @throws ApiError `insufficient_scope` (403) naming the reason, when `origin` is a test key.
 */
export function refuseTestKeySends(origin: WriteOrigin): void {
  if (!origin.isTest) return;
  throw new ApiError(
    "insufficient_scope",
    "Test keys (msp_test_) send no webhooks: use a live key (msp_live_) with webhooks:write to send a test event or redeliver",
  );
}

/**
 * Sends a delivery again now, once, with the same event id and payload, newly signed (redelivery, docs/api-contract.md
 * §6.2), and records the attempt; enabled or not (the answer includes the attempt). Success marks the delivery
 * SUCCEEDED; a failure does not count against the endpoint (410 Gone still disables it). Runs outside any transaction
 * (the attempt opens its own once the receiver has answered), so it holds no database connection while it waits.
 * @param origin who asks: a test key is refused (docs/api-contract.md §5.6).
 * @param actor with it, the settings audit trail records the redelivery (`webhookDelivery.redelivered`).
 * @throws ApiError `insufficient_scope` (403) for a test key; `not_found` (404) for a delivery missing or of another
 *   organisation.
 */
export async function redeliver(
  orgId: string,
  deliveryId: string,
  origin: WriteOrigin = { isTest: false },
  actor?: AuditActor,
): Promise<{ success: boolean; responseStatus: number | null; attempt: DeliveryAttemptView }> {
  refuseTestKeySends(origin);
  const found = await prisma().webhookDelivery.findFirst({
    where: { orgId, id: deliveryId },
    select: { id: true, eventId: true, endpoint: { select: { id: true, url: true } } },
  });
  if (!found) throw notFound("Webhook delivery", deliveryId);
  if (actor) {
    await recordSettingsAudit(orgId, actor, {
      action: "webhookDelivery.redelivered",
      target: `endpoint ${found.endpoint.url}`,
      details: { endpointId: found.endpoint.id, deliveryId, eventId: found.eventId },
    });
  }
  const result = await attemptDelivery(deliveryId, { mode: "manual" });
  return { success: result.success, responseStatus: result.responseStatus, attempt: await lastAttempt(deliveryId) };
}

/**
 * For the sweeper: live outbox events not yet fanned out, recorded more than `olderThanMs` ago (default 1 min) but
 * less than `maxAgeMs` ago (default 72 h, so turning Inngest on after a long outage does not flood receivers with
 * stale events), and not handed to Inngest within the last `resendAfterMs` (default 5 min); oldest first, at most
 * `limit` (500). Marks them dispatched now (so the next sweep waits `resendAfterMs`) and returns them to be sent again.
 */
export async function claimUndispatchedEvents(
  options: { olderThanMs?: number; maxAgeMs?: number; resendAfterMs?: number; limit?: number } = {},
): Promise<Array<{ eventId: string; orgId: string }>> {
  const { olderThanMs = 60_000, maxAgeMs = UNDISPATCHED_MAX_AGE_MS, resendAfterMs = 5 * 60_000, limit = 500 } = options;
  const rows = await prisma().$queryRaw<Array<{ id: string; orgId: string }>>`
    UPDATE "Event" SET "dispatchedAt" = now() AT TIME ZONE 'UTC'
    WHERE "id" IN (
      SELECT "id" FROM "Event"
      WHERE "fannedOutAt" IS NULL AND "isTest" = false
        AND "createdAt" < (now() AT TIME ZONE 'UTC') - ${olderThanMs}::float8 * interval '1 millisecond'
        AND "createdAt" > (now() AT TIME ZONE 'UTC') - ${maxAgeMs}::float8 * interval '1 millisecond'
        AND ("dispatchedAt" IS NULL
             OR "dispatchedAt" < (now() AT TIME ZONE 'UTC') - ${resendAfterMs}::float8 * interval '1 millisecond')
      ORDER BY "createdAt" LIMIT ${limit} FOR UPDATE SKIP LOCKED)
    RETURNING "id", "orgId"`;
  return rows.map((row) => ({ eventId: row.id, orgId: row.orgId }));
}

/**
 * For the sweeper: PENDING deliveries whose Inngest run was lost: never attempted `notStartedAfterMs` (default 30 min)
 * after creation, or without any activity for `stalledAfterMs` (default 3 h, longer than the longest backoff gap of
 * 2 h). Touches them (so they are not picked again before those times) and returns them to be requested again.
 */
export async function claimStuckDeliveries(
  options: { notStartedAfterMs?: number; stalledAfterMs?: number; limit?: number } = {},
): Promise<DeliveryRef[]> {
  const { notStartedAfterMs = 30 * 60_000, stalledAfterMs = 3 * 60 * 60_000, limit = 500 } = options;
  const rows = await prisma().$queryRaw<Array<{ id: string; endpointId: string; orgId: string }>>`
    UPDATE "WebhookDelivery" SET "updatedAt" = now() AT TIME ZONE 'UTC'
    WHERE "id" IN (
      SELECT "id" FROM "WebhookDelivery"
      WHERE "status" = 'PENDING'
        AND ("updatedAt" < (now() AT TIME ZONE 'UTC') - ${stalledAfterMs}::float8 * interval '1 millisecond'
             OR ("attemptCount" = 0
                 AND "updatedAt" < (now() AT TIME ZONE 'UTC') - ${notStartedAfterMs}::float8 * interval '1 millisecond'))
      ORDER BY "updatedAt" LIMIT ${limit} FOR UPDATE SKIP LOCKED)
    RETURNING "id", "endpointId", "orgId"`;
  return rows.map((row) => ({ deliveryId: row.id, endpointId: row.endpointId, orgId: row.orgId }));
}
