// Replays (docs/api-contract.md §6.10; docs/architecture.md, "Webhooks and the outbox"): after a receiver's outage, send
// again what failed since a time (and, if asked, the events it never got while it was disabled), through the worker at
// most 10 deliveries a second, as one durable run per replay. A replay fixes what it sends when it is created (its
// items, oldest event first, at most 10,000), so its count, progress and cancellation are exact.
import { randomBytes } from "node:crypto";
import { Prisma, type WebhookReplayStatus } from "../db/generated/client";
import { afterCommit, outsideTransaction, prisma, transaction } from "../db/transaction";
import { ApiError, type ErrorDetail, notFound } from "../errors";
import { type AuditActor, recordSettingsAudit } from "../identity/audit-trail/service";
import { log } from "../observability/logger";
import { type Actor, EVENT_NAMES, TEST_EVENT_NAME } from "../platform/events-feed/schema";
import { eventRetentionMs } from "../platform/events-feed/service";
import { listPage } from "../records/pagination";
import { attemptDelivery, newDeliveryId, refuseTestKeySends } from "./deliveries";
import { REPLAY_MAX_MATCHED, type REPLAY_STATES, type REPLAY_STATUSES, type SubscribableEvent } from "./schema";
import { changedFieldsPassSql, checkEvents, subscriptionMatchesSql } from "./subscriptions";
import { workerMode } from "./worker";

/** Most replay deliveries sent per second per endpoint (docs/api-contract.md §6.10). */
export const REPLAY_RATE_PER_SECOND = 10;
/**
 * Least gap between two replay deliveries to one endpoint (ms): 1 s / {@link REPLAY_RATE_PER_SECOND} and 5 ms, so ten
 * gaps take 1.05 s and a receiver counting requests by its own clock sees no 11th within a second unless one request
 * was held up 50 ms longer than the tenth after it (docs/architecture.md, "Webhooks and the outbox").
 */
export const REPLAY_INTERVAL_MS = 1_000 / REPLAY_RATE_PER_SECOND + 5;
/** How long one worker step starts replay deliveries before it hands over to the next step (ms). */
export const REPLAY_STEP_BUDGET_MS = 10_000;
/** How long a step holds a replay (ms): its budget, the 10 s of its last deliveries, and room to record them. */
export const REPLAY_LEASE_MS = 30_000;
/** A running replay no step has touched for this long is requested again by the sweeper (ms). */
export const REPLAY_STALLED_AFTER_MS = 2 * 60_000;

type ReplayStatusName = (typeof REPLAY_STATUSES)[number];
type ReplayState = (typeof REPLAY_STATES)[number];

/** A replay as the API and the settings area show it (docs/api-contract.md §6.10). */
export interface ReplayView {
  /** `whr_<24 hex>` */
  id: string;
  endpointId: string;
  status: ReplayState;
  since: Date;
  until: Date;
  statuses: ReplayStatusName[];
  /** The event names and wildcards it is limited to; null: every event. */
  events: SubscribableEvent[] | null;
  /** Deliveries it sends (fixed at creation). */
  matched: number;
  sent: number;
  succeeded: number;
  /** Why it stopped before the end; null otherwise. */
  reason: string | null;
  createdAt: Date;
  finishedAt: Date | null;
}

/** The answer of a dry run: how many deliveries a replay would send, over which window. */
export interface ReplayDryRun {
  dryRun: true;
  matched: number;
  since: Date;
  until: Date;
}

/** What to replay: `since` and `until` as given (ISO 8601 text), the statuses and the events. */
export interface ReplayInput {
  since: string;
  until?: string;
  statuses?: readonly ReplayStatusName[];
  events?: string[];
}

/**
 * Who starts or cancels a replay: the actor the replay records, the settings audit trail's actor, and whether it is a
 * test key (which sends no webhooks, docs/api-contract.md §5.6).
 */
export interface ReplayRequester {
  actor: Actor;
  audit: AuditActor;
  isTest: boolean;
}

/** A replay to run: what the worker is asked for (`crm/webhook.replay.requested`). */
export interface ReplayRef {
  replayId: string;
  endpointId: string;
  orgId: string;
}

const STATE_NAMES: Record<WebhookReplayStatus, ReplayState> = {
  RUNNING: "running",
  COMPLETED: "completed",
  CANCELLED: "cancelled",
  STOPPED: "stopped",
};

const replaySelect = {
  id: true,
  endpointId: true,
  status: true,
  since: true,
  until: true,
  statuses: true,
  events: true,
  matched: true,
  sent: true,
  succeeded: true,
  reason: true,
  createdAt: true,
  finishedAt: true,
} as const satisfies Prisma.WebhookReplaySelect;

function toReplayView(row: Prisma.WebhookReplayGetPayload<{ select: typeof replaySelect }>): ReplayView {
  return {
    ...row,
    status: STATE_NAMES[row.status],
    statuses: row.statuses as ReplayStatusName[],
    events: row.events.length > 0 ? (row.events as SubscribableEvent[]) : null,
  };
}

function invalid(details: ErrorDetail[]): ApiError {
  return new ApiError(
    "validation_error",
    `The replay is not valid: ${details.map((detail) => `${detail.path.join(".")} ${detail.message}`).join("; ")}`,
    { details },
  );
}

/**
 * The window and filters of a replay, checked (docs/api-contract.md §6.10): `since` within the events' retention,
 * `until` (default now) after it, the statuses deduplicated (default `failed`), the events as a subscription checks
 * them.
 * @throws ApiError `validation_error` (422) naming `since`, `until` or `events`.
 */
function checkWindow(input: ReplayInput, now: Date) {
  const details: ErrorDetail[] = [];
  const since = new Date(input.since);
  const until = input.until === undefined ? now : new Date(input.until);
  const retentionDays = Math.round(eventRetentionMs() / 86_400_000);
  if (Number.isNaN(since.getTime())) details.push({ path: ["since"], message: "must be an ISO 8601 timestamp" });
  else if (since.getTime() < now.getTime() - eventRetentionMs())
    details.push({
      path: ["since"],
      message: `must be within the events' retention of ${retentionDays} days (not before ${new Date(now.getTime() - eventRetentionMs()).toISOString()}): older events are deleted`,
    });
  if (Number.isNaN(until.getTime())) details.push({ path: ["until"], message: "must be an ISO 8601 timestamp" });
  else if (!Number.isNaN(since.getTime()) && until <= since)
    details.push({
      path: input.until === undefined ? ["since"] : ["until"],
      message: "must be before until (now when left out)",
    });
  const events = input.events === undefined ? [] : checkEvents(input.events, details);
  if (details.length > 0 || !events) throw invalid(details);
  const statuses = [...new Set(input.statuses ?? ["failed"])] as ReplayStatusName[];
  return { since, until, statuses, events: events.includes("*") ? [] : events };
}

interface EndpointFilter {
  id: string;
  orgId: string;
  events: string[];
  changedFields: string[];
  createdAt: Date;
}

/**
 * The events a replay sends, oldest first (by feed order), as one SQL query of `(eventId, deliveryId, sequence)`:
 * - `failed`: the endpoint's deliveries closed FAILED (none succeeded since: a later success marks the delivery
 *   SUCCEEDED), one per event (a delivery is unique per event and endpoint);
 * - `missing`: the organisation's live events since the endpoint existed that its subscription and `changedFields`
 *   filter (as they are now) take, that were fanned out (so not waiting for the worker, and not the demo seed's,
 *   which are stored handled, `fannedOutAt` = `createdAt`) and that have no delivery to it: those of the time it was
 *   disabled.
 * Both limited to events recorded in `[since, until)` and to `events` when given; test events never.
 */
function matchingSql(endpoint: EndpointFilter, window: ReturnType<typeof checkWindow>): Prisma.Sql {
  const only =
    window.events.length > 0
      ? Prisma.sql`AND ${subscriptionMatchesSql(Prisma.sql`${window.events}::text[]`, Prisma.sql`e."name"`)}`
      : Prisma.empty;
  const parts: Prisma.Sql[] = [];
  if (window.statuses.includes("failed")) {
    parts.push(Prisma.sql`
      SELECT d."eventId", d."id" AS "deliveryId", e."sequence"
      FROM "WebhookDelivery" AS d JOIN "Event" AS e ON e."id" = d."eventId"
      WHERE d."orgId" = ${endpoint.orgId} AND d."endpointId" = ${endpoint.id} AND d."status" = 'FAILED'
        AND e."createdAt" >= ${window.since} AND e."createdAt" < ${window.until} AND e."name" <> ${TEST_EVENT_NAME}
        ${only}`);
  }
  if (window.statuses.includes("missing")) {
    const from = window.since > endpoint.createdAt ? window.since : endpoint.createdAt;
    parts.push(Prisma.sql`
      SELECT e."id" AS "eventId", NULL::text AS "deliveryId", e."sequence"
      FROM "Event" AS e
      WHERE e."orgId" = ${endpoint.orgId} AND e."createdAt" >= ${from} AND e."createdAt" < ${window.until}
        AND e."isTest" = false AND e."name" = ANY(${[...EVENT_NAMES]}::text[])
        AND e."fannedOutAt" IS NOT NULL AND e."fannedOutAt" <> e."createdAt"
        AND ${subscriptionMatchesSql(Prisma.sql`${endpoint.events}::text[]`, Prisma.sql`e."name"`)}
        AND ${changedFieldsPassSql(Prisma.sql`${endpoint.changedFields}::text[]`, Prisma.sql`e."name"`, Prisma.sql`e."changedFields"`)}
        ${only}
        AND NOT EXISTS (SELECT 1 FROM "WebhookDelivery" AS d WHERE d."endpointId" = ${endpoint.id} AND d."eventId" = e."id")`);
  }
  return Prisma.join(parts, " UNION ALL ");
}

async function countMatching(endpoint: EndpointFilter, window: ReturnType<typeof checkWindow>): Promise<number> {
  const [row] = await prisma().$queryRaw<Array<{ matched: number }>>`
    SELECT count(*)::int AS "matched" FROM (${matchingSql(endpoint, window)}) AS "m"`;
  return row?.matched ?? 0;
}

const endpointFilterSelect = {
  id: true,
  orgId: true,
  url: true,
  enabled: true,
  events: true,
  changedFields: true,
  createdAt: true,
} as const satisfies Prisma.WebhookEndpointSelect;

async function endpointFilter(
  orgId: string,
  endpointId: string,
  lock: boolean,
): Promise<EndpointFilter & { url: string; enabled: boolean }> {
  const [found] = await prisma().$queryRaw<Array<{ id: string }>>`
    SELECT "id" FROM "WebhookEndpoint" WHERE "id" = ${endpointId} AND "orgId" = ${orgId}
    ${lock ? Prisma.sql`FOR UPDATE` : Prisma.empty}`;
  if (!found) throw notFound("Webhook endpoint", endpointId);
  return prisma().webhookEndpoint.findUniqueOrThrow({ where: { id: endpointId }, select: endpointFilterSelect });
}

/**
 * A replay's dry run (docs/api-contract.md §6.10): how many deliveries it would send for this window, statuses and
 * events, counted as {@link startReplay} would fix them. Works on a disabled endpoint too; changes nothing.
 * @returns `{dryRun: true, matched, since, until}` (`until` now when not given); `matched` may exceed
 *          {@link REPLAY_MAX_MATCHED}.
 * @throws ApiError `not_found` (404) for an endpoint missing or of another organisation; `validation_error` (422) for
 *         the window (`since` before the retention, `until` not after `since`) or unknown events.
 */
export async function countReplay(
  orgId: string,
  endpointId: string,
  input: ReplayInput,
  now = new Date(),
): Promise<ReplayDryRun> {
  const window = checkWindow(input, now);
  const row = await endpointFilter(orgId, endpointId, false);
  return { dryRun: true, matched: await countMatching(row, window), since: window.since, until: window.until };
}

/**
 * {@link countReplay}'s dry run, with `testFailed`: the endpoint's failed deliveries of test events in the window, which
 * `failed` leaves out (a test event is sent again with "Send test event", never replayed), so the settings can say why
 * nothing matches when only test deliveries failed; 0 when the replay does not take `failed`. One window check and
 * one endpoint lookup for both counts.
 * @returns `{ dryRun, matched, since, until, testFailed }`.
 * @throws ApiError `not_found` (404), `validation_error` (422) as {@link countReplay}.
 */
export async function countReplayWithTestFailures(
  orgId: string,
  endpointId: string,
  input: ReplayInput,
  now = new Date(),
): Promise<ReplayDryRun & { testFailed: number }> {
  const window = checkWindow(input, now);
  const row = await endpointFilter(orgId, endpointId, false);
  const matched = await countMatching(row, window);
  const testFailed = window.statuses.includes("failed")
    ? await prisma().webhookDelivery.count({
        where: {
          orgId,
          endpointId: row.id,
          status: "FAILED",
          event: { name: TEST_EVENT_NAME, createdAt: { gte: window.since, lt: window.until } },
        },
      })
    : 0;
  return { dryRun: true, matched, since: window.since, until: window.until, testFailed };
}

/**
 * Starts a replay of an endpoint's failed deliveries, and with `missing` the events it never got, recorded in
 * `[since, until)` (docs/api-contract.md §6.10): one row with its items (oldest event first), handed to the worker once
 * the transaction has committed, and an entry in the settings audit trail. It sends at most
 * {@link REPLAY_RATE_PER_SECOND} deliveries a second, signed with the endpoint's secret when it sends them. One with
 * nothing to send is created completed.
 * @returns the replay.
 * @throws ApiError `not_found` (404) for an endpoint missing or of another organisation; `validation_error` (422) for
 *         the window (`since` before the retention, `until` not after `since`), unknown events, or more than
 *         {@link REPLAY_MAX_MATCHED} matches (the message gives the count); `conflict` (409) when the endpoint is disabled
 *         or a replay of it is running; `insufficient_scope` (403) for a test key.
 */
export async function startReplay(
  orgId: string,
  endpointId: string,
  input: ReplayInput,
  by: ReplayRequester,
  now = new Date(),
): Promise<ReplayView> {
  refuseTestKeySends({ isTest: by.isTest });
  const window = checkWindow(input, now);
  return transaction(async (tx) => {
    // Creations for one endpoint take turns on its row, so the running check and the count see each other's replay.
    const row = await endpointFilter(orgId, endpointId, true);
    if (!row.enabled) {
      throw new ApiError(
        "conflict",
        "The endpoint is disabled: enable it first, then replay (a replay to a disabled endpoint would send nothing)",
      );
    }
    const running = await tx.webhookReplay.findUnique({ where: { runningFor: endpointId }, select: { id: true } });
    if (running) {
      throw new ApiError(
        "conflict",
        `A replay of this endpoint is already running (${running.id}): wait for it to end or cancel it, then start another`,
      );
    }
    const matched = await countMatching(row, window);
    if (matched > REPLAY_MAX_MATCHED) {
      throw invalid([
        {
          path: ["since"],
          message: `matches ${matched.toLocaleString("en")} deliveries, ${(matched - REPLAY_MAX_MATCHED).toLocaleString("en")} more than the ${REPLAY_MAX_MATCHED.toLocaleString("en")} a replay sends: choose a later since, an until or fewer events`,
        },
      ]);
    }
    const id = `whr_${randomBytes(12).toString("hex")}`;
    const empty = matched === 0;
    await tx.webhookReplay.create({
      data: {
        id,
        orgId,
        endpointId,
        status: empty ? "COMPLETED" : "RUNNING",
        runningFor: empty ? null : endpointId,
        since: window.since,
        until: window.until,
        statuses: window.statuses,
        events: window.events,
        matched,
        actor: by.actor,
        finishedAt: empty ? now : null,
      },
    });
    if (!empty) {
      await tx.$executeRaw`
        INSERT INTO "WebhookReplayItem" ("replayId", "position", "eventId", "deliveryId")
        SELECT ${id}, (row_number() OVER (ORDER BY "sequence"))::int, "eventId", "deliveryId"
        FROM (${matchingSql(row, window)}) AS "m"
        ORDER BY "sequence"
        LIMIT ${matched}`;
    }
    await recordSettingsAudit(orgId, by.audit, {
      action: "webhookReplay.started",
      target: `endpoint ${row.url}`,
      details: {
        endpointId,
        replayId: id,
        matched,
        since: window.since.toISOString(),
        until: window.until.toISOString(),
        statuses: window.statuses.join(" "),
        events: window.events.join(" ") || "*",
      },
    });
    if (!empty) await afterCommit(() => requestReplay({ replayId: id, endpointId, orgId }));
    return toReplayView(await tx.webhookReplay.findUniqueOrThrow({ where: { id }, select: replaySelect }));
  });
}

/**
 * Asks the worker to run a replay (`crm/webhook.replay.requested`, Inngest event id = `eventId`, so a repeated request
 * within Inngest's deduplication window is dropped). Nothing is sent without a worker; the sweeper requests running
 * replays that no step has touched for {@link REPLAY_STALLED_AFTER_MS}. Never throws: a failed send is logged.
 */
export async function requestReplay(ref: ReplayRef, eventId = ref.replayId): Promise<void> {
  if (workerMode() === "none") return;
  try {
    const { inngest, replayRequested } = await import("../../inngest/client");
    await inngest.send(replayRequested.create(ref, { id: eventId }));
  } catch (error) {
    log().warn({ err: error, replayId: ref.replayId }, "replay not handed to Inngest; the sweeper will request it");
  }
}

async function ownedReplay(orgId: string, endpointId: string, replayId: string) {
  const row = await prisma().webhookReplay.findFirst({
    where: { id: replayId, orgId, endpointId },
    select: replaySelect,
  });
  if (!row) throw notFound("Replay", replayId);
  return row;
}

/**
 * One replay of an endpoint.
 * @throws ApiError `not_found` (404) for a replay missing, of another endpoint or of another organisation.
 */
export async function getReplay(orgId: string, endpointId: string, replayId: string): Promise<ReplayView> {
  return toReplayView(await ownedReplay(orgId, endpointId, replayId));
}

/**
 * An endpoint's replays, newest first, keyset-paged (docs/api-contract.md §4.9.1).
 * @throws ApiError `not_found` (404) for an endpoint missing or of another organisation; `bad_request` (400) for a
 *         cursor that names no replay of it.
 */
export async function listReplays(
  orgId: string,
  endpointId: string,
  query: { limit: number; cursor?: string },
): Promise<{ data: ReplayView[]; hasMore: boolean; nextCursor: string | null }> {
  const endpoint = await prisma().webhookEndpoint.findFirst({ where: { orgId, id: endpointId }, select: { id: true } });
  if (!endpoint) throw notFound("Webhook endpoint", endpointId);
  const scope = { orgId, endpointId };
  return listPage({
    query,
    fields: { createdAt: { nullable: false } },
    defaultSort: [{ field: "createdAt", direction: "desc" }],
    filters: [scope],
    findCursor: (cursor) =>
      prisma().webhookReplay.findFirst({ where: { ...scope, id: cursor }, select: { id: true, createdAt: true } }),
    findMany: (args) =>
      prisma().webhookReplay.findMany({ ...(args as Prisma.WebhookReplayFindManyArgs), select: replaySelect }),
    map: toReplayView,
  });
}

/**
 * Cancels a running replay: nothing more is sent (a delivery already under way finishes). Cancelling a replay that has
 * ended changes nothing and answers it as it is, so a repeated cancel is harmless. Recorded in the settings audit
 * trail when it cancels.
 * @throws ApiError `not_found` (404).
 */
export async function cancelReplay(
  orgId: string,
  endpointId: string,
  replayId: string,
  by: ReplayRequester,
): Promise<ReplayView> {
  return transaction(async () => {
    await ownedReplay(orgId, endpointId, replayId);
    const { count } = await prisma().webhookReplay.updateMany({
      where: { id: replayId, status: "RUNNING" },
      data: { status: "CANCELLED", runningFor: null, finishedAt: new Date(), leaseUntil: null },
    });
    const replay = await ownedReplay(orgId, endpointId, replayId);
    if (count > 0) {
      const endpoint = await prisma().webhookEndpoint.findUniqueOrThrow({
        where: { id: endpointId },
        select: { url: true },
      });
      await recordSettingsAudit(orgId, by.audit, {
        action: "webhookReplay.cancelled",
        target: `endpoint ${endpoint.url}`,
        details: { endpointId, replayId, sent: replay.sent, matched: replay.matched },
      });
    }
    return toReplayView(replay);
  });
}

/** What one step of a replay did. */
export interface ReplayProgress {
  /** The replay has ended (completed, cancelled, stopped or gone): no further step is needed. */
  done: boolean;
  /** Another step holds the replay: this run ends and leaves it to that one. */
  busy: boolean;
  /** Deliveries this step sent. */
  sent: number;
  status: ReplayState | "gone";
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));
}

/**
 * One step of a replay's run (inngest/functions/replay-webhooks.ts): holds the replay for {@link REPLAY_LEASE_MS}
 * (another step finds it busy), then for at most `budgetMs` (default {@link REPLAY_STEP_BUDGET_MS}) starts its next
 * unsent deliveries in order, one every {@link REPLAY_INTERVAL_MS} counted from the replay's last one (stored, so the
 * rate holds across steps and instances), at most {@link REPLAY_RATE_PER_SECOND} under way at once. Each is one
 * attempt in replay mode (signed with the endpoint's secret at that moment, recorded with the replay's id, never
 * counted against the endpoint); a missing event gets its delivery made first. Stops when the replay is cancelled,
 * the endpoint is disabled (status `stopped` with the reason) or deleted, and completes the replay when every item is
 * sent. Runs outside any transaction.
 * @returns what the step did; `done` when the replay has ended.
 */
export function sendReplayStep(replayId: string, options: { budgetMs?: number } = {}): Promise<ReplayProgress> {
  return outsideTransaction(() => runStep(replayId, options.budgetMs ?? REPLAY_STEP_BUDGET_MS));
}

async function runStep(replayId: string, budgetMs: number): Promise<ReplayProgress> {
  const [held] = await prisma().$queryRaw<Array<{ endpointId: string; orgId: string; lastSentAt: Date | null }>>`
    UPDATE "WebhookReplay"
    SET "leaseUntil" = now() AT TIME ZONE 'UTC' + ${REPLAY_LEASE_MS}::float8 * interval '1 millisecond',
        "updatedAt" = now() AT TIME ZONE 'UTC'
    WHERE "id" = ${replayId} AND "status" = 'RUNNING'
      AND ("leaseUntil" IS NULL OR "leaseUntil" < now() AT TIME ZONE 'UTC')
    RETURNING "endpointId", "orgId", "lastSentAt"`;
  if (!held) {
    const row = await prisma().webhookReplay.findUnique({ where: { id: replayId }, select: { status: true } });
    if (!row) return { done: true, busy: false, sent: 0, status: "gone" };
    const status = STATE_NAMES[row.status];
    return { done: status !== "running", busy: status === "running", sent: 0, status };
  }
  const started = Date.now();
  const reserve = pacer(held.lastSentAt ? held.lastSentAt.getTime() : 0);
  const inFlight = new Set<Promise<void>>();
  let sent = 0;
  let position = 0;
  let stop: { status: WebhookReplayStatus; reason: string | null } | null = null;
  try {
    while (Date.now() - started < budgetMs) {
      // About once a second: the replay may have been cancelled, the endpoint disabled or deleted meanwhile.
      const state = await prisma().webhookReplay.findUnique({
        where: { id: replayId },
        select: { status: true, endpoint: { select: { enabled: true, disabledReason: true } } },
      });
      if (state?.status !== "RUNNING") break;
      if (!state.endpoint.enabled) {
        stop = {
          status: "STOPPED",
          reason: `the endpoint was disabled (${state.endpoint.disabledReason ?? "no reason recorded"})`,
        };
        break;
      }
      const items = await prisma().webhookReplayItem.findMany({
        where: { replayId, sentAt: null, position: { gt: position } },
        orderBy: { position: "asc" },
        take: REPLAY_RATE_PER_SECOND,
        select: { position: true, eventId: true, deliveryId: true },
      });
      if (items.length === 0) {
        await Promise.all(inFlight);
        const left = await prisma().webhookReplayItem.count({ where: { replayId, sentAt: null } });
        if (left === 0) stop = { status: "COMPLETED", reason: null };
        break;
      }
      for (const item of items) {
        position = item.position;
        while (inFlight.size >= REPLAY_RATE_PER_SECOND) await Promise.race(inFlight);
        // A failure to record is logged and leaves the item unsent: the next step sends it again.
        const sending: Promise<void> = sendItem(replayId, held, item, reserve())
          .then(
            () => void sent++,
            (error: unknown) =>
              log().warn({ err: error, replayId, position: item.position }, "replay delivery not recorded"),
          )
          .finally(() => inFlight.delete(sending));
        inFlight.add(sending);
        if (Date.now() - started >= budgetMs) break;
      }
    }
    await Promise.all(inFlight);
  } finally {
    await Promise.allSettled(inFlight);
    await prisma().webhookReplay.updateMany({
      where: { id: replayId, status: "RUNNING" },
      data: stop
        ? { status: stop.status, reason: stop.reason, runningFor: null, finishedAt: new Date(), leaseUntil: null }
        : { leaseUntil: null },
    });
  }
  const row = await prisma().webhookReplay.findUnique({ where: { id: replayId }, select: { status: true } });
  const status = row ? STATE_NAMES[row.status] : "gone";
  return { done: status !== "running", busy: false, sent, status };
}

/** One delivery's turn: `take` waits for it right before the request; `pass` gives it up without sending. */
interface Turn {
  take(): Promise<Date>;
  pass(): void;
}

/**
 * The turns of a replay's deliveries, handed out in item order by `reserve()`: a turn is taken at least
 * {@link REPLAY_INTERVAL_MS} after the one reserved before it was taken (the first after `last`, the replay's stored
 * last send) or passed, so the requests leave oldest first, spaced, even when the work before them (reading the
 * delivery, making a missing one) takes longer for one than for the next.
 */
function pacer(last: number): () => Turn {
  let previous = Promise.resolve(last);
  return () => {
    const before = previous;
    let done = false;
    let release: (at: number) => void = () => undefined;
    previous = new Promise<number>((resolve) => {
      release = (at) => {
        if (!done) resolve(at);
        done = true;
      };
    });
    return {
      async take() {
        const prior = await before;
        await sleep(prior + REPLAY_INTERVAL_MS - Date.now());
        const at = Date.now();
        release(at);
        return new Date(at);
      },
      pass() {
        void before.then(release);
      },
    };
  };
}

/**
 * Sends one item of a replay in its turn: makes the delivery of a missing event, attempts it (taking `turn` right
 * before the request), records the outcome and the time it was sent. The turn is passed on if no request is made.
 */
async function sendItem(
  replayId: string,
  replay: { endpointId: string; orgId: string },
  item: { position: number; eventId: string; deliveryId: string | null },
  turn: Turn,
): Promise<void> {
  let at = new Date();
  let result: Awaited<ReturnType<typeof attemptDelivery>> | null = null;
  let deliveryId = item.deliveryId;
  try {
    if (!deliveryId) {
      const created = newDeliveryId();
      // A delivery made since the replay was created (the event was fanned out to it meanwhile) is used as it is.
      await prisma().$executeRaw`
        INSERT INTO "WebhookDelivery" ("id", "orgId", "endpointId", "eventId", "createdAt", "updatedAt")
        SELECT ${created}, ${replay.orgId}, ${replay.endpointId}, e."id", now() AT TIME ZONE 'UTC', now() AT TIME ZONE 'UTC'
        FROM "Event" AS e WHERE e."id" = ${item.eventId}
        ON CONFLICT ("endpointId", "eventId") DO NOTHING`;
      const row = await prisma().webhookDelivery.findUnique({
        where: { endpointId_eventId: { endpointId: replay.endpointId, eventId: item.eventId } },
        select: { id: true },
      });
      deliveryId = row?.id ?? null;
    }
    if (deliveryId) {
      result = await attemptDelivery(deliveryId, {
        mode: "replay",
        replayId,
        turn: async () => {
          at = await turn.take();
        },
      });
    }
  } finally {
    turn.pass();
  }
  const success = result?.success ?? false;
  await transaction(async (tx) => {
    await tx.webhookReplayItem.update({
      where: { replayId_position: { replayId, position: item.position } },
      data: { sentAt: at, success, deliveryId },
    });
    // Deliveries finish out of order: the last send stored is the latest one.
    await tx.$executeRaw`
      UPDATE "WebhookReplay"
      SET "sent" = "sent" + 1, "succeeded" = "succeeded" + ${success ? 1 : 0},
          "lastSentAt" = GREATEST(coalesce("lastSentAt", ${at}), ${at}), "updatedAt" = now() AT TIME ZONE 'UTC'
      WHERE "id" = ${replayId}`;
  });
}

/**
 * For the sweeper: running replays that no step holds and no step has touched for {@link REPLAY_STALLED_AFTER_MS}
 * (their run was lost, or no worker ran when they were made). Touches them, so they are not picked again before then.
 * @returns them, to request again.
 */
export async function claimStalledReplays(): Promise<ReplayRef[]> {
  return prisma().$queryRaw<ReplayRef[]>`
    UPDATE "WebhookReplay" SET "updatedAt" = now() AT TIME ZONE 'UTC'
    WHERE "id" IN (
      SELECT "id" FROM "WebhookReplay"
      WHERE "status" = 'RUNNING'
        AND ("leaseUntil" IS NULL OR "leaseUntil" < now() AT TIME ZONE 'UTC')
        AND "updatedAt" < (now() AT TIME ZONE 'UTC') - ${REPLAY_STALLED_AFTER_MS}::float8 * interval '1 millisecond'
      ORDER BY "updatedAt" LIMIT 100 FOR UPDATE SKIP LOCKED)
    RETURNING "id" AS "replayId", "endpointId", "orgId"`;
}
