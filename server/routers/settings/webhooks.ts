import { z } from "zod";
import { actorOf } from "../../services/settings-session";
import { listDeliveryAttempts, redeliver } from "../../webhooks/deliveries";
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
} from "../../webhooks/endpoints";
import { waitingEvents, workerStatus } from "../../webhooks/worker";
import { orgProcedure, router } from "./trpc";

const IdSchema = z.object({ id: z.string().min(1).max(64).describe("Webhook endpoint id") });
const UrlSchema = z.string().trim().min(1, "URL is required").max(2048, "URL is at most 2,048 characters");
const EventsSchema = z.array(z.string().max(100)).max(50);
const DescriptionSchema = z.string().trim().max(500, "Description is at most 500 characters");

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
    .input(z.object({ url: UrlSchema, events: EventsSchema, description: DescriptionSchema.optional() }))
    .mutation(({ ctx, input }) =>
      createWebhookEndpoint(
        ctx.member.org.id,
        { url: input.url, events: input.events, description: input.description || undefined },
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
});
