import { z } from "zod";
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
import { router, sessionProcedure } from "./trpc";

const IdSchema = z.object({ id: z.string().min(1).max(64).describe("Webhook endpoint id") });
const UrlSchema = z.string().trim().min(1, "URL is required").max(2048, "URL is at most 2,048 characters");
const EventsSchema = z.array(z.string().max(100)).max(50);
const DescriptionSchema = z.string().trim().max(500, "Description is at most 500 characters");

/**
 * Webhook endpoints of the signed-in user's organisation (spec §6; issue #6). Thin: every rule (URL checks, event
 * names, secrets, auto-disable) lives in `server/services/webhook-endpoints.ts` and `webhook-deliveries.ts`.
 */
export const webhooksRouter = router({
  /** Every endpoint of the organisation with its status. */
  list: sessionProcedure.query(({ ctx }) => listWebhookEndpoints(ctx.session.orgId)),

  /** One endpoint. @throws 404 when not in the organisation. */
  get: sessionProcedure.input(IdSchema).query(({ ctx, input }) => getWebhookEndpoint(ctx.session.orgId, input.id)),

  /** Registers an endpoint for named events or `*`. @returns `{ endpoint, secret }`. @throws 422 on URL or events. */
  create: sessionProcedure
    .input(z.object({ url: UrlSchema, events: EventsSchema, description: DescriptionSchema.optional() }))
    .mutation(({ ctx, input }) =>
      createWebhookEndpoint(ctx.session.orgId, {
        url: input.url,
        events: input.events,
        description: input.description || undefined,
      }),
    ),

  /** Changes URL, events or description. @throws 404; 422 on URL or events. */
  update: sessionProcedure
    .input(
      IdSchema.extend({
        url: UrlSchema.optional(),
        events: EventsSchema.optional(),
        description: DescriptionSchema.optional(),
      }),
    )
    .mutation(({ ctx, input }) => {
      const { id, ...changes } = input;
      return updateWebhookEndpoint(ctx.session.orgId, id, changes);
    }),

  /** Enables (clearing the failure count and reason) or disables an endpoint. @throws 404. */
  setEnabled: sessionProcedure
    .input(IdSchema.extend({ enabled: z.boolean() }))
    .mutation(({ ctx, input }) => setWebhookEndpointEnabled(ctx.session.orgId, input.id, input.enabled)),

  /** The signing secret. @returns `{ secret, previousSecretExpiresAt }`. @throws 404. */
  revealSecret: sessionProcedure
    .input(IdSchema)
    .mutation(({ ctx, input }) => revealWebhookSecret(ctx.session.orgId, input.id)),

  /** A new signing secret; the previous one keeps signing until `previousSecretExpiresAt`. @throws 404. */
  rotateSecret: sessionProcedure
    .input(IdSchema)
    .mutation(({ ctx, input }) => rotateWebhookSecret(ctx.session.orgId, input.id)),

  /** Deletes an endpoint and its delivery log. @throws 404. */
  delete: sessionProcedure.input(IdSchema).mutation(async ({ ctx, input }) => {
    await deleteWebhookEndpoint(ctx.session.orgId, input.id);
    return { id: input.id, deleted: true as const };
  }),

  /** Sends one test event now and waits for the attempt. @returns `{ eventId, deliveryId, success, responseStatus }`. */
  sendTest: sessionProcedure
    .input(IdSchema)
    .mutation(({ ctx, input }) =>
      sendTestEvent(ctx.session.orgId, input.id, { isTest: false, userId: ctx.session.userId }),
    ),

  /** Delivery attempts of an endpoint, newest first, keyset-paginated. @returns `{ data, nextCursor }`. */
  deliveries: sessionProcedure
    .input(
      z.object({
        endpointId: z.string().min(1).max(64),
        cursor: z.string().max(100).optional(),
        limit: z.number().int().min(1).max(100).optional(),
      }),
    )
    .query(({ ctx, input }) =>
      listDeliveryAttempts(ctx.session.orgId, input.endpointId, { cursor: input.cursor, limit: input.limit }),
    ),

  /**
   * Whether a webhook worker delivers events, and how many of the organisation's events wait for one (issue #11 B).
   * @returns `{ mode, devServerUrl, connected, lastSeenAt, waiting, message }`.
   */
  worker: sessionProcedure.query(({ ctx }) => workerStatus(ctx.session.orgId)),

  /**
   * The endpoint's events that wait for a worker, newest first (at most 10). @returns `{ count, data }`.
   * @throws 404 when the endpoint is not in the organisation.
   */
  waiting: sessionProcedure.input(IdSchema).query(async ({ ctx, input }) => {
    const endpoint = await getWebhookEndpoint(ctx.session.orgId, input.id);
    return waitingEvents(ctx.session.orgId, endpoint.events);
  }),

  /** Delivers a delivery's event again now (one attempt). @returns `{ success, responseStatus }`. @throws 404. */
  redeliver: sessionProcedure
    .input(z.object({ deliveryId: z.string().min(1).max(64) }))
    .mutation(({ ctx, input }) => redeliver(ctx.session.orgId, input.deliveryId)),
});
