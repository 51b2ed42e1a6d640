import { z } from "zod";
import { CURSOR_MAX_LENGTH, DateTimeInputSchema } from "../contract/common";
import { actorOf, type SignedInMember } from "../identity/session";
import { orgProcedure, router } from "../settings/trpc";
import { openAlerts } from "./alerts";
import { listDeliveryAttempts, redeliver } from "./deliveries";
import {
  createWebhookEndpoint,
  deleteWebhookEndpoint,
  getWebhookEndpoint,
  listWebhookEndpoints,
  revealWebhookSecret,
  rotateWebhookSecret,
  sendTestEvent,
  setWebhookEndpointEnabled,
  updateWebhookEndpoint,
} from "./endpoints";
import {
  cancelReplay,
  countReplayWithTestFailures,
  getReplay,
  listReplays,
  type ReplayRequester,
  startReplay,
} from "./replays";
import { REPLAY_STATUSES } from "./schema";
import { endpointStats, endpointsHealth, getDeliveryDetail, listDeliveries, STATS_RANGES, statsWindow } from "./stats";
import { waitingEvents, workerStatus } from "./worker";

const IdSchema = z.object({ id: z.string().min(1).max(64).describe("Webhook endpoint id") });
const UrlSchema = z.string().trim().min(1, "URL is required").max(2048, "URL is at most 2,048 characters");
const EventsSchema = z.array(z.string().max(100)).max(50);
const DescriptionSchema = z.string().trim().max(500, "Description is at most 500 characters");
// Field names as typed (the service checks them against the subscription); null or [] removes the filter.
const ChangedFieldsSchema = z.array(z.string().trim().min(1).max(64)).max(20, "At most 20 fields").nullable();
const TimeSchema = DateTimeInputSchema;
const ReplaySchema = IdSchema.extend({
  since: TimeSchema,
  until: TimeSchema.optional(),
  statuses: z.array(z.enum(REPLAY_STATUSES)).min(1).max(2).optional(),
  events: z.array(z.string().max(100)).max(50).optional(),
});

/** The member as a replay's actor and in the audit trail. */
function memberRequester(member: SignedInMember): ReplayRequester {
  return { actor: { type: "user", id: member.user.id }, audit: actorOf(member), isTest: false };
}

const read = orgProcedure("webhook:read");
const manage = orgProcedure("webhook:manage");
// Revealing or rotating a signing secret also needs a sign-in or second factor within 15 minutes.
const secret = orgProcedure("webhook:manage", { stepUp: true });

/**
 * Webhook endpoints of the member's organisation (docs/api-contract.md §6; docs/architecture.md,
 * "Settings: sign-in, team and roles"): every role sees endpoints and deliveries; owners, admins and developers create,
 * edit, delete, send test events and redeliver; revealing or rotating a secret also needs a recent sign-in. Thin: every
 * rule lives in `server/webhooks/`, which also writes each change's audit entry in the change's transaction.
 */
export const webhooksRouter = router({
  /** Every endpoint of the organisation with its status. */
  list: read.query(({ ctx }) => listWebhookEndpoints(ctx.member.org.id)),

  /** One endpoint. @throws 404 when not in the organisation. */
  get: read.input(IdSchema).query(({ ctx, input }) => getWebhookEndpoint(ctx.member.org.id, input.id)),

  /** Registers an endpoint for named events or `*`. @returns `{ endpoint, secret }`. @throws 403; 422 on URL or events. */
  create: manage
    .input(
      z.object({
        url: UrlSchema,
        events: EventsSchema,
        description: DescriptionSchema.optional(),
        changedFields: ChangedFieldsSchema.optional(),
      }),
    )
    .mutation(({ ctx, input }) =>
      createWebhookEndpoint(
        ctx.member.org.id,
        {
          url: input.url,
          events: input.events,
          description: input.description || undefined,
          changedFields: input.changedFields,
        },
        actorOf(ctx.member),
      ),
    ),

  /** Changes URL, events or description. @throws 403; 404; 422 on URL or events. */
  update: manage
    .input(
      IdSchema.extend({
        url: UrlSchema.optional(),
        events: EventsSchema.optional(),
        description: DescriptionSchema.optional(),
        changedFields: ChangedFieldsSchema.optional(),
      }),
    )
    .mutation(({ ctx, input }) => {
      const { id, ...changes } = input;
      return updateWebhookEndpoint(ctx.member.org.id, id, changes, actorOf(ctx.member));
    }),

  /** Enables (clearing the failure count and reason) or disables an endpoint. @throws 403; 404. */
  setEnabled: manage
    .input(IdSchema.extend({ enabled: z.boolean() }))
    .mutation(({ ctx, input }) =>
      setWebhookEndpointEnabled(ctx.member.org.id, input.id, input.enabled, actorOf(ctx.member)),
    ),

  /** The signing secret (step-up). @returns `{ secret, previousSecretExpiresAt }`. @throws 403; 404. */
  revealSecret: secret
    .input(IdSchema)
    .mutation(({ ctx, input }) => revealWebhookSecret(ctx.member.org.id, input.id, actorOf(ctx.member))),

  /** A new signing secret (step-up); the previous one keeps signing until `previousSecretExpiresAt`. @throws 403; 404. */
  rotateSecret: secret
    .input(IdSchema)
    .mutation(({ ctx, input }) => rotateWebhookSecret(ctx.member.org.id, input.id, actorOf(ctx.member))),

  /** Deletes an endpoint and its delivery log. @throws 403; 404. */
  delete: manage.input(IdSchema).mutation(async ({ ctx, input }) => {
    await deleteWebhookEndpoint(ctx.member.org.id, input.id, actorOf(ctx.member));
    return { id: input.id, deleted: true as const };
  }),

  /**
   * Sends one test event now and waits for the attempt.
   * @returns `{ eventId, deliveryId, success, responseStatus }`. @throws 403; 404.
   */
  sendTest: manage
    .input(IdSchema)
    .mutation(({ ctx, input }) =>
      sendTestEvent(ctx.member.org.id, input.id, { isTest: false, userId: ctx.member.user.id }, actorOf(ctx.member)),
    ),

  /** Delivery attempts of an endpoint, newest first, keyset-paginated. @returns `{ data, nextCursor }`. */
  deliveries: read
    .input(
      z.object({
        endpointId: z.string().min(1).max(64),
        cursor: z.string().max(100).optional(),
        limit: z.number().int().min(1).max(100).optional(),
      }),
    )
    .query(({ ctx, input }) =>
      listDeliveryAttempts(ctx.member.org.id, input.endpointId, { cursor: input.cursor, limit: input.limit }),
    ),

  /**
   * Whether a webhook worker delivers events, and how many of the organisation's events wait for one.
   * @returns `{ mode, devServerUrl, connected, lastSeenAt, waiting, message }`.
   */
  worker: read.query(({ ctx }) => workerStatus(ctx.member.org.id)),

  /**
   * The endpoint's events that wait for a worker, newest first (at most 10). @returns `{ count, data }`.
   * @throws 404 when the endpoint is not in the organisation.
   */
  waiting: read.input(IdSchema).query(async ({ ctx, input }) => {
    const endpoint = await getWebhookEndpoint(ctx.member.org.id, input.id);
    return waitingEvents(ctx.member.org.id, endpoint.events);
  }),

  /** Delivers a delivery's event again now (one attempt). @returns `{ success, responseStatus }`. @throws 403; 404. */
  redeliver: manage
    .input(z.object({ deliveryId: z.string().min(1).max(64) }))
    .mutation(({ ctx, input }) =>
      redeliver(
        ctx.member.org.id,
        input.deliveryId,
        { isTest: false, userId: ctx.member.user.id },
        actorOf(ctx.member),
      ),
    ),

  /**
   * Every endpoint's finished deliveries of the last 24 hours and last failed attempt (`endpointsHealth`), by endpoint
   * id. @returns `Record<endpointId, { succeeded, failed, successRate, lastFailure }>`.
   */
  health: read.query(async ({ ctx }) => Object.fromEntries(await endpointsHealth(ctx.member.org.id))),

  /**
   * An endpoint's delivery statistics over the last 24 h, 7 d, 30 d or a custom `from`–`to` (`endpointStats`).
   * @returns `{ from, to, bucketMs, buckets, totals }`. @throws 404; 422 for a custom range that is empty, reversed or
   *          over 366 days.
   */
  stats: read
    .input(
      IdSchema.extend({
        range: z.enum([...(Object.keys(STATS_RANGES) as Array<keyof typeof STATS_RANGES>), "custom"]),
        from: TimeSchema.optional(),
        to: TimeSchema.optional(),
      }),
    )
    .query(({ ctx, input }) => {
      const window =
        input.range === "custom"
          ? statsWindow({ from: new Date(input.from ?? Number.NaN), to: new Date(input.to ?? Number.NaN) })
          : statsWindow(input.range);
      return endpointStats(ctx.member.org.id, input.id, window);
    }),

  /** An endpoint's deliveries, newest first, by state and event name, keyset-paged (`listDeliveries`). @throws 404; 400. */
  deliveryList: read
    .input(
      IdSchema.extend({
        status: z.enum(["pending", "succeeded", "failed"]).optional(),
        event: z.string().max(100).optional(),
        cursor: z.string().max(CURSOR_MAX_LENGTH).optional(),
        limit: z.number().int().min(1).max(100).default(25),
      }),
    )
    .query(({ ctx, input }) =>
      listDeliveries(ctx.member.org.id, input.id, {
        status: input.status,
        event: input.event,
        cursor: input.cursor,
        limit: input.limit,
      }),
    ),

  /** One delivery with its request and every attempt (`getDeliveryDetail`). @throws 404. */
  delivery: read
    .input(z.object({ deliveryId: z.string().min(1).max(64) }))
    .query(({ ctx, input }) => getDeliveryDetail(ctx.member.org.id, input.deliveryId)),

  /**
   * How many deliveries a replay would send, and how many failed test deliveries it leaves out
   * (`countReplayWithTestFailures`), so the page can say why a window with failures has nothing to replay.
   * @returns `{ dryRun, matched, since, until, testFailed }`. @throws 404; 422.
   */
  replayCount: read.input(ReplaySchema).query(({ ctx, input }) => {
    const { id, ...window } = input;
    return countReplayWithTestFailures(ctx.member.org.id, id, window);
  }),

  /**
   * Starts a replay (`startReplay`), recorded in the audit trail. @returns the replay. @throws 403; 404; 409 (disabled
   * endpoint, a replay running); 422 (window, more than 10,000 matches).
   */
  replayStart: manage.input(ReplaySchema).mutation(async ({ ctx, input }) => {
    const { id, ...window } = input;
    return startReplay(ctx.member.org.id, id, window, memberRequester(ctx.member));
  }),

  /** The endpoint's latest replays, newest first (at most 10). @throws 404. */
  replays: read
    .input(IdSchema)
    .query(async ({ ctx, input }) => (await listReplays(ctx.member.org.id, input.id, { limit: 10 })).data),

  /** One replay. @throws 404. */
  replay: read
    .input(IdSchema.extend({ replayId: z.string().min(1).max(64) }))
    .query(({ ctx, input }) => getReplay(ctx.member.org.id, input.id, input.replayId)),

  /** Cancels a running replay (`cancelReplay`), recorded in the audit trail. @throws 403; 404. */
  replayCancel: manage
    .input(IdSchema.extend({ replayId: z.string().min(1).max(64) }))
    .mutation(({ ctx, input }) =>
      cancelReplay(ctx.member.org.id, input.id, input.replayId, memberRequester(ctx.member)),
    ),

  /** The organisation's open webhook alerts (disabled endpoints, a worker backlog), for the settings banner. */
  alerts: read.query(({ ctx }) => openAlerts(ctx.member.org.id)),
});
